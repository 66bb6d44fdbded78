"""Each device the node can see judged against one request on its own: pool state, selectors,
usage, capacity, counters, compatibility groups, taints.
"""

from __future__ import annotations

from typing import Any

from .. import capacity as capacity_rules, compatibility
from ..cel import CelCompileError, CelRuntimeError
from ..codes import (
    BINDING_CONDITIONS_DISABLED,
    CAPACITY,
    CEL_ERROR,
    CLASS_SELECTOR,
    COMPATIBILITY_GROUPS,
    COUNTERS,
    COUNTERS_DISABLED,
    IN_USE,
    NODE_MISMATCH,
    POOL_BEING_REPLACED,
    POOL_INCOMPLETE,
    POOL_INVALID,
    REQUEST_SELECTOR,
    TAINTED,
)
from ..model import Device, DeviceID
from ..nodeselector import NodeSelectorError, node_matches
from ..pools import Pool, SkippedPool, available_counters, counter_shortage
from ..search import ClaimSpec, Request, SearchTrace, SelectorEvaluator, make_request
from ..state import AllocatedState
from ..taints import untolerated_taints
from .context import Explaining
from .holders import holder_text
from .results import DeviceRejection, RequestOutcome


class Diagnoser:
    """Judges each device the node can see against one request, on its own."""

    def __init__(self, explainer: Explaining, node: dict, pools: list[Pool], skipped: list[SkippedPool], state: AllocatedState,
                 selectors: SelectorEvaluator):
        self.e = explainer
        self.features = explainer.features
        self.node = node
        self.pools = [p for p in pools if not p.incomplete and not p.invalid]
        # 1.34's per-node gathering: an ExactCount request may still take devices of an incomplete
        # pool; only an "All" request fails on it (v0.34 structured/internal/experimental
        # allocator_experimental.go, allocateOne). From 1.35 nothing is taken from one.
        usable = {(s.driver, s.name) for s in skipped if s.exact_count_usable}
        self.incomplete_but_usable = [p for p in pools if p.incomplete and (p.driver, p.name) in usable]
        self.skipped = skipped
        self.state = state
        self.selectors = selectors
        self._available: dict[tuple, Any] = {}  # counters left, compatibility groups: by what they are of

    def requests(self, ci: int, spec: ClaimSpec, trace: SearchTrace, allocation: dict | None) -> list[RequestOutcome]:
        chosen_by_request: dict[str, list[DeviceID]] = {}
        for result in (allocation or {}).get("devices", {}).get("results", []):
            chosen_by_request.setdefault(result["request"], []).append(
                DeviceID(result["driver"], result["pool"], result["device"]))
        outcomes = []
        for raw in spec.requests:
            subrequests = raw.get("firstAvailable") or []
            if subrequests:
                for sub in subrequests:
                    request = make_request(sub, sub["name"], raw["name"])
                    outcome = self._request(ci, spec, request, trace, chosen_by_request.get(request.full_name, []))
                    outcome.selected = request.full_name in chosen_by_request
                    outcomes.append(outcome)
            else:
                request = make_request(raw.get("exactly") or {}, raw["name"], None)
                outcomes.append(self._request(ci, spec, request, trace, chosen_by_request.get(request.name, [])))
        return outcomes

    def _request(self, ci: int, spec: ClaimSpec, request: Request, trace: SearchTrace, chosen: list[DeviceID]) -> RequestOutcome:
        klass = self.e.objs.device_classes.get(request.class_name or "")
        wanted: int | str = request.count if request.mode == "ExactCount" else "All"
        outcome = RequestOutcome(request.full_name, request.class_name, wanted, 0, list(chosen))
        searched = trace.rejected.get((ci, request.full_name), {})
        chosen_set = set(chosen)
        usable_incomplete = {(p.driver, p.name) for p in self.incomplete_but_usable} \
            if request.mode == "ExactCount" else set()
        for skipped in self.skipped:
            if (skipped.driver, skipped.name) in usable_incomplete:
                continue  # its devices are judged with the complete pools' below
            code = {"Incomplete": POOL_INCOMPLETE, "BeingReplaced": POOL_BEING_REPLACED}.get(skipped.state, POOL_INVALID)
            for device in skipped.devices:
                rejection = self._selectable(spec, request, klass, device)
                if rejection is None:
                    outcome.rejected.append(DeviceRejection(device.id, code,
                                                            f"pool {skipped.driver}/{skipped.name}: {skipped.reason}"))
                elif rejection.code == REQUEST_SELECTOR:
                    # Of the class, so on this node, but not what the claim asks for: said so,
                    # never "no devices of the class on this node".
                    outcome.rejected.append(rejection)
        for pool in self.pools + (self.incomplete_but_usable if usable_incomplete else []):
            for device in pool.devices_targeting_node():
                if device.id in chosen_set:
                    outcome.candidates += 1
                    continue
                rejection = self._standalone(spec, request, klass, device, pool)
                if rejection is None:
                    outcome.candidates += 1
                    found = searched.get(device.id)
                    if found is not None:
                        outcome.rejected.append(DeviceRejection(device.id, found.code, str(found.message)))
                else:
                    outcome.rejected.append(rejection)
        if wanted == "All":
            outcome.wanted = outcome.candidates if outcome.candidates else "All"
        return outcome

    def _selectable(self, spec: ClaimSpec, request: Request, klass: dict | None, device: Device) -> DeviceRejection | None:
        if not self.features.binding_and_status and device.binding_conditions:
            return DeviceRejection(device.id, BINDING_CONDITIONS_DISABLED,
                                   "device has binding conditions, but DRADeviceBindingConditions is disabled")
        groups = []
        if klass is not None:
            groups.append((CLASS_SELECTOR, f"class {klass['metadata']['name']}", klass["spec"].get("selectors") or []))
        groups.append((REQUEST_SELECTOR, f"claim {spec.ref}", request.selectors))
        for code, owner, selectors in groups:
            for i, selector in enumerate(selectors):
                expression = ((selector or {}).get("cel") or {}).get("expression")
                if expression is None:
                    continue
                try:
                    if not self.selectors.evaluate(expression, device):
                        return DeviceRejection(device.id, code, f"{owner}: selector #{i} is false: {expression}")
                except (CelCompileError, CelRuntimeError) as err:
                    return DeviceRejection(device.id, CEL_ERROR, f"{owner}: selector #{i}: {err}")
        if device.slice.per_device_node_selection:
            try:
                if not node_matches(self.node, device.node_name, device.all_nodes, device.node_selector):
                    return DeviceRejection(device.id, NODE_MISMATCH, "device is not available on this node")
            except NodeSelectorError as err:
                return DeviceRejection(device.id, NODE_MISMATCH, f"invalid device node selector: {err}")
        return None

    def _standalone(self, spec: ClaimSpec, request: Request, klass: dict | None, device: Device, pool: Pool) -> DeviceRejection | None:
        # Selectors first: "not of this class" says more than "in use" about a device the
        # request could never take (the search checks usage first only because it is cheaper).
        rejection = self._selectable(spec, request, klass, device)
        if rejection is not None:
            return rejection
        if not request.admin_access and device.id in self.state.devices:
            return DeviceRejection(device.id, IN_USE, self._holder(device.id))
        if self.features.consumable_capacity:
            verdict = capacity_rules.check(request.capacity, device, self.state.aggregated_capacity.get(device.id), None,
                                           self.features.capacity_arithmetic_wraps, self.features.fractional_capacity_range)
            if not verdict.ok:
                return DeviceRejection(device.id, CAPACITY, verdict.describe())
        if device.consumes_counters:
            if not self.features.partitionable_devices:
                return DeviceRejection(device.id, COUNTERS_DISABLED, "device consumes counters, but DRAPartitionableDevices is disabled")
            shortage = self._counter_shortage(device, pool)
            if shortage:
                return DeviceRejection(device.id, COUNTERS, shortage)
            if self.features.compatibility_groups and not (
                    self.features.consumable_capacity and device.allow_multiple_allocations
                    and (device.id in self.state.aggregated_capacity or device.id in self.state.shared_devices)):
                # DRADeviceCompatibilityGroups: the groups of the devices already allocated from the
                # same counter set leave this one out (a further share of a shared device is not checked).
                key = ("compatibility", pool.driver, pool.name)
                cached = self._available.get(key)
                if cached is None:
                    devices = [d for s in pool.slices_targeting_node + pool.slices_not_targeting_node for d in s.devices]
                    cached = self._available[key] = (compatibility.baseline(devices, self.state.is_allocated),
                                                     compatibility.members(devices, self.state.is_allocated))
                conflict = compatibility.conflict(device, cached[0], cached[1], self._holder)
                if conflict:
                    return DeviceRejection(device.id, COMPATIBILITY_GROUPS, conflict)
        if self.features.device_taints:
            blocking = untolerated_taints(device.taints, request.tolerations, self.features.every_taint_blocks)
            if blocking:
                sources = ", ".join(f"{t} (from {t.source})" for t in blocking)
                return DeviceRejection(device.id, TAINTED, f"taint {sources} not tolerated")
        return None

    def _holder(self, device: DeviceID) -> str:
        return holder_text(self.e.objs, device)

    def _counter_shortage(self, device: Device, pool: Pool) -> str | None:
        if self.features.counters_per_slice:
            # 1.34: the device's own slice holds the counters it draws from.
            key = ("slice", device.slice.name)
            available = self._available.get(key)
            if available is None:
                available = self._available[key] = available_counters(
                    dict(device.slice.shared_counters), [device.slice], self.state.is_allocated)
            return counter_shortage(device, available)
        available = self._available.get((pool.driver, pool.name))
        if available is None:
            available = self._available[(pool.driver, pool.name)] = available_counters(
                pool.counter_sets, pool.slices_targeting_node + pool.slices_not_targeting_node, self.state.is_allocated)
        return counter_shortage(device, available)
