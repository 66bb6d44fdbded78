"""The search on one node (upstream Allocate, allocateOne, allocateDevice, createNodeSelector) and
the Allocator, shared across the nodes of one pod, that runs it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import partial

from .. import capacity as capacity_rules, compatibility
from ..capacity import CapacityVerdict
from ..cel import CelCompileError, CelRuntimeError
from ..codes import (
    BINDING_CONDITIONS_DISABLED,
    CAPACITY,
    CLASS_SELECTOR,
    COMPATIBILITY_GROUPS,
    CONSTRAINT,
    COUNTERS,
    COUNTERS_DISABLED,
    IN_USE,
    IN_USE_SAME_CLAIM,
    NODE_MISMATCH,
    NODE_OPERATIONS,
    REQUEST_SELECTOR,
    TAINTED,
)
from ..compatibility import GroupState
from ..constraints import AttributeLookup, Constraint, build_constraints
from ..features import Features
from ..index import ClusterIndex
from ..model import Device, DeviceID, Exact
from ..nodeselector import NodeSelectorError, node_matches
from ..pools import AllocatorError, NodeUnschedulable, Pool, available_counters, gather_pools
from ..quantity import Quantity
from ..state import AllocatedState
from ..taints import untolerated_taints
from .requests import ChosenDevice, ClaimSpec, Request, RequestData, make_request
from .selectors import SelectorEvaluator
from .trace import CompatibilityConflict, CounterShortage, SearchTrace

RESULTS_MAX = 32  # resourceapi.AllocationResultsMaxSize

RequestKey = tuple[int, int, int]
"""(claim, request, subrequest) indexes of a request in the attempt."""
CounterKey = str | tuple[str, str]
"""What counters are cached and tallied by (_Attempt._counter_key): a pool's ID, its name or a slice."""

# The node-declared feature a device of a slice with skipNodeOperations needs
# (component-helpers nodedeclaredfeatures/features/draoptionalnodeoperations).
OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"

_NO_SUCH_KEY_HINT = (". consider using CEL optional chaining (.? followed by orValue()) "
                     "or guarding the check with has() for optional fields")


class _MaxSizeExceeded(Exception):
    """upstream errAllocationResultMaxSizeExceeded: prune choices that cannot stay within 32 results."""


class Allocator:
    """Shared across nodes for one pod, like upstream's Allocator (counter cache included)."""

    def __init__(self, index: ClusterIndex, features: Features, state: AllocatedState,
                 classes: dict[str, dict], selectors: SelectorEvaluator | None = None):
        self.index = index
        self.features = features
        self.state = state
        self.classes = classes
        self.selectors = selectors or SelectorEvaluator(features)
        self.available_counters: dict[CounterKey, dict[str, dict[str, Exact]]] = {}
        # Per pool, the compatibility-group intersections of already-allocated devices; like the
        # counters, upstream caches them in the shared Allocator (compatibilityGroupsBaseline).
        self.compatibility_baseline: dict[tuple[str, str], dict[str, GroupState]] = {}

    def allocate(self, node: dict, claims: list[ClaimSpec], trace: SearchTrace | None = None,
                 pools: list[Pool] | None = None) -> "list[dict] | None":
        """Allocation results (one per claim) or None; raises AllocatorError / NodeUnschedulable.

        `pools` may pass the node's gather_pools() result when the caller already has it.
        """
        return _Attempt(self, node, claims, trace or SearchTrace()).run(pools)


class _Attempt:
    def __init__(self, allocator: Allocator, node: dict, claims: list[ClaimSpec], trace: SearchTrace):
        self.a = allocator
        self.features = allocator.features
        self.node = node
        self.node_name = node["metadata"]["name"]
        self.claims = claims
        self.trace = trace
        self.pools: list[Pool] = []
        self.request_data: dict[tuple[int, int, int], RequestData] = {}
        self.constraints: list[list[Constraint]] = []
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Quantity]] = {}
        self.consumed_counters: dict[CounterKey, dict[str, dict[str, Exact]]] = {}
        self.results: list[list[ChosenDevice]] = [[] for _ in claims]
        self.selectable_cache: dict[tuple[DeviceID, tuple[int, int, int]], bool] = {}
        # pool -> counter set -> intersection, for the devices chosen in this attempt (seeded from
        # the allocator's baseline the first time a set is touched).
        self.compatibility: dict[tuple[str, str], dict[str, GroupState]] = {}
        # (device, expression) -> derived attribute (upstream derivedAttributesCache).
        self.derived_cache: dict[tuple[DeviceID, str], dict] = {}

    # ------------------------------------------------------------------ setup

    def run(self, pools: list[Pool] | None = None) -> list[dict] | None:
        self.pools = pools if pools is not None else gather_pools(self.a.index, self.node, self.features)
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, raw in enumerate(claim.requests):
                subrequests = raw.get("firstAvailable") or []
                if subrequests and not self.features.prioritized_list:
                    raise AllocatorError(f"claim {claim.ref}, request {raw['name']}: has subrequests, but the DRAPrioritizedList feature is disabled")
                if not self.features.consumable_capacity and self.features.knows_consumable_capacity:
                    if raw.get("exactly") and raw["exactly"].get("capacity") is not None:
                        raise AllocatorError(f"claim {claim.ref}, request {raw['name']}: has capacity requests, but the DRAConsumableCapacity feature is disabled")
                    for sub in subrequests:
                        if sub.get("capacity") is not None:
                            raise AllocatorError(f"claim {claim.ref}, subrequest {sub['name']}: has capacity requests, but the DRAConsumableCapacity feature is disabled")
                if subrequests:
                    smallest = None
                    for si, sub in enumerate(subrequests):
                        setup_si = max(si - 1, 0) if self.features.subrequest_setup_uses_previous_key else si
                        data = self._validate(make_request(sub, sub["name"], raw["name"]), (ci, ri, setup_si))
                        self.request_data[(ci, ri, si)] = data
                        smallest = data.num_devices if smallest is None else min(smallest, data.num_devices)
                    wanted = smallest or 0
                else:
                    data = self._validate(make_request(raw.get("exactly") or {}, raw["name"], None), (ci, ri, 0))
                    self.request_data[(ci, ri, 0)] = data
                    wanted = data.num_devices
                if wanted > RESULTS_MAX - min_devices:
                    raise AllocatorError(f"claim {claim.ref}, request {raw['name']}: adding {wanted} devices exceeds the "
                                         f"claim limit of {RESULTS_MAX}, with {min_devices} already accounted for")
                min_devices += wanted
            constraints = build_constraints(claim.raw, self.features.distinct_attribute_per_request,
                                            self.features.knows_consumable_capacity, self.features.list_type_attributes,
                                            self.features.match_intersection_restored)
            if isinstance(constraints, str):
                raise AllocatorError(f"claim {claim.ref}, {constraints}")
            self.constraints.append(constraints)

        if self.features.subrequest_setup_uses_previous_key:
            # Upstream starts the search with a fresh match cache, so what the setup cached under a
            # neighbouring subrequest's key does not leak into the search.
            self.selectable_cache.clear()
        done = self._allocate_one(0, 0, 0, 0, False, (0, 0, 0))
        if not done:
            if any(p.invalid for p in self.pools) and self.features.skips_incomplete_pools:
                raise NodeUnschedulable("invalid resource pools were encountered")
            return None
        return [self._assemble(ci) for ci in range(len(self.claims))]

    def _validate(self, request: Request, key: tuple[int, int, int]) -> RequestData:
        claim = self.claims[key[0]]
        derived = None
        if request.raw.get("derivedAttributes"):
            if self.features.derived_attributes:
                derived = {d["name"]: d["expression"] for d in request.raw["derivedAttributes"]}
            elif self.features.rejects_derived_attributes:
                # Refused rather than ignored, so constraints are not silently unchecked
                # (allocator_experimental.go validateDeviceRequest).
                raise AllocatorError(f"claim {claim.ref}, request {request.name}: cannot handle request with derived "
                                     f"attributes, the feature is disabled")
        for i, selector in enumerate(request.selectors):
            if not isinstance(selector, dict) or selector.get("cel") is None:
                raise AllocatorError(f"claim {claim.ref}, request {request.name}, selector #{i}: CEL expression empty (unsupported selector type?)")
        if not self.features.admin_access and request.has_admin_access:
            raise AllocatorError(f"claim {claim.ref}, request {request.name}: admin access is requested, but the feature is disabled")
        if not request.class_name:
            raise AllocatorError(f"claim {claim.ref}, request {request.name}: missing device class name (unsupported request type?)")
        klass = self.a.classes.get(request.class_name)
        if klass is None:
            raise AllocatorError(f'claim {claim.ref}, request {request.name}: could not retrieve device class {request.class_name}: '
                                 f'deviceclass.resource.k8s.io "{request.class_name}" not found')
        data = RequestData(request, klass, derived=derived)
        if request.mode == "ExactCount":
            data.num_devices = request.count
        elif request.mode == "All":
            data.all_devices = []
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocatorError(f"claim {claim.ref}, request {request.name}: asks for all devices, but resource pool {pool.id} is currently being updated")
                if pool.invalid:
                    raise AllocatorError(f"claim {claim.ref}, request {request.name}: asks for all devices, but resource pool {pool.id} is currently invalid")
                for device in pool.devices_targeting_node():
                    if not self._is_selectable(key, data, device):
                        continue
                    if self.features.consumable_capacity:
                        if self.features.static_capacity_for_all_mode:
                            # 1.37: static capacity only; remaining capacity is checked when the
                            # device is taken, so a busy matching device makes "All" fail.
                            verdict = capacity_rules.check(data.request.capacity, device, None, None,
                                                           self.features.capacity_arithmetic_wraps,
                                                           self.features.fractional_capacity_range)
                        else:
                            verdict = self._capacity_fits(data.request, device)
                        if verdict.error:
                            raise AllocatorError(f"claim {claim.ref}, request {request.name}: checking capacity for "
                                                 f"device {device.name}: {verdict.error}")
                        if not verdict.ok:
                            continue
                    data.all_devices.append((device, pool))
            data.num_devices = len(data.all_devices)
        else:
            raise AllocatorError(f"claim {claim.ref}, request {request.name}: unsupported count mode {request.mode}")
        return data

    # ------------------------------------------------------------------ search

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple[int, int, int]) -> bool:
        self.trace.allocate_one_calls += 1
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False, (0, 0, 0))
            except _MaxSizeExceeded:
                return False
        key = (ci, ri, si)
        data = self.request_data[key]
        if not in_sub and data.request.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                try:
                    success = self._allocate_one(ci, ri, sub, di, True, (0, 0, 0))
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if success:
                    self.request_data[(ci, ri, 0)].selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded()
            return False

        request = data.request
        if request.mode == "All" and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False, (0, 0, 0))
        if len(self.results[ci]) + data.num_devices - di > RESULTS_MAX:
            raise _MaxSizeExceeded()

        if request.mode == "All":
            device, pool = data.all_devices[di]
            rollback = self._allocate_device(ci, key, device, pool, must=True)
            if rollback is None:
                return False
            next_si = 0 if self.features.all_mode_subrequest_resets else si
            try:
                done = self._allocate_one(ci, ri, next_si, di + 1, in_sub, (0, 0, 0))
            except BaseException:
                rollback()
                raise
            if not done:
                rollback()
            return done

        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.invalid and not self.features.skips_incomplete_pools:
                # Up to 1.34 reaching an invalid pool in the search is fatal, whatever the request
                # wants (structured/internal/*/allocator_*.go allocateOne in v0.34).
                raise AllocatorError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
            if pool.incomplete and self.features.skips_incomplete_pools or pool.invalid:
                continue
            slices = pool.slices_targeting_node
            for sli in range(start[1] if pi == start[0] else 0, len(slices)):
                devices = slices[sli].devices
                first = start[2] if pi == start[0] and sli == start[1] else 0
                for dvi in range(first, len(devices)):
                    device = devices[dvi]
                    if self.features.searches_permutations and self._chosen_here(ci, key, device.id):
                        continue  # met again only because this search starts over: not a reason
                    if request.admin_access:
                        if ci in self.allocating.get(device.id, ()):
                            self.trace.note(ci, request, device, IN_USE_SAME_CLAIM, "already chosen for this claim")
                            continue
                    elif self._in_use(device.id):
                        self.trace.note(ci, request, device, IN_USE, self._in_use_message(device.id))
                        continue
                    if not self._is_selectable(key, data, device):
                        continue
                    if self.features.consumable_capacity:
                        verdict = self._capacity_fits(request, device)
                        if verdict.error:
                            raise AllocatorError(f"claim {claim.ref}, request {request.name}: checking capacity for "
                                                 f"device {device.id}: {verdict.error}")
                        if not verdict.ok:
                            self.trace.note(ci, request, device, CAPACITY, verdict.describe())
                            continue
                    rollback = self._allocate_device(ci, key, device, pool, must=False)
                    if rollback is None:
                        continue
                    try:
                        # Up to 1.35 (and in the stable allocator) the next device of the same request
                        # is looked for from the first device again (permutations, no startLocation):
                        # the same verdicts, but more refused candidates, which matters where those
                        # keep their counters.
                        following = (0, 0, 0) if self.features.searches_permutations else (pi, sli, dvi + 1)
                        done = self._allocate_one(ci, ri, si, di + 1, in_sub, following)
                    except BaseException:
                        rollback()
                        raise
                    if done:
                        return True
                    rollback()
        return False

    # ------------------------------------------------------------------ checks

    def _chosen_here(self, ci: int, key: RequestKey, device: DeviceID) -> bool:
        """Whether the device is already among this request's choices in the current attempt."""
        return ci in self.allocating.get(device, ()) and any(
            c.device.id == device and c.request is self.request_data[key].request for c in self.results[ci])

    def _in_use(self, device: DeviceID) -> bool:
        return device in self.a.state.devices or bool(self.allocating.get(device))

    def _in_use_message(self, device: DeviceID) -> str:
        if device in self.a.state.devices:
            return "allocated to another claim"
        return "chosen for another claim of this pod"

    def _is_selectable(self, key: RequestKey, data: RequestData, device: Device) -> bool:
        cache_key = (device.id, key)
        cached = self.selectable_cache.get(cache_key)
        if cached is not None:
            return cached
        ci = key[0]
        request = data.request
        result = True
        if not self.features.binding_and_status and device.binding_conditions:
            self.trace.note(ci, request, device, BINDING_CONDITIONS_DISABLED,
                            "device has binding conditions, but DRADeviceBindingConditions is disabled")
            return False
        if data.klass is not None:
            result = self._selectors_match(ci, request, device, data.klass, data.klass["spec"].get("selectors") or [])
        if result:
            result = self._selectors_match(ci, request, device, None, request.selectors)
        if result and device.slice.per_device_node_selection:
            try:
                result = node_matches(self.node, device.node_name, device.all_nodes, device.node_selector)
            except NodeSelectorError as err:
                raise AllocatorError(f"failed to perform node selection for device {device.name}: {err}") from None
            if not result:
                self.trace.note(ci, request, device, NODE_MISMATCH, "device is not available on this node")
        self.selectable_cache[cache_key] = result
        return result

    def _selectors_match(self, ci: int, request: Request, device: Device, klass: dict | None, selectors: list[dict]) -> bool:
        claim = self.claims[ci]
        for i, selector in enumerate(selectors):
            expression = selector["cel"]["expression"]
            owner = f"class {klass['metadata']['name']}" if klass is not None else f"claim {claim.ref}"
            try:
                matches = self.a.selectors.evaluate(expression, device)
            except CelCompileError as err:
                raise AllocatorError(f"{owner}: selector #{i}: CEL compile error: {err}") from None
            except CelRuntimeError as err:
                # 1.37 (cel/errors.go EnhanceRuntimeError) names the device and adds a hint.
                where, hint = "", ""
                if self.features.minor >= 37:
                    where = f" on device {device.id}"
                    hint = _NO_SUCH_KEY_HINT if "no such key:" in str(err) else ""
                raise AllocatorError(f"{owner}: selector #{i}{where}: CEL runtime error: {err}{hint}") from None
            if not matches:
                code = CLASS_SELECTOR if klass is not None else REQUEST_SELECTOR
                self.trace.note(ci, request, device, code, f"{owner}: selector #{i} is false")
                return False
        return True

    def _capacity_fits(self, request: Request, device: Device) -> CapacityVerdict:
        return capacity_rules.check(request.capacity, device, self.a.state.aggregated_capacity.get(device.id),
                                    self.allocating_capacity.get(device.id), self.features.capacity_arithmetic_wraps,
                                    self.features.fractional_capacity_range)

    def _capacity_in_use(self, device: DeviceID) -> bool:
        if device in self.a.state.aggregated_capacity or device in self.allocating_capacity:
            return True
        return self.features.shared_allocations_mark_capacity_in_use and device in self.a.state.shared_devices

    def _allocate_device(self, ci: int, key: RequestKey, device: Device, pool: Pool,
                         must: bool) -> Callable[[], None] | None:
        """Returns a rollback function, or None if the device cannot be taken (upstream allocateDevice).

        Like upstream's deviceRollbackState, every change made for a rejected candidate is undone
        at once, in reverse order; the returned function undoes a taken one while backtracking.
        """
        claim = self.claims[ci]
        data = self.request_data[key]
        request = data.request
        multi = self.features.consumable_capacity and device.allow_multiple_allocations
        if not multi and request.admin_access and ci in self.allocating.get(device.id, ()):
            self.trace.note(ci, request, device, IN_USE_SAME_CLAIM, "already chosen for this claim")
            return None
        if not request.admin_access and self._in_use(device.id):
            self.trace.note(ci, request, device, IN_USE, self._in_use_message(device.id))
            return None
        if device.slice.skip_node_operations and self.features.checks_node_operations:
            if not self.features.optional_node_operations:
                self.trace.note(ci, request, device, NODE_OPERATIONS,
                                "device skips node operations, but DRAOptionalNodeOperations is disabled")
                return None
            if OPTIONAL_NODE_OPERATIONS not in ((self.node.get("status") or {}).get("declaredFeatures") or ()):
                self.trace.note(ci, request, device, NODE_OPERATIONS,
                                f"device skips node operations, which the node does not declare ({OPTIONAL_NODE_OPERATIONS})")
                return None
        if not self.features.partitionable_devices and device.consumes_counters:
            self.trace.note(ci, request, device, COUNTERS_DISABLED,
                            "device consumes counters, but DRAPartitionableDevices is disabled")
            return None
        undo: list[Callable[[], None]] = []

        def rollback() -> None:
            while undo:
                undo.pop()()

        skip_counters = multi and self._capacity_in_use(device.id)
        give_back = None
        if self.features.compatibility_groups and not skip_counters and device.consumes_counters:
            # Before the counters, so a rejection reserves nothing (allocateDevice); skipped for a
            # further share of a device already placed, like the counter check.
            restore = self._join_compatibility_groups(device, pool)
            if isinstance(restore, CompatibilityConflict):
                self.trace.note(ci, request, device, COMPATIBILITY_GROUPS, restore)
                return None
            undo.append(restore)
        if not skip_counters and device.consumes_counters:
            shortage = self._take_counters(device, pool)
            if shortage:
                rollback()
                self.trace.note(ci, request, device, COUNTERS, shortage)
                return None
            give_back = lambda: self._give_back_counters(device, pool)  # noqa: E731
            undo.append(give_back)

        def refuse() -> None:
            if give_back is not None and self.features.rejected_candidates_keep_counters:
                undo.remove(give_back)
            rollback()

        if self.features.device_taints:
            blocking = untolerated_taints(device.taints, request.tolerations, self.features.every_taint_blocks)
            if blocking:
                refuse()
                self.trace.note(ci, request, device, TAINTED, "taint " + ", ".join(str(t) for t in blocking) + " not tolerated")
                return None
        base, sub = (request.name, None) if request.parent is None else (request.parent, request.name)
        lookup = self._derived_lookup(data) if data.derived else None
        for constraint in self.constraints[ci]:
            try:
                conflict = constraint.add(base, sub, device, lookup)
            except AllocatorError:
                rollback()
                raise
            if conflict is not None:
                refuse()
                if must:
                    raise AllocatorError(f"claim {claim.ref}, request {request.name}: cannot add device {device.id} because a claim constraint would not be satisfied")
                self.trace.note(ci, request, device, CONSTRAINT, conflict)
                return None
            undo.append(partial(constraint.remove, base, sub, device))
        if not multi:
            holders = self.allocating.setdefault(device.id, set())
            holders.add(ci)
            undo.append(lambda: holders.discard(ci))
        consumed = None
        share_id = None
        if self.features.consumable_capacity:
            verdict = self._capacity_fits(request, device)
            if verdict.error:
                rollback()
                raise AllocatorError(f"claim {claim.ref}, request {request.name}: rechecking capacity for "
                                     f"device {device.id}: {verdict.error}")
            if not verdict.ok:
                rollback()
                self.trace.note(ci, request, device, CAPACITY, verdict.describe())
                return None
            if multi:
                consumed = capacity_rules.consumed_capacity(request.capacity, device, self.features.capacity_arithmetic_wraps,
                                                            self.features.fractional_capacity_range)
                share_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{claim.ref}/{request.full_name}/{device.id}/{len(self.results[ci])}"))
                existed = device.id in self.allocating_capacity
                totals = self.allocating_capacity.setdefault(device.id, {})
                for name, value in consumed.items():
                    totals[name] = totals[name] + value if name in totals else value
                undo.append(lambda: self._release_capacity(device.id, consumed, existed))
        results = self.results[ci]
        previous = len(results)
        results.append(ChosenDevice(request, device, share_id, consumed or None))
        undo.append(lambda: results.__delitem__(slice(previous, None)))
        return rollback

    def _release_capacity(self, device: DeviceID, consumed: dict[str, Quantity], existed: bool) -> None:
        """ConsumedCapacityCollection.Remove, keeping the entry that marks an earlier share."""
        totals = self.allocating_capacity.get(device)
        if totals is None:
            return
        for name, value in consumed.items():
            if name in totals:
                totals[name] = totals[name] - value
        if all(v.is_zero() for v in totals.values()):
            del self.allocating_capacity[device]
            if existed:
                self.allocating_capacity[device] = {}

    # ------------------------------------------------------------------ derived attributes

    def _derived_lookup(self, data: RequestData) -> AttributeLookup:
        """The attribute lookup constraints use for this request's devices: a derived attribute of
        the request first (evaluated once per device and expression), else the device's own
        (allocator_experimental.go lookupAttribute). Errors abort the allocation."""
        derived = data.derived or {}

        def lookup(device: Device, name: str) -> dict | None:
            expression = derived.get(name)
            if expression is None:
                return device.lookup_attribute(name)
            key = (device.id, expression)
            cached = self.derived_cache.get(key)
            if cached is not None:
                return cached
            try:
                compiled = self.a.selectors.compiler.compile_derived(expression)
            except CelCompileError as err:
                raise AllocatorError(f"compile derived attribute {name} failed: {err}") from None
            try:
                value = compiled.evaluate(device)
            except CelRuntimeError as err:
                raise AllocatorError(f"evaluate derived attribute {name} on device {device.id} failed: {err}") from None
            self.derived_cache[key] = value
            return value

        return lookup

    # ------------------------------------------------------------------ compatibility groups

    def _join_compatibility_groups(self, device: Device, pool: Pool) -> Callable[[], None] | CompatibilityConflict:
        """checkAndConsumeCompatibilityGroups: the device joins the running intersection of every counter
        set it draws from, or nothing changes. Returns the function that undoes the join, or why not."""
        pool_id = (pool.driver, pool.name)
        running = self.compatibility.setdefault(pool_id, {})
        baseline = self.a.compatibility_baseline.get(pool_id)
        if baseline is None:
            baseline = self.a.compatibility_baseline[pool_id] = compatibility.baseline(
                (d for s in pool.slices_targeting_node + pool.slices_not_targeting_node for d in s.devices),
                self.a.state.is_allocated)
        saved: list[tuple[str, GroupState, bool]] = []

        def restore() -> None:
            for set_name, previous, existed in reversed(saved):
                if existed:
                    running[set_name] = previous
                else:
                    running.pop(set_name, None)

        for set_name, groups in device.compatibility_groups:
            existed = set_name in running
            current = running[set_name] if existed else baseline.get(set_name)
            if not compatibility.admits(current, groups):
                restore()
                chosen = [(c.device.id, g) for results in self.results for c in results
                          if c.device.id.pool == pool.name and c.device.id.driver == pool.driver
                          for name, g in c.device.compatibility_groups if name == set_name]
                return CompatibilityConflict(self, device, pool, set_name, current, chosen)
            saved.append((set_name, current, existed))
            running[set_name] = compatibility.add(current, groups)
        return restore

    # ------------------------------------------------------------------ counters

    def _counter_key(self, device: Device, pool: Pool) -> CounterKey:
        """The key of the counters a device draws from: its pool's ID; in 1.35 the pool's name alone,
        so pools of the same name from different drivers share one cache and one tally (v0.35
        checkAvailableCounters keys both by PoolID.Pool; v0.36 by PoolID); in 1.34 the device's
        slice, whose own sharedCounters are the only ones it draws from (v0.34, by slice name)."""
        if self.features.counters_per_slice:
            return ("slice", device.slice.name)
        return pool.name if self.features.counters_keyed_by_pool_name else (pool.driver, pool.name)

    def _available_counters(self, device: Device, pool: Pool) -> dict[str, dict[str, Exact]]:
        # Upstream caches this per pool in the shared Allocator, computed from the first node's
        # view of the pool. We do the same to agree with it.
        key = self._counter_key(device, pool)
        cached = self.a.available_counters.get(key)
        if cached is not None:
            return cached
        if self.features.counters_per_slice:
            # 1.34: the slice's counter sets, less what its own allocated devices consume.
            available = available_counters(dict(device.slice.shared_counters), [device.slice], self.a.state.is_allocated)
        else:
            available = available_counters(pool.counter_sets, pool.slices_targeting_node + pool.slices_not_targeting_node,
                                           self.a.state.is_allocated)
        self.a.available_counters[key] = available
        return available

    def _counter_sets(self, device: Device, pool: Pool) -> dict[str, dict[str, Quantity]]:
        return dict(device.slice.shared_counters) if self.features.counters_per_slice else pool.counter_sets

    def _take_counters(self, device: Device, pool: Pool) -> CounterShortage | None:
        available = self._available_counters(device, pool)
        consumed = self.consumed_counters.setdefault(self._counter_key(device, pool), {})
        for set_name, counters in device.counter_amounts:
            target = consumed.setdefault(set_name, {})
            for name, value in counters.items():
                target[name] = target.get(name, 0) + value
        # Like upstream, every counter of the pool is checked, not only the device's: a counter
        # that existing allocations already overdrew blocks every device of the pool.
        for set_name, counters in available.items():
            used = consumed.get(set_name)
            for name, left in counters.items():
                taken = used.get(name, 0) if used else 0
                if left < taken:
                    self._give_back_counters(device, pool)
                    return CounterShortage(device, self._counter_sets(device, pool), set_name, name, left, taken)
        return None

    def _give_back_counters(self, device: Device, pool: Pool) -> None:
        consumed = self.consumed_counters.get(self._counter_key(device, pool), {})
        for set_name, counters in device.counter_amounts:
            target = consumed.get(set_name, {})
            for name, value in counters.items():
                if name in target:
                    target[name] -= value

    # ------------------------------------------------------------------ result

    def _assemble(self, ci: int) -> dict:
        chosen = self.results[ci]
        allocation: dict = {"devices": {"results": [c.result(self.features) for c in chosen]}}
        config = self._config(ci)
        if config:
            allocation["devices"]["config"] = config
        selector = self._node_selector(ci, chosen)
        if selector is not None:
            allocation["nodeSelector"] = selector
        return allocation

    def _selected(self, ci: int, ri: int) -> RequestData:
        data = self.request_data[(ci, ri, 0)]
        if data.request.parent is not None:
            return self.request_data[(ci, ri, data.selected_sub)]
        return data

    def _config(self, ci: int) -> list[dict]:
        claim = self.claims[ci]
        config: list[dict] = []
        class_ranges: dict[str, tuple[int, int]] = {}
        for ri in range(len(claim.requests)):
            data = self._selected(ci, ri)
            if data.klass is None:
                continue
            name = data.klass["metadata"]["name"]
            if name in class_ranges:
                start, end = class_ranges[name]
                for i in range(start, end):
                    config[i]["requests"].append(data.request.full_name)
                continue
            start = len(config)
            for entry in data.klass["spec"].get("config") or []:
                item = {"source": "FromClass", "requests": [data.request.full_name]}
                item.update({k: v for k, v in entry.items() if k != "requests"})
                config.append(item)
            class_ranges[name] = (start, len(config))
        for entry in claim.raw["spec"]["devices"].get("config") or []:
            requests = entry.get("requests") or []
            applies = not requests
            if not applies:
                for ri, raw in enumerate(claim.requests):
                    if raw["name"] in requests:
                        applies = True
                        break
                    data = self.request_data[(ci, ri, 0)]
                    if data.request.parent is None:
                        continue
                    if self._selected(ci, ri).request.full_name in requests:
                        applies = True
                        break
            if applies:
                item = {"source": "FromClaim"}
                if requests:
                    item["requests"] = list(requests)
                item.update({k: v for k, v in entry.items() if k != "requests"})
                config.append(item)
        for item in config:
            requests = item.get("requests")
            if not requests:
                continue
            if all(raw["name"] in requests or (self.request_data[(ci, ri, 0)].request.parent is not None
                                                and self._selected(ci, ri).request.full_name in requests)
                   for ri, raw in enumerate(claim.requests)):
                item.pop("requests")
        return config

    def _node_selector(self, ci: int, chosen: list[ChosenDevice]) -> dict | None:
        fields: list[dict] = []
        expressions: list[dict] = []
        for c in chosen:
            s = c.device.slice
            if s.per_device_node_selection:
                node_name, selector = c.device.node_name, c.device.node_selector
            else:
                node_name, selector = s.node_name, s.node_selector
            if node_name or c.device.binds_to_node:
                return {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [self.node_name]}]}]}
            if selector is not None:
                terms = selector.get("nodeSelectorTerms") or []
                if len(terms) > 1:
                    raise AllocatorError(f"create NodeSelector for claim {self.claims[ci].name}: unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
                if terms:
                    _merge(terms[0].get("matchFields") or [], fields)
                    _merge(terms[0].get("matchExpressions") or [], expressions)
        if not fields and not expressions:
            return None
        term: dict = {}
        if expressions:
            term["matchExpressions"] = expressions
        if fields:
            term["matchFields"] = fields
        return {"nodeSelectorTerms": [term]}


def _merge(source: list[dict], target: list[dict]) -> None:
    for req in source:
        values = set(req.get("values") or [])
        if not any(t["key"] == req["key"] and t["operator"] == req["operator"] and set(t.get("values") or []) == values
                   for t in target):
            target.append({"key": req["key"], "operator": req["operator"], **({"values": list(req["values"])} if req.get("values") else {})})
