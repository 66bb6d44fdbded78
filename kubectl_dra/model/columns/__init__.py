"""The columns of every list table, defined once for both faces (one module per kind).

Each column says its header, its cell text from the kind's record (model/records.py), whether the
CLI shows it only with `-o wide`, the tone of its words, and how the dashboard fits it (`Layout`).
The CLI (`render/<kind>.py`) shows the columns it has, in order; the dashboard (`tui/views/<kind>.py`)
picks those with a layout, in its own order, and adds only colours and layout. So a cell reads the
same on both faces: tests/cli/test_model_properties.py compares every cell the dashboard shows with
the CLI's for the same object.
"""

from kubectl_dra.model.columns.base import IDENTIFYING, ColumnSpec, Layout, cells, field, row_maker

__all__ = ["IDENTIFYING", "ColumnSpec", "Layout", "cells", "field", "row_maker"]
