"""What the diagnosis and the node sharing read of the explainer that made them (explainer.py):
its object set and its features."""

from __future__ import annotations

from typing import Protocol

from ..features import Features
from ..objects import ObjectSet


class Explaining(Protocol):
    objs: ObjectSet
    features: Features
