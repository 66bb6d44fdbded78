"""The free-devices remedy: the smallest set of allocated claims whose release lets the target fit.

DRA has no preemption yet, so "whose pods would I have to stop?" is the question people ask.
Candidates on a node are the claims holding a device the node rejected because it is in use, because
its shared capacity is consumed, or because the device's counters are consumed by other devices.
Releasing more never makes a target fit less, so a node where releasing every candidate does not help
is dropped after one judgement, and smaller sets are tried only there, smallest first.
"""

from __future__ import annotations

import itertools

import allocator
from allocator import DeviceID, cluster_index, reserved_pods
from allocator.codes import CAPACITY, COUNTERS, IN_USE

from .explanation import Remedy
from .remedies_policy import same_workload
from .remedies_search import FREE_DEVICES, Fit, Search, Usage

_HELD = (IN_USE, CAPACITY, COUNTERS)
# Nodes tried with every candidate released (fewest claims needed first), nodes searched for the
# smallest set once that helped, and sets tried per node.
_NODES_TRIED, _NODES_SEARCHED, _SETS_PER_NODE = 12, 3, 64
Needs = dict[str, list[tuple[int, set[DeviceID]]]]
"""Request -> (devices short, devices whose release would help) per alternative of it."""


class _Claim:
    """An allocated claim that could be released."""

    def __init__(self, ref: str, pods: list[tuple[str, str]], priority: int | None, devices: set[DeviceID],
                 groups: tuple[str, ...] = ()) -> None:
        self.ref = ref
        self.pods = pods
        self.groups = groups          # PodGroups the claim is reserved for (DRAWorkloadResourceClaims)
        self.priority = priority      # highest priority of the pods using it; None when no pod uses it
        self.devices = devices

    @property
    def key(self) -> tuple:
        # Lowest pod priority first (a claim no pod uses costs nothing), then fewest devices.
        return (float("-inf") if self.priority is None else self.priority, len(self.devices), self.ref)


def release_remedy(search: Search) -> list[Remedy]:
    usage = search.usage()
    # The target's own claims, and those of the pods of its workload (remedies_policy, rule 2).
    own = {c.ref for c in search.explanation.claims} | _workload_claims(search, usage)
    claims: dict[str, _Claim] = {}
    plans = []   # (lower bound of claims to release, node, {claim: devices it unblocks}, needs)
    for verdict in search.failing:
        unblocks: dict[str, set[DeviceID]] = {}
        # request (subrequests grouped under their request) -> [(devices missing, devices held by others)]
        needs: Needs = {}
        for claim_ref, request in search.allocating(verdict):
            blocked: set[DeviceID] = set()
            for rejection in request.rejected:
                if rejection.code not in _HELD:
                    continue
                for ref in _holders(search, usage, rejection.device, rejection.code):
                    if ref in own:
                        continue
                    if ref not in claims:
                        claims[ref] = _claim(search, ref)
                    unblocks.setdefault(ref, set()).add(rejection.device)
                    blocked.add(rejection.device)
            shortfall = request.wanted - request.candidates if isinstance(request.wanted, int) else 0
            group = f"{claim_ref}/{request.name.partition('/')[0]}"
            needs.setdefault(group, []).append((max(0, shortfall), blocked))
        if unblocks and _enough(set().union(*unblocks.values()), needs):
            plans.append((_lower_bound(unblocks, needs), verdict.node, unblocks, needs))
    plans.sort(key=lambda p: (p[0], len(p[2]), p[1]))

    best: tuple[tuple, list[_Claim], str] | None = None
    searched = 0
    for bound, node, unblocks, needs in plans[:_NODES_TRIED]:
        if search.spent() or searched == _NODES_SEARCHED or (best is not None and bound > len(best[1])):
            break
        candidates = sorted((claims[ref] for ref in unblocks), key=lambda c: c.key)
        if not _fits_without(search, candidates, [node]):
            continue  # something besides these claims keeps it off this node
        searched += 1
        limit = len(candidates) if best is None else min(len(candidates), len(best[1]))
        chosen = _smallest(search, node, candidates, unblocks, needs, limit) or candidates
        rank = (len(chosen), max(c.key[0] for c in chosen), sum(len(c.devices) for c in chosen))
        if best is None or rank < best[0]:
            best = (rank, chosen, node)
    if best is None:
        return []
    _, chosen, node = best
    reach = _reach(search, chosen)
    fitting = Fit([node]) if reach == [node] else search.fits_on(_released(search, chosen), search.target, reach)
    return [_describe(chosen, fitting)] if fitting else []


def _workload_claims(search: Search, usage: Usage) -> set[str]:
    """Claims used by pods of the workload the target belongs to."""
    pod = search.target_pod()
    if pod is None:
        return set()
    refs: set[str] = set()
    for holders in usage.values():
        for holder in holders:
            if any(same_workload(pod, search.objs.pods.get(p)) for p in holder.pods):
                refs.add(holder.claim_ref)
    return refs


def _enough(freed: set[DeviceID], needs: Needs) -> bool:
    """Whether freeing these devices could cover every request's shortfall (one alternative of a
    prioritized list is enough). Only a necessary condition: the judgement decides."""
    return all(any(len(freed & blocked) >= shortfall for shortfall, blocked in alternatives)
               for alternatives in needs.values())


def _holders(search: Search, usage: Usage, device: DeviceID, code: str) -> list[str]:
    if code != COUNTERS:
        return [h.claim_ref for h in usage.get(device, []) if not h.admin_access]
    # The device's counters are consumed by other devices of its pool that share a counter set.
    model = search.device(device)
    if model is None:
        return []
    sets = {name for name, _ in model.consumes_counters}
    refs: list[str] = []
    for s in cluster_index(search.objs, search.features).slices_by_pool[(device.driver, device.pool)]:
        if s.generation != model.slice.generation:
            continue
        for other in s.devices:
            if other.id != device and sets & {name for name, _ in other.consumes_counters}:
                refs.extend(h.claim_ref for h in usage.get(other.id, []) if not h.admin_access)
    return refs


def _claim(search: Search, ref: str) -> _Claim:
    namespace, _, name = ref.partition("/")
    claim = search.objs.claims[(namespace, name)]
    pods = reserved_pods(claim)
    # A claim reserved for a PodGroup (resourceclaim.BindTo with DRAWorkloadResourceClaims on) is in
    # use by the group's pods, scheduled or not, even when no pod is named in reservedFor.
    groups = tuple(sorted({ref.get("name", "") for ref in (claim.get("status") or {}).get("reservedFor") or []
                           if ref.get("resource") == "podgroups" and ref.get("apiGroup") == "scheduling.k8s.io"}))
    if groups:
        pods = pods + sorted(key for key, pod in search.objs.pods.items() if key[0] == namespace and key not in pods
                             and ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") in groups)
    priorities = [int(((search.objs.pods.get(p) or {}).get("spec") or {}).get("priority") or 0) for p in pods]
    held = {DeviceID(r["driver"], r["pool"], r["device"])
            for r in claim["status"]["allocation"]["devices"]["results"] if not r.get("adminAccess")}
    priority = max(priorities) if priorities else (0 if groups else None)
    return _Claim(ref, pods, priority, held, groups)


def _lower_bound(unblocks: dict[str, set[DeviceID]], needs: Needs) -> int:
    """Claims needed at least: greedily, the biggest unblockers first cover the largest shortfall."""
    shortfall = max((min(s for s, _ in alternatives) for alternatives in needs.values()), default=0)
    sizes = sorted((len(d) for d in unblocks.values()), reverse=True)
    covered, count = 0, 0
    for size in sizes:
        if covered >= shortfall:
            break
        covered += size
        count += 1
    return max(count, 1)


def _smallest(search: Search, node: str, candidates: list[_Claim], unblocks: dict[str, set[DeviceID]], needs: Needs,
              limit: int) -> list | None:
    """The first set, by size then candidate order, whose release lets the target fit on the node."""
    tried = 0
    for size in range(1, limit + 1):
        for chosen in itertools.combinations(candidates, size):
            if not _enough(set().union(*(unblocks[c.ref] for c in chosen)), needs):
                continue  # cannot free enough devices of some request: no need to judge
            if tried >= _SETS_PER_NODE or search.spent():
                return None
            tried += 1
            if _fits_without(search, list(chosen), [node]):
                return list(chosen)
    return None


def _released(search: Search, chosen: list) -> allocator.ObjectSet:
    return search.objs.with_changes(remove=[("ResourceClaim", *c.ref.split("/", 1)) for c in chosen])


def _fits_without(search: Search, chosen: list, nodes: list[str]) -> Fit:
    return search.fits_on(_released(search, chosen), search.target, nodes)


def _reach(search: Search, chosen: list) -> list[str] | None:
    """The nodes whose verdict releasing these claims can change (None: any node)."""
    nodes = set()
    for claim in chosen:
        for device in claim.devices:
            model = search.device(device)
            if model is None or not model.slice.node_name:
                return None
            nodes.add(model.slice.node_name)
    return sorted(nodes)


def _describe(chosen: list, fitting: Fit) -> Remedy:
    def one(c: _Claim) -> str:
        pods = ", ".join(f"{ns}/{n}" for ns, n in c.pods)
        group = f"PodGroup {', '.join(c.groups)}" if c.groups else ""
        if c.pods:
            used = f"{group + ': ' if group else ''}pod {pods}, priority {c.priority}"
        else:
            used = f"{group}, no pod of it known" if group else "used by no pod"
        return f"{c.ref} ({used}, {len(c.devices)} device{'s' if len(c.devices) != 1 else ''})"

    pods = sorted({f"{ns}/{n}" for c in chosen for ns, n in c.pods})
    claims = "; ".join(one(c) for c in chosen)
    plural = len(chosen) > 1
    how = (f"delete the pod{'s' if len(pods) > 1 else ''} using {'them' if plural else 'it'}" if pods
           else f"delete or deallocate {'them' if plural else 'it'}")
    return Remedy(
        FREE_DEVICES,
        f"Free devices: release claim{'s' if plural else ''} {claims}. DRA does not preempt, so {how}; "
        f"then it fits on {fitting.text()}.",
        {"release": [c.ref for c in chosen], "pods": pods},
        fitting.nodes)
