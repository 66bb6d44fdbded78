"""The volume filter plugins of the default profile (plugins/volumebinding, volumezone,
volumerestrictions, nodevolumelimits): each rule with the scheduler's reasons and codes, driven
directly and through explain, over real PVC, PV, StorageClass and CSI objects."""

from __future__ import annotations

import pytest

import allocator
from kubectl_dra.scheduling import framework
from kubectl_dra.scheduling.plugins import (
    node_volume_limits as nvl,
    volume_binding as vb,
    volume_restrictions as vr,
    volume_zone as vz,
)
from kubectl_dra.scheduling.status import Code, Status

from .objects import FEATURES, explain, node, pod, recorded

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
HOST = "kubernetes.io/hostname"
CSI = "ebs.csi.example.com"


# ---------------------------------------------------------------------------- objects


def pvc(name: str, *, namespace: str = "default", storage_class: str | None = "standard", size: str = "10Gi",
        volume_name: str | None = None, bound: bool = False, modes=("ReadWriteOnce",), annotations=None,
        phase: str | None = None, owner_pod: str | None = None, **extra) -> dict:
    """A PersistentVolumeClaim; `bound`: fully bound to `volume_name` (status Bound and the
    bind-completed annotation the PV controller sets)."""
    meta = {"name": name, "namespace": namespace, "uid": f"uid-pvc-{name}"}
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    if ann:
        meta["annotations"] = ann
    if owner_pod:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner_pod, "uid": f"uid-{owner_pod}",
                                    "controller": True, "blockOwnerDeletion": True}]
    spec = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}, "volumeMode": "Filesystem",
            **extra}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if volume_name:
        spec["volumeName"] = volume_name
    status = {"phase": phase or ("Bound" if bound else "Pending")}
    if bound:
        status.update(accessModes=list(modes), capacity={"storage": size})
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec, "status": status}


def pv(name: str, *, storage_class: str = "standard", size: str = "10Gi", modes=("ReadWriteOnce",),
       claim: str | None = None, phase: str | None = None, hosts: list[str] | None = None,
       labels: dict | None = None, csi_driver: str | None = None, **extra) -> dict:
    """A PersistentVolume (local, or CSI with `csi_driver`); `hosts`: node affinity on the hostname
    label; `claim`: claimRef to default/<claim>."""
    spec = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": storage_class,
            "persistentVolumeReclaimPolicy": "Delete", "volumeMode": "Filesystem", **extra}
    if csi_driver:
        spec["csi"] = {"driver": csi_driver, "volumeHandle": f"vol-{name}"}
    elif "local" not in extra and not any(k in extra for k in ("gcePersistentDisk", "awsElasticBlockStore")):
        spec["local"] = {"path": f"/mnt/disks/{name}"}
    if hosts is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": HOST, "operator": "In", "values": list(hosts)}]}]}}
    if claim:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": claim,
                            "uid": f"uid-pvc-{claim}", "apiVersion": "v1"}
    meta = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec,
            "status": {"phase": phase or ("Bound" if claim else "Available")}}


def storage_class(name: str = "standard", *, mode: str = "WaitForFirstConsumer", provisioner: str = CSI,
                  topologies: list[dict] | None = None) -> dict:
    data = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "reclaimPolicy": "Delete", "volumeBindingMode": mode}
    if topologies is not None:
        data["allowedTopologies"] = [{"matchLabelExpressions": [{"key": k, "values": list(v)}]}
                                     for term in topologies for k, v in term.items()]
    return data


def csi_driver(name: str = CSI, *, storage_capacity: bool = False, **spec) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name},
            "spec": {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": storage_capacity,
                     "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"], **spec}}


def capacity(name: str, *, zone: str, size: str | None = None, maximum: str | None = None,
             storage_class_name: str = "standard") -> dict:
    data = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
            "metadata": {"name": name, "namespace": "kube-system"},
            "nodeTopology": {"matchLabels": {ZONE: zone}}, "storageClassName": storage_class_name}
    if size is not None:
        data["capacity"] = size
    if maximum is not None:
        data["maximumVolumeSize"] = maximum
    return data


def uses_pvc(*names: str) -> list[dict]:
    return [{"name": f"vol-{n}", "persistentVolumeClaim": {"claimName": n}} for n in names]


def ephemeral(volume: str = "scratch") -> list[dict]:
    return [{"name": volume, "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
        "resources": {"requests": {"storage": "1Gi"}}}}}}]


def zoned(**members: str) -> list[dict]:
    return [node(name, labels={ZONE: zone}) for name, zone in members.items()]


def cycle_for(objects: list[dict], features=FEATURES):
    objs = allocator.load_objects(objects)
    return framework.new_cycle(objs.pods[("default", "p")], objs, features)


def run(plugin, objects: list[dict], features=FEATURES):
    """(PreFilter status, {node: Filter status}) of `plugin` alone."""
    cycle = cycle_for(objects, features)
    _, status = plugin.pre_filter(cycle)
    if status.code != Code.SUCCESS:
        return status, {}
    return status, {name: plugin.filter(cycle, info) for name, info in sorted(cycle.node_infos.items())}


def verdicts(statuses: dict) -> dict:
    return {name: (s.code, s.reasons) for name, s in statuses.items()}


OK = (Code.SUCCESS, ())


# ============================================================================ VolumeBinding
# ---------------------------------------------------------------------------- PreFilter

BIND = vb.ERR_REASON_BIND_CONFLICT
NODE_CONFLICT = vb.ERR_REASON_NODE_CONFLICT
SPACE = vb.ERR_REASON_NOT_ENOUGH_SPACE
PV_MISSING = vb.ERR_REASON_PV_NOT_EXIST
IMMEDIATE = vb.ERR_REASON_UNBOUND_IMMEDIATE


def test_binding_reasons_are_upstreams():
    assert BIND == "node(s) didn't find available persistent volumes to bind"
    assert NODE_CONFLICT == "node(s) didn't match PersistentVolume's node affinity"
    assert SPACE == "node(s) did not have enough free storage"
    assert PV_MISSING == "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
    assert IMMEDIATE == "pod has unbound immediate PersistentVolumeClaims"


def test_binding_skips_a_pod_without_claims():
    p = pod("p", volumes=[{"name": "tmp", "emptyDir": {}}])
    status, _ = run(vb, [node("a"), p])
    assert status.code == Code.SKIP


def test_binding_rejects_every_node_for_a_claim_that_does_not_exist():
    status, _ = run(vb, [node("a"), pod("p", volumes=uses_pvc("data"))])
    assert (status.code, status.reasons) == (Code.UNRESOLVABLE, ('persistentvolumeclaim "data" not found',))


def test_binding_waits_for_the_ephemeral_volume_controller():
    status, _ = run(vb, [node("a"), pod("p", volumes=ephemeral())])
    assert (status.code, status.reasons) == (
        Code.UNRESOLVABLE, ('waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"',))


def test_binding_refuses_an_ephemeral_claim_the_pod_does_not_own():
    status, _ = run(vb, [node("a"), storage_class(), pvc("p-scratch", owner_pod="other"),
                         pod("p", volumes=ephemeral())])
    assert (status.code, status.reasons) == (
        Code.UNRESOLVABLE, ("PVC default/p-scratch was not created for pod default/p (pod is not owner)",))


def test_binding_takes_an_ephemeral_claim_the_pod_owns():
    status, statuses = run(vb, [node("a"), storage_class(), pvc("p-scratch", owner_pod="p", size="1Gi"),
                                pod("p", volumes=ephemeral())])
    assert status.code == Code.SUCCESS and verdicts(statuses) == {"a": OK}


def test_binding_refuses_a_lost_claim():
    status, _ = run(vb, [node("a"), pvc("data", volume_name="gone", phase="Lost"), pod("p", volumes=uses_pvc("data"))])
    assert status.reasons == ('persistentvolumeclaim "data" bound to non-existent persistentvolume "gone"',)
    assert status.code == Code.UNRESOLVABLE


def test_binding_refuses_a_claim_being_deleted():
    claim = pvc("data")
    claim["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:00Z"
    status, _ = run(vb, [node("a"), storage_class(), claim, pod("p", volumes=uses_pvc("data"))])
    assert (status.code, status.reasons) == (Code.UNRESOLVABLE, ('persistentvolumeclaim "data" is being deleted',))


def test_binding_rejects_an_unbound_claim_of_an_immediate_class():
    status, _ = run(vb, [node("a"), storage_class("fast", mode="Immediate"), pvc("data", storage_class="fast"),
                         pod("p", volumes=uses_pvc("data"))])
    assert (status.code, status.reasons) == (Code.UNRESOLVABLE, (IMMEDIATE,))
    assert status.detail == ("PVC default/data is not bound and its StorageClass fast binds Immediate: "
                             "the PV controller binds it before scheduling")


def test_binding_counts_a_claim_of_a_missing_class_or_none_as_immediate():
    status, _ = run(vb, [node("a"), pvc("a1", storage_class="nowhere"), pvc("a2", storage_class=None),
                         pod("p", volumes=uses_pvc("a1", "a2"))])
    assert status.reasons == (IMMEDIATE,)
    assert "StorageClass nowhere does not exist" in status.detail and "default/a2 has no StorageClass" in status.detail


def test_binding_counts_a_prebound_claim_as_immediate_even_when_its_class_waits():
    status, _ = run(vb, [node("a"), storage_class(), pvc("data", volume_name="pv-1"), pv("pv-1", claim="data"),
                         pod("p", volumes=uses_pvc("data"))])
    assert status.reasons == (IMMEDIATE,)
    assert status.detail == "PVC default/data is prebound to PV pv-1 and not bound yet"


# ---------------------------------------------------------------------------- Filter: bound claims


def test_binding_checks_a_bound_pvs_node_affinity():
    objects = [node("a"), node("b"), storage_class(), pvc("data", volume_name="pv-1", bound=True),
               pv("pv-1", claim="data", hosts=["a"]), pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(vb, objects)
    assert verdicts(statuses) == {"a": OK, "b": (Code.UNRESOLVABLE, (NODE_CONFLICT,))}
    assert statuses["b"].detail == ("PVC default/data is bound to PV pv-1, whose node affinity "
                                    "(kubernetes.io/hostname=a) the node does not match")


def test_binding_never_matches_a_pv_affinity_on_the_node_name_field():
    # volume.CheckNodeAffinity matches a Node made of the labels only: metadata.name is "".
    volume = pv("pv-1", claim="data")
    volume["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}}
    _, statuses = run(vb, [node("a"), pvc("data", volume_name="pv-1", bound=True), volume,
                           pod("p", volumes=uses_pvc("data"))])
    assert verdicts(statuses) == {"a": (Code.UNRESOLVABLE, (NODE_CONFLICT,))}


def test_binding_rejects_a_claim_bound_to_a_pv_that_does_not_exist():
    _, statuses = run(vb, [node("a"), pvc("data", volume_name="gone", bound=True), pod("p", volumes=uses_pvc("data"))])
    assert verdicts(statuses) == {"a": (Code.UNRESOLVABLE, (PV_MISSING,))}
    assert statuses["a"].detail == "PVC default/data is bound to PV gone, which does not exist"


# ---------------------------------------------------------------------------- Filter: WaitForFirstConsumer


def local_setup(*pvs: dict, claim: dict | None = None) -> list[dict]:
    """Nodes a and b, a class that cannot provision, claim `data` (10Gi RWO) and the PVs given."""
    return [node("a"), node("b"), storage_class(provisioner="kubernetes.io/no-provisioner"),
            claim or pvc("data"), *pvs, pod("p", volumes=uses_pvc("data"))]


def test_binding_finds_a_static_pv_whose_node_affinity_matches():
    _, statuses = run(vb, local_setup(pv("pv-a", hosts=["a"])))
    assert verdicts(statuses) == {"a": OK, "b": (Code.UNRESOLVABLE, (BIND,))}
    assert statuses["b"].detail == (
        "PVC default/data: no PV of class standard fits (pv-a: node affinity (kubernetes.io/hostname=a) does not "
        "match), and StorageClass standard (provisioner kubernetes.io/no-provisioner) does not provision")


@pytest.mark.parametrize("volume, why", [
    (pv("pv-a", size="5Gi"), "pv-a: 5Gi < 10Gi requested"),
    (pv("pv-a", modes=("ReadOnlyMany",)), "pv-a: access modes lack ReadWriteOnce"),
    (pv("pv-a", storage_class="other"), None),
    (pv("pv-a", volumeMode="Block"), "pv-a: volumeMode Block, the claim wants Filesystem"),
    (pv("pv-a", claim="someone-else"), "pv-a: claimed by default/someone-else"),
    (pv("pv-a", phase="Released"), "pv-a: phase Released, not Available"),
    (pv("pv-a", labels={"tier": "slow"}), "pv-a: labels do not match the claim's selector tier=fast"),
    (pv("pv-a", volumeAttributesClassName="gold"), "pv-a: volumeAttributesClassName gold"),
])
def test_binding_passes_over_a_pv_that_cannot_bind(volume, why):
    claim = pvc("data", selector={"matchLabels": {"tier": "fast"}}) if "labels" in volume["metadata"] else None
    _, statuses = run(vb, local_setup(volume, claim=claim))
    assert verdicts(statuses) == {"a": (Code.UNRESOLVABLE, (BIND,)), "b": (Code.UNRESOLVABLE, (BIND,))}
    expected = f"no PV of class standard fits ({why})" if why else "no PV of class standard is left to bind"
    assert expected in statuses["a"].detail


def test_binding_takes_a_pv_whose_labels_match_the_claims_selector():
    claim = pvc("data", selector={"matchLabels": {"tier": "fast"}})
    _, statuses = run(vb, local_setup(pv("pv-a", labels={"tier": "fast"}), claim=claim))
    assert verdicts(statuses) == {"a": OK, "b": OK}


def test_binding_gives_each_claim_its_own_pv_smallest_claims_first():
    objects = [node("a"), storage_class(provisioner="kubernetes.io/no-provisioner"), pvc("big", size="20Gi"),
               pvc("small", size="5Gi"), pv("pv-20", size="20Gi"), pv("pv-8", size="8Gi"),
               pod("p", volumes=uses_pvc("big", "small"))]
    cycle = cycle_for(objects)
    vb.pre_filter(cycle)
    assert vb.filter(cycle, cycle.node_infos["a"]).code == Code.SUCCESS
    chosen = {c["metadata"]["name"]: v["metadata"]["name"] for c, v in cycle.state[vb.NAME].by_node["a"].static}
    assert chosen == {"small": "pv-8", "big": "pv-20"}


def test_binding_one_pv_cannot_serve_two_claims():
    objects = [node("a"), storage_class(provisioner="kubernetes.io/no-provisioner"), pvc("one"), pvc("two"),
               pv("pv-a"), pod("p", volumes=uses_pvc("one", "two"))]
    _, statuses = run(vb, objects)
    assert verdicts(statuses) == {"a": (Code.UNRESOLVABLE, (BIND,))}
    assert "pv-a: chosen for another claim of the pod" in statuses["a"].detail


def test_binding_a_pv_reserved_for_the_claim_is_the_only_one_it_may_take():
    reserved = pv("pv-r", claim="data", hosts=["b"], phase="Available")
    _, statuses = run(vb, local_setup(reserved, pv("pv-free")))
    assert verdicts(statuses) == {"a": (Code.UNRESOLVABLE, (BIND,)), "b": OK}
    assert "pv-r: reserved for the claim (claimRef) but its node affinity" in statuses["a"].detail


def test_binding_provisions_where_the_class_allows_the_nodes_topology():
    objects = [*zoned(a="z1", b="z2"), storage_class(topologies=[{ZONE: ["z1"]}]), pvc("data"),
               pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(vb, objects)
    assert verdicts(statuses) == {"a": OK, "b": (Code.UNRESOLVABLE, (BIND,))}
    assert statuses["b"].detail == ("PVC default/data: no PV of class standard is left to bind, and the node is "
                                    f"outside StorageClass standard's allowedTopologies ({ZONE} in (z1))")


def test_binding_a_claim_given_to_another_node_fits_only_there():
    claim = pvc("data", annotations={"volume.kubernetes.io/selected-node": "a"})
    _, statuses = run(vb, [node("a"), node("b"), storage_class(), claim, pod("p", volumes=uses_pvc("data"))])
    assert verdicts(statuses) == {"a": OK, "b": (Code.UNRESOLVABLE, (BIND,))}
    assert statuses["b"].detail == ("PVC default/data is being provisioned for node a "
                                    "(volume.kubernetes.io/selected-node)")


def capacity_setup(*capacities: dict, storage_capacity: bool = True) -> list[dict]:
    return [*zoned(a="z1", b="z2"), storage_class(), csi_driver(storage_capacity=storage_capacity), *capacities,
            pvc("data", size="10Gi"), pod("p", volumes=uses_pvc("data"))]


def test_binding_needs_a_reachable_storage_capacity_that_holds_the_claim():
    _, statuses = run(vb, capacity_setup(capacity("z1-cap", zone="z1", size="100Gi"),
                                         capacity("z2-cap", zone="z2", size="5Gi")))
    assert verdicts(statuses) == {"a": OK, "b": (Code.UNRESOLVABLE, (SPACE,))}
    assert statuses["b"].detail == (
        f"PVC default/data needs 10Gi from CSI driver {CSI} (storageCapacity: true): no CSIStorageCapacity of "
        "class standard holds it, reachable ones are smaller: kube-system/z2-cap 5Gi")


def test_binding_prefers_maximum_volume_size_to_capacity():
    _, statuses = run(vb, capacity_setup(capacity("z1-cap", zone="z1", size="100Gi", maximum="8Gi")))
    assert statuses["a"].reasons == (SPACE,)


def test_binding_a_node_no_capacity_reaches_has_not_enough_storage():
    _, statuses = run(vb, capacity_setup(capacity("z1-cap", zone="z1", size="100Gi")))
    assert statuses["b"].reasons == (SPACE,)
    assert statuses["b"].detail.endswith("none is reachable from the node")


def test_binding_checks_capacity_only_for_drivers_that_opt_in():
    _, statuses = run(vb, capacity_setup(storage_capacity=False))
    assert verdicts(statuses) == {"a": OK, "b": OK}


def test_binding_says_every_reason_that_holds_in_upstreams_order():
    objects = [node("a"), storage_class(provisioner="kubernetes.io/no-provisioner"),
               pvc("bound", volume_name="pv-b", bound=True), pv("pv-b", claim="bound", hosts=["elsewhere"]),
               pvc("data"), pod("p", volumes=uses_pvc("bound", "data"))]
    _, statuses = run(vb, objects)
    assert verdicts(statuses) == {"a": (Code.UNRESOLVABLE, (NODE_CONFLICT, BIND))}


# ---------------------------------------------------------------------------- Score


def scored(objects: list[dict], features=FEATURES) -> tuple[Status, dict]:
    cycle = cycle_for(objects, features)
    vb.pre_filter(cycle)
    infos = [cycle.node_infos[n] for n in sorted(cycle.node_infos)]
    feasible = [info for info in infos if vb.filter(cycle, info).code == Code.SUCCESS]
    status = vb.pre_score(cycle, feasible)
    return status, {info.name: vb.score(cycle, info) for info in feasible}


def test_binding_scores_the_utilisation_of_the_static_pvs_it_would_bind():
    objects = [node("a"), node("b"), storage_class(provisioner="kubernetes.io/no-provisioner"), pvc("data", size="5Gi"),
               pv("pv-a", size="10Gi", hosts=["a"]), pv("pv-b", size="20Gi", hosts=["b"]),
               pod("p", volumes=uses_pvc("data"))]
    status, scores = scored(objects)
    assert status.code == Code.SUCCESS
    assert scores == {"a": 50, "b": 75}   # 100 - 5*100/10, 100 - 5*100/20


def test_binding_scores_the_nodes_storage_capacity_for_volumes_to_provision():
    status, scores = scored(capacity_setup(capacity("z1-cap", zone="z1", size="100Gi"),
                                           capacity("z2-cap", zone="z2", size="40Gi")))
    assert scores == {"a": 90, "b": 75}


def test_binding_scores_a_pod_without_claims_zero():
    status, scores = scored([node("a"), node("b"), pod("p")])
    assert status.code == Code.SUCCESS and scores == {"a": 0, "b": 0}


def test_binding_does_not_score_before_1_37():
    status, _ = scored([node("a"), pod("p")], allocator.Features.for_version(36))
    assert status.code == Code.SKIP
    assert vb.WEIGHT == 1


# ---------------------------------------------------------------------------- through explain


def test_explain_records_volume_binding_and_counts_it():
    objects = [node("a"), node("b"), storage_class(), pvc("data", volume_name="pv-1", bound=True),
               pv("pv-1", claim="data", hosts=["a"]), pod("p", volumes=uses_pvc("data"))]
    exp = explain(objects)
    assert recorded(exp, "a") is None
    assert recorded(exp, "b") == ("VolumeBinding", (NODE_CONFLICT,))


def test_explain_rejects_every_node_for_an_unbound_immediate_claim():
    exp = explain([node("a"), node("b"), storage_class("fast", mode="Immediate"), pvc("data", storage_class="fast"),
                   pod("p", volumes=uses_pvc("data"))])
    # The PreFilter loop ends at VolumeBinding, before DynamicResources' PreFilter writes its state:
    # DynamicResources' PostFilter then fails reading it, and DefaultPreemption never runs.
    assert exp.summary.scheduler_message == f"0/2 nodes are available: {IMMEDIATE}. not found"


# ============================================================================ VolumeZone

NO_ZONE = vz.ERR_REASON_CONFLICT


def zoned_pv(name: str = "pv-1", claim: str = "data", **zone_labels: str) -> dict:
    """A PV bound to `claim` with labels given as keyword arguments (zone=, region=, beta_zone=)."""
    keys = {"zone": ZONE, "region": REGION, "beta_zone": vz.BETA_ZONE, "beta_region": vz.BETA_REGION}
    return pv(name, claim=claim, labels={keys[k]: v for k, v in zone_labels.items()})


def bound_claim(name: str = "data", volume: str = "pv-1") -> dict:
    return pvc(name, volume_name=volume, bound=True)


def test_zone_reason_is_upstreams():
    assert NO_ZONE == "node(s) had no available volume zone"


def test_zone_skips_a_pod_whose_pvs_have_no_zone_labels():
    status, _ = run(vz, [node("a"), bound_claim(), pv("pv-1", claim="data"), pod("p", volumes=uses_pvc("data"))])
    assert status.code == Code.SKIP


def test_zone_skips_a_pod_without_claims_and_ignores_ephemeral_volumes():
    status, _ = run(vz, [node("a"), pod("p", volumes=ephemeral())])
    assert status.code == Code.SKIP


def test_zone_passes_over_an_unbound_wait_for_first_consumer_claim():
    status, _ = run(vz, [node("a"), storage_class(), pvc("data"), pod("p", volumes=uses_pvc("data"))])
    assert status.code == Code.SKIP


@pytest.mark.parametrize("objects, message", [
    ([], 'persistentvolumeclaim "data" not found'),
    ([pvc("data", storage_class=None)], "PersistentVolumeClaim had no pv name and storageClass name"),
    ([pvc("data", storage_class="gone")], 'storageclass.storage.k8s.io "gone" not found'),
    ([pvc("data", storage_class="fast"), storage_class("fast", mode="Immediate")], "PersistentVolume had no name"),
    ([bound_claim(volume="pv-gone")], 'persistentvolume "pv-gone" not found'),
])
def test_zone_prefilter_rejects_every_node_for_what_it_cannot_read(objects, message):
    status, _ = run(vz, [node("a"), *objects, pod("p", volumes=uses_pvc("data"))])
    assert (status.code, status.reasons) == (Code.UNRESOLVABLE, (message,))


def test_zone_prefilter_rejects_a_claim_without_a_name():
    p = pod("p", volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": ""}}])
    status, _ = run(vz, [node("a"), p])
    assert (status.code, status.reasons) == (Code.UNRESOLVABLE, ("PersistentVolumeClaim had no name",))


def test_zone_the_node_must_be_in_the_pvs_zone():
    objects = [*zoned(a="z1", b="z2"), bound_claim(), zoned_pv(zone="z1"), pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(vz, objects)
    assert verdicts(statuses) == {"a": OK, "b": (Code.UNRESOLVABLE, (NO_ZONE,))}
    assert statuses["b"].detail == f"PV pv-1 is in {ZONE}=z1; the node has {ZONE}=z2"


def test_zone_a_node_without_topology_labels_passes():
    _, statuses = run(vz, [node("bare"), bound_claim(), zoned_pv(zone="z1"), pod("p", volumes=uses_pvc("data"))])
    assert verdicts(statuses) == {"bare": OK}


def test_zone_a_node_with_only_a_region_lacks_the_zone():
    objects = [node("a", labels={REGION: "r1"}), bound_claim(), zoned_pv(zone="z1", region="r1"),
               pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(vz, objects)
    assert verdicts(statuses) == {"a": (Code.UNRESOLVABLE, (NO_ZONE,))}
    assert statuses["a"].detail == f"PV pv-1 is in {ZONE}=z1; the node has no label {ZONE}"


def test_zone_a_multi_zone_pv_label_lists_zones_joined_by_two_underscores():
    objects = [*zoned(a="z1", b="z2", c="z3"), bound_claim(), zoned_pv(zone="z1__z2"),
               pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(vz, objects)
    assert verdicts(statuses) == {"a": OK, "b": OK, "c": (Code.UNRESOLVABLE, (NO_ZONE,))}


def test_zone_a_label_with_an_empty_zone_is_ignored():
    status, _ = run(vz, [*zoned(a="z1"), bound_claim(), zoned_pv(zone="z1__"), pod("p", volumes=uses_pvc("data"))])
    assert status.code == Code.SKIP


def test_zone_a_beta_pv_label_is_met_by_the_nodes_ga_label():
    objects = [*zoned(a="z1", b="z2"), bound_claim(), zoned_pv(beta_zone="z1"), pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(vz, objects)
    assert verdicts(statuses) == {"a": OK, "b": (Code.UNRESOLVABLE, (NO_ZONE,))}


def test_zone_checks_the_region_too():
    objects = [node("a", labels={REGION: "r1"}), node("b", labels={REGION: "r2"}), bound_claim(),
               zoned_pv(region="r1"), pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(vz, objects)
    assert verdicts(statuses) == {"a": OK, "b": (Code.UNRESOLVABLE, (NO_ZONE,))}


def test_explain_records_volume_zone():
    objects = [*zoned(a="z1", b="z2"), bound_claim(), zoned_pv(zone="z1"), pod("p", volumes=uses_pvc("data"))]
    exp = explain(objects)
    assert recorded(exp, "a") is None
    assert recorded(exp, "b") == ("VolumeZone", (NO_ZONE,))


# ============================================================================ VolumeRestrictions

DISK = vr.ERR_REASON_DISK_CONFLICT
RWOP = vr.ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT


def disk(kind: str, read_only: bool = False, **source) -> list[dict]:
    return [{"name": "disk", kind: {**source, **({"readOnly": True} if read_only else {})}}]


def test_restrictions_reasons_are_upstreams():
    assert DISK == "node(s) had no available disk"
    assert RWOP == ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
                    "in-use by another pod")


def test_restrictions_skip_a_pod_without_in_tree_disks_or_claims_in_use():
    status, _ = run(vr, [node("a"), storage_class(), pvc("data", modes=("ReadWriteOncePod",)),
                         pod("p", volumes=uses_pvc("data"))])
    assert status.code == Code.SKIP


def test_restrictions_reject_every_node_for_a_claim_that_does_not_exist():
    status, _ = run(vr, [node("a"), pod("p", volumes=uses_pvc("data"))])
    assert (status.code, status.reasons) == (Code.UNRESOLVABLE, ('persistentvolumeclaim "data" not found',))


@pytest.mark.parametrize("mine, theirs, conflict", [
    (disk("gcePersistentDisk", pdName="pd-1"), disk("gcePersistentDisk", pdName="pd-1"), True),
    (disk("gcePersistentDisk", True, pdName="pd-1"), disk("gcePersistentDisk", pdName="pd-1"), True),
    (disk("gcePersistentDisk", True, pdName="pd-1"), disk("gcePersistentDisk", True, pdName="pd-1"), False),
    (disk("gcePersistentDisk", pdName="pd-1"), disk("gcePersistentDisk", pdName="pd-2"), False),
    (disk("awsElasticBlockStore", True, volumeID="vol-1"), disk("awsElasticBlockStore", True, volumeID="vol-1"), True),
    (disk("iscsi", iqn="iqn.2026-01.com.example:t1", targetPortal="10.0.0.1", lun=0),
     disk("iscsi", iqn="iqn.2026-01.com.example:t1", targetPortal="10.0.0.2", lun=1), True),
    (disk("iscsi", True, iqn="iqn.2026-01.com.example:t1", targetPortal="10.0.0.1", lun=0),
     disk("iscsi", True, iqn="iqn.2026-01.com.example:t1", targetPortal="10.0.0.1", lun=0), False),
    (disk("rbd", monitors=["m1", "m2"], image="img"), disk("rbd", monitors=["m2", "m3"], pool="rbd", image="img"), True),
    (disk("rbd", monitors=["m1"], image="img"), disk("rbd", monitors=["m3"], image="img"), False),
    (disk("rbd", monitors=["m1"], image="img"), disk("rbd", monitors=["m1"], pool="other", image="img"), False),
    (disk("rbd", True, monitors=["m1"], image="img"), disk("rbd", True, monitors=["m1"], image="img"), False),
])
def test_restrictions_an_in_tree_disk_mounted_by_a_pod_on_the_node(mine, theirs, conflict):
    objects = [node("a"), node("b"), pod("holder", node_name="a", volumes=theirs), pod("p", volumes=mine)]
    status, statuses = run(vr, objects)
    assert status.code == Code.SUCCESS
    assert verdicts(statuses) == {"a": (Code.UNSCHEDULABLE, (DISK,)) if conflict else OK, "b": OK}
    if conflict:
        assert statuses["a"].detail.endswith("(volume disk) is in use by pod default/holder on the node")


def rwop_setup(*, holder_node: str = "b", holder_priority: int = 0) -> list[dict]:
    return [node("a"), node("b"), storage_class(), pvc("data", modes=("ReadWriteOncePod",), volume_name="pv-1",
                                                     bound=True),
            pv("pv-1", claim="data", modes=("ReadWriteOncePod",)),
            pod("holder", node_name=holder_node, volumes=uses_pvc("data"), priority=holder_priority),
            pod("p", volumes=uses_pvc("data"), priority=100)]


def test_restrictions_a_read_write_once_pod_claim_in_use_rejects_every_node():
    status, statuses = run(vr, rwop_setup())
    assert status.code == Code.SUCCESS
    assert verdicts(statuses) == {"a": (Code.UNSCHEDULABLE, (RWOP,)), "b": (Code.UNSCHEDULABLE, (RWOP,))}
    assert statuses["a"].detail == "PVC default/data (ReadWriteOncePod) is in use by pod default/holder"


def test_restrictions_removing_the_user_frees_the_claim_and_adding_it_back_takes_it_again():
    cycle = cycle_for(rwop_setup())
    vr.pre_filter(cycle)
    b = cycle.node_infos["b"]
    holder = next(x for x in b.pods if x.name == "holder")
    without = framework.without_pods(cycle, b, [holder])
    assert vr.filter(without, b).code == Code.SUCCESS
    assert vr.filter(cycle, b).code == Code.UNSCHEDULABLE   # the cycle itself is untouched
    again = framework.with_pod(without, b, holder)
    assert vr.filter(again, b).reasons == (RWOP,)


def test_explain_offers_preemption_of_the_read_write_once_pod_user():
    exp = explain(rwop_setup())
    assert recorded(exp, "a") == ("VolumeRestrictions", (RWOP,))
    assert "preemption: found a potential placement for pod on node b, preempting 1 victims" \
        in exp.summary.scheduler_message


# ============================================================================ NodeVolumeLimits

MAX_COUNT = nvl.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED
EBS = "ebs.csi.aws.com"


def csinode(name: str, annotations: dict | None = None, **counts: int | None) -> dict:
    """A CSINode with drivers given as name=count (None: no allocatable)."""
    drivers = []
    for driver, count in counts.items():
        entry = {"name": driver.replace("_", "."), "nodeID": f"{name}-id", "topologyKeys": [ZONE]}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    meta = {"name": name, "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": f"uid-{name}"}]}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": drivers}}


def attached_claims(node_name: str, *names: str) -> list[dict]:
    """A pod on the node using a bound CSI claim each (PVC <name>, PV pv-<name>)."""
    objects = []
    for name in names:
        objects += [pvc(name, volume_name=f"pv-{name}", bound=True), pv(f"pv-{name}", claim=name, csi_driver=CSI)]
    objects.append(pod(f"user-{node_name}-{names[0]}", node_name=node_name, volumes=uses_pvc(*names)))
    return objects


def new_claim(name: str = "data") -> list[dict]:
    return [pvc(name, volume_name=f"pv-{name}", bound=True), pv(f"pv-{name}", claim=name, csi_driver=CSI)]


LIMITS = csinode("a", ebs_csi_example_com=2)


def test_limits_reason_is_upstreams():
    assert MAX_COUNT == "node(s) exceed max volume count"


def test_limits_skip_a_pod_without_claims_or_in_tree_volumes():
    status, _ = run(nvl, [node("a"), pod("p", volumes=[{"name": "tmp", "emptyDir": {}}])])
    assert status.code == Code.SKIP


def test_limits_a_claim_of_the_pod_that_does_not_exist_is_unresolvable():
    _, statuses = run(nvl, [node("a"), LIMITS, pod("p", volumes=uses_pvc("data"))])
    assert verdicts(statuses) == {
        "a": (Code.UNRESOLVABLE, ('looking up PVC default/data: persistentvolumeclaim "data" not found',))}


def test_limits_count_the_csi_volumes_of_the_nodes_pods_against_allocatable():
    objects = [node("a"), node("b"), LIMITS, csinode("b", ebs_csi_example_com=3),
               *attached_claims("a", "one", "two"), *attached_claims("b", "three", "four"),
               *new_claim(), pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(nvl, objects)
    assert verdicts(statuses) == {"a": (Code.UNSCHEDULABLE, (MAX_COUNT,)), "b": OK}
    assert statuses["a"].detail == (f"CSI driver {CSI}: 2 volume(s) attached by the node's pods, the pod adds 1, "
                                    "the CSINode allows 2")


def test_limits_a_volume_the_node_already_has_is_not_counted_again():
    objects = [node("a"), LIMITS, *attached_claims("a", "one", "data"), pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(nvl, objects)
    assert verdicts(statuses) == {"a": OK}


def test_limits_an_unbound_claim_counts_as_a_volume_of_its_provisioner():
    objects = [node("a"), LIMITS, storage_class(), *attached_claims("a", "one", "two"), pvc("data"),
               pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(nvl, objects)
    assert verdicts(statuses) == {"a": (Code.UNSCHEDULABLE, (MAX_COUNT,))}


def test_limits_without_a_csinode_or_a_count_there_is_no_limit():
    objects = [node("a"), node("b"), csinode("b", ebs_csi_example_com=None), *attached_claims("a", "one", "two"),
               *attached_claims("b", "three", "four"), *new_claim(), pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(nvl, objects)
    assert verdicts(statuses) == {"a": OK, "b": OK}


def attachment(name: str, pv_name: str, node_name: str = "a") -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": name},
            "spec": {"attacher": CSI, "nodeName": node_name, "source": {"persistentVolumeName": pv_name}},
            "status": {"attached": True}}


def test_limits_count_volume_attachments_no_pod_holds_from_1_35():
    # pv-leftover is still attached to the node though no pod there uses it.
    objects = [node("a"), LIMITS, *attached_claims("a", "one"), pv("pv-leftover", csi_driver=CSI),
               attachment("csi-leftover", "pv-leftover"), attachment("csi-one", "pv-one"),
               *new_claim(), pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(nvl, objects)
    assert verdicts(statuses) == {"a": (Code.UNSCHEDULABLE, (MAX_COUNT,))}
    assert "1 volume(s) attached by the node's pods and 1 more by VolumeAttachments" in statuses["a"].detail
    _, statuses = run(nvl, objects, allocator.Features.for_version(34))
    assert verdicts(statuses) == {"a": OK}


def ebs_pod(name: str, volume_id: str, node_name: str | None = None) -> dict:
    return pod(name, node_name=node_name, volumes=[{"name": "ebs", "awsElasticBlockStore": {"volumeID": volume_id}}])


def test_limits_count_inline_in_tree_volumes_as_their_csi_driver():
    objects = [node("a"), csinode("a", ebs_csi_aws_com=1), ebs_pod("holder", "vol-1", "a"), ebs_pod("p", "vol-2")]
    _, statuses = run(nvl, objects)
    assert verdicts(statuses) == {"a": (Code.UNSCHEDULABLE, (MAX_COUNT,))}
    assert statuses["a"].detail.startswith(f"CSI driver {EBS}: 1 volume(s)")


def test_limits_the_same_ebs_volume_by_url_or_id_is_one_volume():
    objects = [node("a"), csinode("a", ebs_csi_aws_com=1), ebs_pod("holder", "aws://us-east-1a/vol-1", "a"),
               ebs_pod("p", "vol-1")]
    _, statuses = run(nvl, objects)
    assert verdicts(statuses) == {"a": OK}


def test_limits_translate_a_bound_in_tree_pv():
    in_tree = pv("pv-data", claim="data", gcePersistentDisk={"pdName": "disk-1"}, labels={ZONE: "us-east1-b"})
    objects = [node("a"), csinode("a", pd_csi_storage_gke_io=0), pvc("data", volume_name="pv-data", bound=True),
               in_tree, pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(nvl, objects)
    assert verdicts(statuses) == {"a": (Code.UNSCHEDULABLE, (MAX_COUNT,))}


def test_limits_an_inline_azure_disk_of_the_defaulted_kind_cannot_be_translated():
    p = pod("p", volumes=[{"name": "az", "azureDisk": {"diskName": "d", "diskURI": "/subscriptions/s/disks/d"}}])
    _, statuses = run(nvl, [node("a"), csinode("a", disk_csi_azure_com=8), p])
    assert verdicts(statuses) == {"a": (Code.ERROR, (
        "converting volume(az) from inline to csi: kind(Shared) is not supported in csi migration",))}


def test_limits_count_portworx_before_1_36_only_where_the_csinode_lists_it_migrated():
    def portworx(name: str, node_name: str | None = None) -> dict:
        return pod(name, node_name=node_name, volumes=[{"name": "px", "portworxVolume": {"volumeID": name}}])

    objects = [node("a"), node("b"), csinode("a", pxd_portworx_com=1),
               csinode("b", {nvl.MIGRATED_PLUGINS_ANNOTATION: "kubernetes.io/portworx-volume"}, pxd_portworx_com=1),
               portworx("holder-a", "a"), portworx("holder-b", "b"), portworx("p")]
    _, statuses = run(nvl, objects, allocator.Features.for_version(35))
    assert verdicts(statuses) == {"a": OK, "b": (Code.UNSCHEDULABLE, (MAX_COUNT,))}
    _, statuses = run(nvl, objects)
    assert verdicts(statuses) == {"a": (Code.UNSCHEDULABLE, (MAX_COUNT,)), "b": (Code.UNSCHEDULABLE, (MAX_COUNT,))}


def test_limits_a_driver_that_must_be_on_the_node_is_not_installed():
    objects = [node("a"), csinode("a", other_csi_example_com=4), csi_driver(preventPodSchedulingIfMissing=True),
               *new_claim(), pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(nvl, objects)
    assert verdicts(statuses) == {"a": (Code.UNSCHEDULABLE, (f"{CSI} CSI driver is not installed on the node",))}
    _, statuses = run(nvl, objects, allocator.Features.for_version(36))   # VolumeLimitScaling off
    assert verdicts(statuses) == {"a": OK}


def test_limits_a_driver_that_does_not_ask_need_not_be_on_the_node():
    objects = [node("a"), csinode("a", other_csi_example_com=4), csi_driver(), *new_claim(),
               pod("p", volumes=uses_pvc("data"))]
    _, statuses = run(nvl, objects)
    assert verdicts(statuses) == {"a": OK}


def test_explain_records_node_volume_limits():
    objects = [node("a"), node("b"), LIMITS, *attached_claims("a", "one", "two"), *new_claim(),
               pod("p", volumes=uses_pvc("data"))]
    exp = explain(objects)
    assert recorded(exp, "a") == ("NodeVolumeLimits", (MAX_COUNT,))
    assert recorded(exp, "b") is None
