"""Classes; claims and pods; sharing and capacity; failure detection."""

from __future__ import annotations

import json

from allocator import QuantityError, parse_quantity
from kubectl_dra import scheduling
from kubectl_dra.doctor.common import meta, nodes_by_name, plural
from kubectl_dra.doctor.quota import quotas_near_limit
from kubectl_dra.doctor.report import OK, PROBLEM, WARNING, Check, Context, Finding
from kubectl_dra.model.claims import LEAK_OWNER_DELETED, LEAK_POD_DELETED, asks_admin_access, claim_leaks
from kubectl_dra.model.health import HEALTH_INPUTS, UNHEALTHY, unwell_of
from kubectl_dra.model.nodes import node_trouble
from kubectl_dra.model.states import BLOCKED_BY_COUNTERS, FREE, SHARED
from kubectl_dra.scheduling.blocker import EXPLAIN_ERROR, QUOTA_EXCEEDED
from kubectl_dra.scheduling.extended import backed_resources, classes_by_resource, pending_dra_pods
from kubectl_dra.scheduling.quota import quota_uses, refusing_quota

ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
"""The namespace label the API server requires of claims asking for admin access (KEP-5018)."""
NEAR_FULL = 0.9
"""Consumable capacity this used (or more) is near exhaustion."""
EXPLAINED_SHAPES = 3
"""Kinds of pending pod (see _shape) explained; the rest are counted. Each explanation judges every
node with the allocator: seconds on a cluster of thousands of nodes."""


# --- classes ------------------------------------------------------------------------------------

def classes_without_devices(ctx: Context) -> Finding:
    members = ctx.model.classes.members
    empty = [f"deviceclass/{name}" for name, ids in sorted(members.items()) if not ids]
    if not members:
        return Finding(OK, "no DeviceClasses")
    if not empty:
        return Finding(OK, f"{plural(len(members), 'DeviceClass', 'DeviceClasses')}, each selecting some device")
    return Finding(WARNING, f"{plural(len(empty), 'DeviceClass', 'DeviceClasses')} select no device at all: claims "
                   f"of these classes can never be allocated", empty, f"kubectl get {empty[0]} -o yaml")


def class_selector_errors(ctx: Context) -> Finding:
    errors = ctx.model.classes.errors
    if not errors:
        return Finding(OK, "every class selector evaluates on every device")
    objects = [error.split(":", 1)[0].lower() + " (" + error.split(":", 1)[1].strip() + ")" for error in errors]
    return Finding(WARNING, f"{plural(len(errors), 'DeviceClass', 'DeviceClasses')} with selectors that fail at run "
                   f"time: a failing selector rejects the device and the claim's whole allocation attempt",
                   objects, f"kubectl get {objects[0].split()[0]} -o yaml")


def extended_resource_conflicts(ctx: Context) -> Finding:
    classes = ctx.model.objects.device_classes
    by_resource: dict[str, list[str]] = {}
    for name, klass in sorted(classes.items()):
        resource = (klass.get("spec") or {}).get("extendedResourceName")
        if resource:
            by_resource.setdefault(resource, []).append(name)
    chosen = classes_by_resource(classes)
    conflicts = [f"{resource}: deviceclass/{', deviceclass/'.join(names)} (the scheduler uses {chosen.get(resource)})"
                 for resource, names in sorted(by_resource.items()) if len(names) > 1]
    if not by_resource:
        return Finding(OK, "no DeviceClass names an extended resource")
    if not conflicts:
        return Finding(OK, f"{plural(len(by_resource), 'extended resource name')} each backed by one class")
    return Finding(PROBLEM, f"{plural(len(conflicts), 'extended resource name')} claimed by several DeviceClasses: "
                   f"pods asking for it get only the newest class's devices", conflicts, "kubectl get deviceclasses -o "
                   "custom-columns=NAME:.metadata.name,EXTENDED:.spec.extendedResourceName")


# --- claims and pods ----------------------------------------------------------------------------

def _pending_dra_pods(model) -> list[dict]:
    backed = backed_resources(model.objects.device_classes, model.features)
    pods = pending_dra_pods(model.raw.get("Pod", ()), backed)
    return sorted(pods, key=lambda p: (meta(p).get("namespace") or "", meta(p).get("name") or ""))


def _shape(pod: dict, model) -> str:
    """What the scheduler's verdict on a pod depends on besides the cluster: its placement rules,
    requests and claims (the claims' and templates' specs, and whether each is allocated). Pods
    of one shape (the replicas of a workload) get the same verdict, so one explanation serves all."""
    spec = pod.get("spec") or {}
    namespace = meta(pod).get("namespace")
    generated = {e.get("name"): e.get("resourceClaimName")
                 for e in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    claims = []
    for entry in spec.get("resourceClaims") or []:
        name = entry.get("resourceClaimName") or generated.get(entry.get("name"))
        claim = model.objects.claims.get((namespace, name)) if name else None
        if claim is not None:
            claims.append([claim.get("spec"), bool((claim.get("status") or {}).get("allocation"))])
        else:
            template = model.objects.claim_templates.get((namespace, entry.get("resourceClaimTemplateName")))
            claims.append([((template or {}).get("spec") or {}).get("spec"), entry.get("resourceClaimTemplateName")])
    placement = {k: spec.get(k) for k in ("nodeSelector", "affinity", "tolerations", "overhead", "priority",
                                          "schedulingGates")}
    containers = [c.get("resources") for key in ("initContainers", "containers") for c in spec.get(key) or []]
    return json.dumps([placement, containers, claims], sort_keys=True, default=str)


def pending_pods(ctx: Context) -> Finding:
    model = ctx.model
    pods = _pending_dra_pods(model)
    if not pods:
        return Finding(OK, "no pending pod uses DRA")
    objs = model.all_objects()
    quotas = quota_uses(model.raw.get("ResourceQuota", ()), model.objects.device_classes)
    by_shape: dict[str, tuple[str, str]] = {}
    causes: dict[str, list[str]] = {}
    tally: dict[str, int] = {}
    unexplained = []
    for pod in pods:
        namespace, name = meta(pod).get("namespace") or "", meta(pod).get("name") or ""
        refused = _refused_template_claim(pod, model, quotas) if quotas else None
        if refused:
            causes.setdefault(refused, []).append(f"pod/{namespace}/{name}")
            tally[QUOTA_EXCEEDED] = tally.get(QUOTA_EXCEEDED, 0) + 1
            continue
        shape = _shape(pod, model)
        cause = by_shape.get(shape)
        if cause is None and len(by_shape) >= EXPLAINED_SHAPES:
            unexplained.append(f"pod/{namespace}/{name}")
            tally[NOT_EXPLAINED_HERE] = tally.get(NOT_EXPLAINED_HERE, 0) + 1
            continue
        if cause is None:
            cause = by_shape[shape] = _blocker(objs, namespace, name, model.features)
        word, text = cause
        causes.setdefault(text, []).append(f"pod/{namespace}/{name}")
        tally[word] = tally.get(word, 0) + 1
    groups = sorted(causes.items(), key=lambda item: (-len(item[1]), item[0]))
    details = [f"{len(refs)} × {cause}" for cause, refs in groups]
    if unexplained:
        details.append(f"{len(unexplained)} × not explained here (more than {EXPLAINED_SHAPES} kinds of pod): "
                       f"kubectl dra explain pod/NAME")
    nowhere = sum(len(refs) for cause, refs in groups if not cause.startswith(FITS_NOW))
    ordered = [ref for _, refs in groups for ref in refs] + unexplained
    stuck = next((refs[0] for cause, refs in groups if not cause.startswith(FITS_NOW)), ordered[0]).split("/")
    fitting = f"{nowhere} fitting no node now" if nowhere else "each fitting some node now"
    return Finding(WARNING, f"{plural(len(pods), 'pending pod')} with claims, {fitting}",
                   ordered, f"kubectl dra explain pod/{stuck[2]} -n {stuck[1]}", details, tally)


FITS_NOW = "fits now: waiting for the scheduler to retry"
NOT_EXPLAINED_HERE = "NotExplained"
"""The tally's word for pods past the kinds of pod doctor explains (EXPLAINED_SHAPES)."""


def _refused_template_claim(pod: dict, model, quotas) -> str | None:
    """Why a pod's claim from a template is not there yet, when a ResourceQuota of its namespace
    refuses it: the resourceclaim controller cannot create it, so the pod waits with no claim
    (the scheduler's own explanation would only see a claim still to be created)."""
    namespace = meta(pod).get("namespace") or ""
    created = {e.get("name") for e in (pod.get("status") or {}).get("resourceClaimStatuses") or []
               if e.get("resourceClaimName")}
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        template_name = entry.get("resourceClaimTemplateName")
        if not template_name or entry.get("name") in created:
            continue
        template = model.objects.claim_templates.get((namespace, template_name))
        use = refusing_quota(namespace, ((template or {}).get("spec") or {}).get("spec") or {}, quotas)
        if use is not None:
            limit = "its usage not computed" if use.used is None else f"{use.used} of {use.hard} used"
            return (f"claim from template {template_name} refused by resourcequota/{namespace}/{use.quota} "
                    f"({use.resource}: {limit})")
    return None


def _blocker(objs, namespace: str, name: str, features) -> tuple[str, str]:
    """The pod's blocker (kubectl_dra.scheduling.blocker): the word the exporter labels it with,
    and the cause in words."""
    from kubectl_dra.scheduling.blocker import WAITING_FOR_SCHEDULER, blocker_of

    try:
        exp = scheduling.explain_pod(objs, namespace, name, features, remedies=False)
    except scheduling.ExplainError as error:
        return EXPLAIN_ERROR, f"cannot explain: {error}"
    blocker = blocker_of(exp)
    if blocker.reason == WAITING_FOR_SCHEDULER:
        return blocker.reason, FITS_NOW
    return blocker.reason, f"{blocker.reason}: {blocker.text()}"


def leaked_claims(ctx: Context) -> Finding:
    """Allocated claims reserved for pods that no longer exist, and generated claims whose pod is gone."""
    model = ctx.model
    if not model.raw.get("Pod") and model.connection.mode not in ("live", "reconnecting"):
        return Finding(OK, "the file holds no Pods: reservations were not checked against them")
    leaked, idle = [], []
    for claim, reason, pod in claim_leaks(model):
        ref = f"resourceclaim/{meta(claim).get('namespace')}/{meta(claim).get('name')}"
        if reason == LEAK_POD_DELETED:
            leaked.append(f"{ref} (reserved for deleted pod/{pod})")
        elif reason == LEAK_OWNER_DELETED:
            leaked.append(f"{ref} (its pod/{pod} is deleted)")
        else:
            idle.append(f"{ref} (allocated, reserved for nobody)")
    if leaked:
        first = leaked[0].split()[0].split("/")
        return Finding(PROBLEM, f"{plural(len(leaked), 'claim')} hold devices for pods that no longer exist: "
                       f"those devices are leaked until the claims are deallocated", leaked + idle,
                       f"kubectl describe resourceclaim {first[2]} -n {first[1]}")
    if idle:
        first = idle[0].split()[0].split("/")
        return Finding(WARNING, f"{plural(len(idle), 'claim')} allocated but reserved for no pod: their devices are "
                       f"held by nobody", idle, f"kubectl describe resourceclaim {first[2]} -n {first[1]}")
    return Finding(OK, "every allocated claim is reserved for a pod that exists")


def _allocation_node(claim: dict, pods: dict) -> str | None:
    metadata, status = meta(claim), claim.get("status") or {}
    for entry in status.get("reservedFor") or []:
        pod = pods.get((metadata.get("namespace"), entry.get("name")))
        node = ((pod or {}).get("spec") or {}).get("nodeName")
        if node:
            return node
    selector = (status.get("allocation") or {}).get("nodeSelector") or {}
    for term in selector.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and len(field.get("values") or []) == 1:
                return field["values"][0]
    return None


def claims_on_unready_nodes(ctx: Context) -> Finding:
    model = ctx.model
    nodes = nodes_by_name(model)
    pods = {(meta(p).get("namespace"), meta(p).get("name")): p for p in model.raw.get("Pod", ())}
    found = []
    for claim in model.raw.get("ResourceClaim", ()):
        if not (claim.get("status") or {}).get("allocation"):
            continue
        node = _allocation_node(claim, pods)
        if node is None or node not in nodes:
            continue
        trouble = node_trouble(nodes[node])
        if trouble:
            found.append(f"resourceclaim/{meta(claim).get('namespace')}/{meta(claim).get('name')} (node/{node} {trouble})")
    if not found:
        return Finding(OK, "no allocated claim is on a NotReady or cordoned node")
    return Finding(WARNING, f"{plural(len(found), 'claim')} allocated on NotReady or cordoned nodes: their pods may not "
                   f"run, and their devices stay held", found, "kubectl get nodes")


def admin_access_namespaces(ctx: Context) -> Finding:
    model = ctx.model
    labelled = {meta(ns).get("name"): (meta(ns).get("labels") or {}).get(ADMIN_ACCESS_LABEL) == "true"
                for ns in model.raw.get("Namespace", ())}
    found = []
    # The normalised objects: a v1beta1 request carries adminAccess flat, v1 and v1beta2 under `exactly`.
    objects = model.objects
    specs = [("resourceclaim", key, obj.get("spec") or {}) for key, obj in objects.claims.items()]
    specs += [("resourceclaimtemplate", key, (obj.get("spec") or {}).get("spec") or {})
              for key, obj in objects.claim_templates.items()]
    for kind, (namespace, name), spec in specs:
        if asks_admin_access(spec) and namespace in labelled and not labelled[namespace]:
            found.append(f"{kind}/{namespace}/{name}")
    if not found:
        return Finding(OK, f"admin-access claims only in namespaces labelled {ADMIN_ACCESS_LABEL}=true")
    namespace = found[0].split("/")[1]
    return Finding(PROBLEM, f"admin access asked for in namespaces without the {ADMIN_ACCESS_LABEL}=true label "
                   f"({plural(len(found), 'claim or template', 'claims or templates')}): the API server rejects them",
                   found,
                   f"kubectl label namespace {namespace} {ADMIN_ACCESS_LABEL}=true")


# --- sharing and capacity -----------------------------------------------------------------------

def _ratio(consumed, total) -> float | None:
    try:
        whole = parse_quantity(total).amount
        used = parse_quantity(consumed).amount
    except QuantityError:
        return None
    return float(used / whole) if whole > 0 else None


def capacity_exhaustion(ctx: Context) -> Finding:
    model = ctx.model
    found = []
    # Counter sets: exhausted when no device drawing on them is free and some are blocked by them.
    by_set: dict[tuple[str, str, str], list[str]] = {}
    for pool in model.pools:
        if not pool.counter_sets:
            continue
        for device in pool.devices:
            state = model.device_state(device)
            for counter_set in device.counter_sets_drawn():
                key = (pool.driver, pool.pool, counter_set)
                by_set.setdefault(key, []).append(state)
    for (driver, pool_name, counter_set), states in sorted(by_set.items()):
        if FREE not in states and BLOCKED_BY_COUNTERS in states:
            found.append(f"{driver}/{pool_name} counter set {counter_set} (no device left: "
                         f"{states.count(BLOCKED_BY_COUNTERS)} blocked by counters)")
    # Consumable capacity of shared devices.
    for device in model.devices:
        if not device.allow_multiple_allocations or not device.consumed_capacity:
            continue
        for name, consumed in sorted(device.consumed_capacity.items()):
            value = (device.capacity.get(name) or {}).get("value") if isinstance(device.capacity.get(name), dict) \
                else device.capacity.get(name)
            ratio = _ratio(consumed, value) if value is not None else None
            if ratio is not None and ratio >= NEAR_FULL:
                found.append(f"{device.driver}/{device.pool}/{device.name} {name.rsplit('/', 1)[-1]} "
                             f"{round(ratio * 100)}% used ({consumed} of {value})")
    if not found:
        return Finding(OK, "no counter set or consumable capacity is near exhaustion")
    return Finding(WARNING, f"{plural(len(found), 'counter set or shared capacity', 'counter sets or shared capacities')} "
                   f"near exhaustion: new claims for them will not fit", found, "kubectl dra devices -o wide")


def classes_exhausted(ctx: Context) -> Finding:
    model = ctx.model
    full = []
    for name, ids in sorted(model.classes.members.items()):
        if not ids:
            continue  # classes.no-devices says so
        states = [model.device_state(device) for device in model.reports_of(ids)]
        if states and not any(state in (FREE, SHARED) for state in states):
            full.append(f"deviceclass/{name} (0 free of {len(states)})")
    if not full:
        return Finding(OK, "every DeviceClass with devices has a free one")
    return Finding(WARNING, f"{plural(len(full), 'DeviceClass', 'DeviceClasses')} with no free device left: new claims "
                   f"of these classes stay pending", full, "kubectl dra devices -o wide")


# --- failure detection --------------------------------------------------------------------------

def taints_in_effect(ctx: Context) -> Finding:
    groups = ctx.model.taints
    if not groups:
        return Finding(OK, "no device taints or DeviceTaintRules")
    objects, evicting, unmatched = [], [], []
    for group in groups:
        affected = [f"{c.ref}" for c in group.claims if not c.tolerated]
        text = f"{group.source.lower()} {group.key}={group.value}:{group.effect} on {plural(len(group.devices), 'device')}"
        if group.effect == "NoExecute" and affected:
            pods = [p for c in group.claims if not c.tolerated for p in (f"{ns}/{name}" for ns, name in c.pods)]
            text += f", evicts {plural(len(pods), 'pod')}: {', '.join(pods[:3])}"
            evicting.append(text)
        elif group.source_kind == "DeviceTaintRule" and not group.devices:
            text += " (matches no device: check its selector)"
            unmatched.append(text)
        objects.append(text)
    devices = {d.id for g in groups for d in g.devices}
    message = f"{plural(len(groups), 'taint')} on {plural(len(devices), 'device')} in effect"
    if evicting:
        message += f"; {len(evicting)} NoExecute evicting pods"
    return Finding(WARNING, message, evicting + [o for o in objects if o not in evicting], "kubectl dra taints -o wide")


def unhealthy(ctx: Context) -> Finding:
    unwell = unwell_of(ctx.model.device_health)
    if not unwell:
        return Finding(OK, "no device reported Unhealthy or Unknown by kubelets, drivers or node mode")
    objects = []
    for entry in unwell:
        report = entry.reports[0]
        note = f": {report.message}" if report.message else ""
        objects.append(f"{'/'.join(entry.device)} ({entry.health} per {report.object_ref}{note})")
    bad = sum(1 for entry in unwell if entry.health == UNHEALTHY)
    first = unwell[0].reports[0]
    if first.source == "slice":
        next_command = f"kubectl describe resourceslice {first.name}"
    else:
        kind = "pod" if first.source == "pod" else "claim"
        next_command = f"kubectl describe {kind} {first.name} -n {first.namespace}"
    if bad:
        return Finding(PROBLEM, f"{plural(bad, 'device')} reported Unhealthy"
                       f"{f', {len(unwell) - bad} Unknown' if len(unwell) > bad else ''}: the pods using them may fail",
                       objects, next_command)
    return Finding(WARNING, f"{plural(len(unwell), 'device')} of unknown health (a plugin stopped reporting)",
                   objects, next_command)


CLAIMS_CHECKS = [
    Check("classes.no-devices", "DeviceClasses that select no device", "a claim of a class that selects no device "
          "stays pending forever", ("DeviceClass", "ResourceSlice"), classes_without_devices),
    Check("classes.selector-errors", "class selectors that fail at run time", "a CEL error on a device (a missing "
          "attribute, a type mismatch) makes the scheduler skip it and report the error on every pod",
          ("DeviceClass", "ResourceSlice"), class_selector_errors),
    Check("classes.extended-resource", "classes sharing an extendedResourceName", "when two classes back one extended "
          "resource, pods asking for it get only one class's devices", ("DeviceClass",), extended_resource_conflicts),
    Check("claims.pending-pods", "pending pods with claims, by blocker", "pods waiting on devices; the blocker (the "
          "cause whose removal lets the pod fit, the exporter's reason label) says what to fix first",
          ("Pod", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice",
                                            "DeviceClass", "Node"), pending_pods),
    Check("claims.leaked", "claims holding devices for nobody", "an allocated claim whose pod is gone keeps its "
          "devices from every other pod", ("ResourceClaim", "Pod"), leaked_claims),
    Check("claims.unready-nodes", "claims allocated on NotReady or cordoned nodes", "devices on a node that cannot run "
          "pods are held but do no work", ("ResourceClaim", "Node", "Pod"), claims_on_unready_nodes),
    Check("claims.admin-access", "admin-access claims outside admin namespaces", "the API server refuses admin access "
          f"in a namespace without the {ADMIN_ACCESS_LABEL}=true label",
          ("ResourceClaim", "ResourceClaimTemplate", "Namespace"), admin_access_namespaces),
    Check("claims.quota", "ResourceQuotas on device classes near their limit", "at a quota's limit the API server "
          "refuses new claims of the class in that namespace; pods whose claims come from templates stay Pending "
          "with no claim", ("ResourceQuota",), quotas_near_limit),
    Check("sharing.capacity", "counter sets and consumable capacity near exhaustion", "partitions and shares draw on "
          "one budget: when it runs out, new claims fit nowhere though devices look present",
          ("ResourceSlice", "ResourceClaim"), capacity_exhaustion),
    Check("sharing.classes-full", "classes with no free device left", "new claims of a full class wait until a "
          "device is released", ("DeviceClass", "ResourceSlice", "ResourceClaim"), classes_exhausted),
    Check("failure.taints", "device taints and DeviceTaintRules in effect", "tainted devices are not allocated; "
          "NoExecute taints evict the pods using them", ("ResourceSlice", "ResourceClaim"), taints_in_effect),
    Check("failure.unhealthy-devices", "devices reported unhealthy", "kubelets (allocatedResourcesStatus), drivers "
          "(claim device conditions) and node mode (NVML's verdict in its slices) report failing hardware before "
          "pods crash", HEALTH_INPUTS, unhealthy),
]
