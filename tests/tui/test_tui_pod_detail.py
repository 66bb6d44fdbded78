"""A pending pod's detail never says it does not fit: pending pods that fit exist (the scheduler has
not tried them yet); `e` tells."""

from __future__ import annotations

from rich.console import Console
from tui_helpers import item

from kubectl_dra import scheduling
from tui.views.claims import pod_detail


def plain(renderable) -> str:
    console = Console(width=200, record=True)
    console.print(renderable)
    return console.export_text()


def test_a_pending_pod_that_fits_is_not_said_not_to_fit(store):
    pod = item(store, "Pod", "trainer-2", "ml-training")
    assert scheduling.explain_pod(store.object_set(), "ml-training", "trainer-2", store.features(),
                                  remedies=False).verdict == "Fits"
    text = plain(pod_detail(pod))
    assert "does not fit" not in text
    assert "Press e (or enter) to see whether it fits, and where or why not." in text
