"""Who holds an allocated device, in the words of an InUse rejection."""

from __future__ import annotations

from collections.abc import Callable

from ..model import DeviceID
from ..objects import ObjectSet
from ..state import Holder


def holder_text(objs: ObjectSet, device: DeviceID) -> str:
    """Who holds an allocated device, for an InUse rejection."""
    return holder_texts(objs)(device)


def holder_texts(objs: ObjectSet) -> Callable[[DeviceID], str]:
    """holder_text for `objs` as they are now: the texts come from the usage read at the first call
    (an explanation's shared verdicts name holders when first read, after the search)."""
    texts = objs._cache.get("holder-text")
    if texts is None:
        usage = _usage(objs)
        known: dict[DeviceID, str] = {}

        def texts(device: DeviceID) -> str:
            text = known.get(device)
            if text is None:
                holders = [h for h in usage.get(device, ()) if not h.admin_access]
                if not holders:
                    text = "allocated"
                else:
                    pods = ", ".join(f"{ns}/{n}" for h in holders for ns, n in h.pods)
                    text = f"allocated to claim {holders[0].claim_ref}" + (f" (pod {pods})" if pods else "")
                known[device] = text
            return text

        objs._cache["holder-text"] = texts
    return texts


def _usage(objs: ObjectSet) -> dict[DeviceID, list[Holder]]:
    usage = objs._cache.get("usage")
    if usage is None:
        from ..state import device_usage

        usage = objs._cache["usage"] = device_usage(objs)
    return usage
