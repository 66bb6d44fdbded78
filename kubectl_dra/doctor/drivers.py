"""API and versions; drivers and pools (vendor support): do the drivers' slices reflect the hardware?"""

from __future__ import annotations

import re

from allocator.codes import BEING_REPLACED, INCOMPLETE, INVALID
from kubectl_dra import missing_nodes as missing_nodes_words
from kubectl_dra.doctor.common import STUCK_AFTER, duration, meta, nodes_by_name, plural
from kubectl_dra.doctor.report import OK, PROBLEM, WARNING, Check, Context, Finding
from kubectl_dra.model.claims import asks_admin_access
from kubectl_dra.model.coverage import nodes_lacking_driver
from kubectl_dra.model.nodes import node_trouble
from kubectl_dra.snapshot import kubernetes_minor
from kubectl_dra.store import KINDS, parse_time

RESOURCE_KINDS = ("ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule")
OLDEST_DRA_KUBELET = 34
"""resource.k8s.io/v1 and the v1 kubelet plugin API are GA from 1.34; older kubelets speak only beta."""
KUBELET_SKEW = 3
"""Kubernetes' version skew policy: a kubelet may be up to three minors older than the API server, never newer."""


# --- API and versions ---------------------------------------------------------------------------

def api_versions(ctx: Context) -> Finding:
    status = ctx.model.kind_status
    served: dict[str, list[str]] = {}
    not_served: list[str] = []
    unreadable: list[str] = []
    for kind in KINDS:
        state = status.get(kind)
        if state is None or state.state == "ok":
            if kind in RESOURCE_KINDS:
                version = (state.api_version if state is not None else None) or ctx.model.connection.resource_api_version
                served.setdefault(version or "resource.k8s.io", []).append(kind)
        elif state.state == "not-served":
            not_served.append(kind)
        else:
            unreadable.append(f"{kind} ({state.state})")
    details = [f"{version}: {', '.join(kinds)}" for version, kinds in served.items()]
    if not_served:
        details.append(f"not served: {', '.join(not_served)}")
    if "ResourceSlice" in not_served:
        return Finding(PROBLEM, "the server does not serve resource.k8s.io in a version kubectl dra reads: DRA is off",
                       [f"kind/{k}" for k in not_served], "kubectl api-versions | grep resource.k8s.io", details)
    if unreadable:
        return Finding(WARNING, f"{plural(len(unreadable), 'kind')} not readable: {', '.join(unreadable)}",
                       [f"kind/{k.split()[0]}" for k in unreadable], "kubectl auth can-i --list", details)
    versions = ", ".join(served) or "none"
    extra = f"; {', '.join(not_served)} not served" if not_served else ""
    return Finding(OK, f"served: {versions}{extra}", details=details)


def _taint_rule_gates(features) -> tuple[str, ...]:
    """The gates under which DeviceTaintRules taint devices: DRADeviceTaints, and from 1.35 (where
    kube_features.go adds it) DRADeviceTaintRules too; 1.34 has no DRADeviceTaintRules gate and
    applies the rules whenever DRADeviceTaints is on (allocator Features.device_taint_rules)."""
    return ("DRADeviceTaints",) if features.minor < 35 else ("DRADeviceTaints", "DRADeviceTaintRules")


FEATURE_USE = (
    # (gate, or a function of the features giving the gates that must all be on; words; test over the model)
    ("DRAPartitionableDevices", "partitionable devices (shared counters)",
     lambda m: any(p.counter_sets for p in m.pools)),
    ("DRAConsumableCapacity", "consumable capacity",
     lambda m: any(d.allow_multiple_allocations for d in m.devices)),
    ("DRADeviceTaints", "device taints", lambda m: any(d.taints for d in m.devices)),
    (_taint_rule_gates, "DeviceTaintRules", lambda m: bool(m.raw.get("DeviceTaintRule"))),
    ("DRADeviceBindingConditions", "binding conditions", lambda m: any(d.binding_conditions for d in m.devices)),
    ("DRAExtendedResource", "extended resources",
     lambda m: any((c.get("spec") or {}).get("extendedResourceName") for c in m.raw.get("DeviceClass", ()))),
    ("DRAAdminAccess", "admin access",
     lambda m: any(asks_admin_access(c.get("spec") or {}) for c in m.objects.claims.values())),
)


def api_features(ctx: Context) -> Finding:
    model = ctx.model
    features = model.features
    used, off = [], []
    for gate, words, test in FEATURE_USE:
        if not test(model):
            continue
        used.append(words)
        gates = gate(features) if callable(gate) else (gate,)
        gates_off = [name for name in gates if not features.gates.get(name, True)]
        if gates_off:
            verb = "is" if len(gates_off) == 1 else "are"
            off.append(f"{words} ({' and '.join(gates_off)} {verb} off by default in 1.{features.minor})")
    rules = f"allocator rules of Kubernetes 1.{features.minor} ({features.variant} allocator)"
    actual = model.connection.kubernetes_minor
    details = [f"in use: {', '.join(used) or 'no optional DRA feature'}"]
    if off:
        return Finding(WARNING, f"objects use {plural(len(off), 'feature')} the scheduler of 1.{features.minor} "
                       f"ignores by default: {'; '.join(off)}", next="kubectl dra explain pod/NAME", details=details)
    if actual is not None and actual != features.minor:
        return Finding(WARNING, f"the cluster runs 1.{actual}; judging with the {rules}, the closest kubectl dra knows",
                       details=details)
    return Finding(OK, f"{rules}; {plural(len(used), 'optional feature')} in use", details=details)


def kubelet_skew(ctx: Context) -> Finding:
    model = ctx.model
    server = model.connection.kubernetes_minor
    if server is None:
        server = model.features.minor
    with_devices = _nodes_with_devices(model)
    nodes = nodes_by_name(model)
    problems, old = [], []
    versions: dict[str, int] = {}
    for name in sorted(with_devices):
        node = nodes.get(name)
        version = (((node or {}).get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion")
        if not version or (minor := kubernetes_minor(version)) is None:
            continue
        versions[version] = versions.get(version, 0) + 1
        if minor > server or server - minor > KUBELET_SKEW:
            problems.append(f"node/{name} ({version})")
        elif minor < OLDEST_DRA_KUBELET:
            old.append(f"node/{name} ({version})")
    seen = ", ".join(f"{v} ×{n}" for v, n in sorted(versions.items())) or "none reported"
    if problems:
        return Finding(PROBLEM, f"{plural(len(problems), 'node')} with DRA devices run a kubelet outside the supported "
                       f"skew of the 1.{server} control plane (newer, or more than {KUBELET_SKEW} minors older)",
                       problems, "kubectl get nodes -o wide", [f"kubelets: {seen}"])
    if old:
        return Finding(WARNING, f"{plural(len(old), 'node')} with DRA devices run a kubelet older than "
                       f"1.{OLDEST_DRA_KUBELET} (beta kubelet plugin API only)", old, "kubectl get nodes -o wide",
                       [f"kubelets: {seen}"])
    return Finding(OK, f"kubelets of {plural(len(with_devices), 'node')} with DRA devices within skew of 1.{server}: "
                   f"{seen}")


def _nodes_with_devices(model) -> set[str]:
    names = set()
    for entry in model.node_reach.entries.values():
        if entry.node is not None and any(reach.counts.total for reach in entry.reach):
            names.add(entry.name)
    return names


# --- drivers and pools --------------------------------------------------------------------------

def driver_coverage(ctx: Context) -> Finding:
    model = ctx.model
    if not model.pools:
        return Finding(WARNING, "no ResourceSlices: no DRA driver publishes devices", next="kubectl get pods -A -o wide "
                       "| grep -i dra")
    pools: dict[str, int] = {}
    devices: dict[str, int] = {}
    for pool in model.pools:
        pools[pool.driver] = pools.get(pool.driver, 0) + 1
        devices[pool.driver] = devices.get(pool.driver, 0) + pool.counts.total
    nodes: dict[str, set[str]] = {driver: set() for driver in pools}
    for entry in model.node_reach.entries.values():
        if entry.node is None:
            continue
        for reach in entry.reach:
            if reach.counts.total:
                nodes[reach.pool.driver].add(entry.name)
    details = [f"{driver}: {plural(pools[driver], 'pool')}, {plural(devices[driver], 'device')}, "
               f"reaching {plural(len(nodes[driver]), 'node')}" for driver in sorted(pools)]
    return Finding(OK, f"{plural(len(pools), 'driver')}, {plural(len(model.pools), 'pool')}, "
                   f"{plural(sum(devices.values()), 'device')}", details=details)


def incomplete_pools(ctx: Context) -> Finding:
    model = ctx.model
    stuck: list[str] = []
    fresh: list[str] = []
    for pool in model.pools:
        if pool.state not in (INCOMPLETE, BEING_REPLACED):
            continue
        times = [parse_time(meta(model.raw_slices_by_name.get(name) or {}).get("creationTimestamp"))
                 for name in pool.slice_names]
        known = [t for t in times if t is not None]
        since = max(known) if known else None
        age = ctx.now - since if since else None
        text = f"{pool.driver}/{pool.pool} ({pool.state}{f' for {duration(age)}' if age else ''}: {pool.reason})"
        (fresh if age is not None and age < STUCK_AFTER else stuck).append(text)
    if not stuck and not fresh:
        return Finding(OK, "every pool has all the slices of its newest generation")
    objects = stuck + fresh
    driver = objects[0].split("/", 1)[0]
    if stuck:
        return Finding(PROBLEM, f"{plural(len(objects), 'pool')} incomplete or being replaced, {len(stuck)} for more "
                       f"than {duration(STUCK_AFTER)}: the scheduler allocates none of their devices", objects,
                       f"kubectl dra pools --driver {driver} -o wide")
    return Finding(WARNING, f"{plural(len(fresh), 'pool')} being written by a driver right now", objects,
                   f"kubectl dra pools --driver {driver} -o wide")


def invalid_pools(ctx: Context) -> Finding:
    invalid = [f"{p.driver}/{p.pool} ({p.reason})" for p in ctx.model.pools if p.state == INVALID]
    if not invalid:
        return Finding(OK, "no pool is invalid (duplicate devices, mixed slice counts)")
    return Finding(PROBLEM, f"{plural(len(invalid), 'pool')} invalid: no device of it can be allocated", invalid,
                   f"kubectl dra pools --driver {invalid[0].split('/', 1)[0]} -o wide")


def slices_on_missing_nodes(ctx: Context) -> Finding:
    missing = ctx.model.missing_nodes
    if not missing:
        if not ctx.model.raw.get("Node") and ctx.model.connection.mode not in ("live", "reconnecting"):
            return Finding(OK, "the file holds no Nodes: slices were not checked against them")
        return Finding(OK, "every node-local pool's node exists")
    objects = [f"{driver}/{pool} ({missing_nodes_words.hint(nodes)})" for (driver, pool), nodes in sorted(missing.items())]
    return Finding(PROBLEM, f"{plural(len(objects), 'pool')} published for a node that does not exist: stale slices "
                   f"the driver or the node's deletion left behind", objects, "kubectl dra slices -o wide")


def nodes_without_devices(ctx: Context) -> Finding:
    """Nodes labelled like a driver's nodes, yet publishing none of its devices (model.coverage)."""
    if len(nodes_by_name(ctx.model)) < 2:
        return Finding(OK, "fewer than two nodes: nothing to compare")
    lacking = [f"node/{name} (no {driver} devices; has {example})"
               for driver, name, example in nodes_lacking_driver(ctx.model)]
    if not lacking:
        return Finding(OK, "nodes labelled like a driver's nodes publish its devices")
    return Finding(WARNING, f"{plural(len(lacking), 'node')} labelled like a driver's nodes publish none of its "
                   f"devices: is the driver's pod running there?", lacking,
                   f"kubectl get pods -A -o wide --field-selector spec.nodeName={lacking[0].split('/')[1].split()[0]}")


_REFERENCE = re.compile(r"device\.(attributes|capacity)\[\s*['\"]([^'\"]+)['\"]\s*\]\s*(?:\.\s*([A-Za-z_]\w*)|"
                        r"\[\s*['\"]([^'\"]+)['\"]\s*\])")
_GUARD = re.compile(r"['\"]([^'\"]+)['\"]\s+in\s+device\.(attributes|capacity)\[\s*['\"]([^'\"]+)['\"]\s*\]")


def selector_references(expression: str) -> set[tuple[str, str, str]]:
    """(attributes|capacity, domain, name) an expression reads without first testing `'name' in
    device.attributes['domain']`."""
    guarded = {(m.group(2), m.group(3), m.group(1)) for m in _GUARD.finditer(expression)}
    found = set()
    for match in _REFERENCE.finditer(expression):
        field, domain, name = match.group(1), match.group(2), match.group(3) or match.group(4)
        if (field, domain, name) not in guarded:
            found.add((field, domain, name))
    return found


def _selectors(spec: dict) -> list[str]:
    return [s["cel"]["expression"] for s in spec.get("selectors") or []
            if isinstance(s, dict) and isinstance((s.get("cel") or {}).get("expression"), str)]


def selector_users(model) -> dict[tuple[str, str, str, str], list[str]]:
    """(field, domain, name, DeviceClass) -> the claims whose request selectors (for a device of
    that class) read it. Class selectors are left to classes.selector-errors: a missing key there
    is a CEL runtime error, which the class membership counts."""
    users: dict[tuple[str, str, str, str], list[str]] = {}
    for (namespace, name), claim in sorted(model.objects.claims.items()):
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
            for exact in [request.get("exactly") or {}, *(request.get("firstAvailable") or [])]:
                class_name = exact.get("deviceClassName")
                if not class_name:
                    continue
                for expression in _selectors(exact):
                    for field, domain, attribute in selector_references(expression):
                        entry = users.setdefault((field, domain, attribute, class_name), [])
                        who = f"resourceclaim/{namespace}/{name}"
                        if who not in entry:
                            entry.append(who)
    return users


def missing_attributes(ctx: Context) -> Finding:
    """Devices of a class a claim asks for that lack an attribute or capacity the claim's selectors
    read (of the driver the attribute's domain names): the selector fails on them at run time."""
    model = ctx.model
    lacking = []
    for (field, domain, name, class_name), users in sorted(selector_users(model).items()):
        devices = [d for d in model.reports_of(sorted(model.classes.of(class_name))) if d.driver == domain]
        if not devices:
            continue
        key = f"{domain}/{name}"
        missing = [d for d in devices if not d.publishes(field, key)]
        if missing:
            word = "attribute" if field == "attributes" else "capacity"
            lacking.append(f"{key}: {plural(len(missing), 'device')} of class {class_name} ({len(devices)}) lack this "
                           f"{word} (e.g. {missing[0].pool}/{missing[0].name}), read by {', '.join(users[:2])}"
                           f"{f' and {len(users) - 2} more' if len(users) > 2 else ''}")
    if not lacking:
        return Finding(OK, "devices have every attribute and capacity the claims' selectors read")
    return Finding(WARNING, f"{plural(len(lacking), 'attribute')} that claims' selectors read missing on devices of "
                   f"their class: the selector fails on those devices at run time", lacking,
                   "kubectl dra devices -o yaml")


def stale_pools(ctx: Context) -> Finding:
    """Node-local pools on a node that is NotReady: its kubelet, and the driver's plugin there, stopped
    reporting, so the pool says what the driver last saw."""
    model = ctx.model
    nodes = nodes_by_name(model)
    stale = []
    for pool in model.pools:
        scope = pool.node_scope
        if scope.kind != "node" or scope.node_name not in nodes:
            continue
        trouble = node_trouble(nodes[scope.node_name])
        if trouble and "NotReady" in trouble:
            stale.append(f"{pool.driver}/{pool.pool} (node/{scope.node_name} {trouble})")
    if not stale:
        return Finding(OK, "every node-local pool is on a Ready node")
    return Finding(WARNING, f"{plural(len(stale), 'pool')} on nodes that stopped reporting: the driver no longer updates "
                   f"them and their devices may be gone", stale, "kubectl get nodes")


CHECKS = [
    Check("api.versions", "resource.k8s.io versions served", "kubectl dra reads the newest served version; a kind "
          "that is not served or not readable hides what depends on it", (), api_versions),
    Check("api.rules", "allocator rules and DRA features in use", "kubectl dra judges with the allocator of one minor; "
          "objects using a feature that minor turns off are ignored by the scheduler", (), api_features),
    Check("api.kubelet-skew", "kubelets of nodes with DRA devices", "a kubelet outside the supported skew, or older "
          "than 1.34, cannot talk to the drivers' v1 plugin API: pods stay in ContainerCreating",
          ("Node", "ResourceSlice"), kubelet_skew),
    Check("drivers.coverage", "drivers, pools and nodes covered", "a driver that publishes nothing, or for fewer "
          "nodes than expected, leaves pods pending with no hint in the pod", ("ResourceSlice", "Node"),
          driver_coverage),
    Check("drivers.incomplete-pools", "incomplete and being-replaced pools", "the scheduler allocates nothing from a "
          "pool until every slice of its newest generation is published", ("ResourceSlice",), incomplete_pools),
    Check("drivers.invalid-pools", "invalid pools", "a pool with duplicate devices or inconsistent slice counts never "
          "converges: none of its devices can be allocated", ("ResourceSlice",), invalid_pools),
    Check("drivers.missing-nodes", "slices for nodes that do not exist", "no pod can be placed on a node that is not "
          "a Node object, so these devices look free but can never be used", ("ResourceSlice", "Node"),
          slices_on_missing_nodes),
    Check("drivers.nodes-without-devices", "nodes that should publish devices", "a node labelled like the driver's "
          "other nodes (e.g. by GPU feature discovery) that publishes nothing usually lacks a running driver",
          ("ResourceSlice", "Node"), nodes_without_devices),
    Check("drivers.missing-attributes", "attributes and capacities selectors read", "a selector reading an attribute "
          "a device lacks fails at run time or never matches: claims stay pending on that hardware",
          ("ResourceSlice", "DeviceClass", "ResourceClaim"), missing_attributes),
    Check("failure.stale-pools", "pools a driver stopped updating", "a pool on a node whose kubelet stopped reporting "
          "shows what the driver last saw, not the hardware now", ("ResourceSlice", "Node"), stale_pools),
]
