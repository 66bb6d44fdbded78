"""Group device taints by where they come from, with the claims and pods holding tainted devices."""

from __future__ import annotations

from allocator.taints import tolerates

from kubectl_dra.inventory import Inventory
from kubectl_dra.render.taints import AffectedClaim, TaintRecord

RULE_PREFIX = "DeviceTaintRule/"


def taint_records(inventory: Inventory) -> list[TaintRecord]:
    objs = inventory.objs
    slice_labels = {s["metadata"]["name"]: s["metadata"].get("labels") or {} for s in objs.slices}
    groups: dict[tuple, dict] = {}
    for device in inventory.devices:
        for taint in device.taints:
            source = taint.source if taint.source.startswith(RULE_PREFIX) else f"ResourceSlice/{device.slice_name}"
            key = (source, taint.key, taint.value, taint.effect, taint.time_added)
            group = groups.setdefault(key, {"devices": [], "claims": {}})
            group["devices"].append(str(device.id))
            for holder in device.allocated_by:
                claim = objs.claims.get((holder.claim_namespace, holder.claim_name)) or {}
                tolerations = _result_tolerations(claim, device.id)
                ref = (holder.claim_namespace, holder.claim_name)
                previous = group["claims"].get(ref)
                tolerated = any(tolerates(t, taint) for t in tolerations)
                if previous is not None:
                    tolerated = tolerated and previous.tolerated
                group["claims"][ref] = AffectedClaim(ref[0], ref[1], tolerated, tuple(holder.pods))
    for name, rule in objs.taint_rules.items():
        taint = rule["spec"]["taint"]
        key = (RULE_PREFIX + name, taint["key"], taint.get("value") or "", taint["effect"], taint.get("timeAdded"))
        groups.setdefault(key, {"devices": [], "claims": {}})
    records = []
    for (source, key, value, effect, time_added), group in sorted(groups.items(), key=lambda kv: kv[0][:4]):
        kind, _, name = source.partition("/")
        labels = (objs.taint_rules.get(name, {}).get("metadata", {}).get("labels") or {}) if kind == "DeviceTaintRule" \
            else slice_labels.get(name, {})
        records.append(TaintRecord(source, key, value, effect, time_added, tuple(group["devices"]),
                                   tuple(group["claims"][k] for k in sorted(group["claims"])), labels))
    return records


def _result_tolerations(claim: dict, device_id) -> list[dict]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    for result in (allocation.get("devices") or {}).get("results") or []:
        if (result.get("driver"), result.get("pool"), result.get("device")) == tuple(device_id):
            return result.get("tolerations") or []
    return []
