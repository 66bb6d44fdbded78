"""What the store keeps of each object.

Every source passes objects through `keep()`: Pods and Nodes are cut down to the fields the
scheduler's filters, scores and DRA need. Pods that reference resource claims keep what DRA views
show; every other pod keeps only what the default profile's plugins read of it: a pending pod its
placement rules (affinity, topology spread, tolerations, volumes, container images), a bound pod
what counts on its node (requests, host ports, labels, pod (anti-)affinity, volumes), because a
bound pod decides whether another pod fits beside it; every pod its controller's ownerReference.
Services, ReplicationControllers, ReplicaSets and StatefulSets keep only their selector (what
PodTopologySpread's default selector reads). That keeps memory small on big clusters and
keeps things that may hold secrets (container env, command lines and args, the last-applied
annotation, which repeats the whole spec, the contents of secret, configMap, projected and
downwardAPI volumes) out of the store and therefore out of snapshots and output.
"""

from __future__ import annotations

import sys
from typing import Any

from allocator import STRING_ATTRIBUTE_TYPES, plain_attribute_value
from kubectl_dra.fields import dict_field

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

_POD_SPEC_FIELDS = (
    "nodeName", "nodeSelector", "affinity", "tolerations", "schedulerName", "priority",
    "priorityClassName", "resourceClaims", "schedulingGates", "overhead", "resources", "preemptionPolicy",
    # The PodGroup (1.36+) or Workload (1.35) a pod belongs to: with DRAWorkloadResourceClaims its
    # group's claims are its own (resourceclaim.IsForPod, IsReservedForPod, BindTo).
    "schedulingGroup", "workloadRef",
    "topologySpreadConstraints",  # PodTopologySpread (filter and score)
    "hostNetwork", "hostUsers",  # NodeDeclaredFeatures: UserNamespacesHostNetworkSupport
)
# What the scheduler's filters read of a pod without claims (see kubectl_dra/scheduling/): labels
# for InterPodAffinity and PodTopologySpread (a terminating pod is not counted by the latter).
_PLAIN_POD_METADATA = ("name", "namespace", "uid", "labels", "deletionTimestamp", "resourceVersion")
# Of a pod's ownerReferences, its controller's (metav1.GetControllerOf): PodTopologySpread's default
# selector reads the ReplicaSet, StatefulSet or ReplicationController it names (helper/spread.go),
# matched by apiVersion and kind.
_OWNER_REFERENCE_FIELDS = ("apiVersion", "kind", "name", "uid", "controller")
# Of Services, ReplicationControllers, ReplicaSets and StatefulSets, what helper.DefaultSelector
# reads: who they are and their selector (a Service's ports, a controller's pod template, which
# may hold env values and commands, are not kept).
_SELECTOR_OWNER_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
_SELECTOR_OWNER_METADATA = ("name", "namespace", "uid", "resourceVersion", "deletionTimestamp")
_PLAIN_POD_STATUS = ("phase", "nominatedNodeName", "extendedResourceClaimStatus",
                     "initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses")
# A bound pod without claims takes room on its node (requests, ports), holds its volumes there
# (VolumeRestrictions, NodeVolumeLimits) and keeps its pod (anti-)affinity, which every incoming
# pod is checked against (InterPodAffinity's symmetry, filter and score); its own node placement
# rules no longer matter.
_BOUND_POD_SPEC = ("nodeName", "priority", "overhead", "resources", "containers", "initContainers", "volumes")
_POD_AFFINITY_KINDS = ("podAffinity", "podAntiAffinity")
_POD_STATUS_FIELDS = (
    "phase", "conditions", "nominatedNodeName", "resourceClaimStatuses",
    "extendedResourceClaimStatus", "nodeAllocatableResourceClaimStatuses", "reason", "message",
)
_CONTAINER_LISTS = ("initContainers", "containers")
# Of container statuses, a DRA pod keeps only the kubelet's device health (allocatedResourcesStatus).
_CONTAINER_STATUS_LISTS = ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses")
# declaredFeatures: NodeDeclaredFeatures, and DynamicResources' DRAOptionalNodeOperations.
_NODE_STATUS_FIELDS = ("capacity", "allocatable", "conditions", "nodeInfo", "addresses", "declaredFeatures")
# Volume sources kept whole: they name storage the volume plugins judge and hold no credentials (a
# secret is named at most). VolumeBinding, VolumeZone and NodeVolumeLimits follow claims
# (persistentVolumeClaim, ephemeral); VolumeRestrictions compares gcePersistentDisk,
# awsElasticBlockStore, rbd and iscsi volumes of the pods on a node
# (pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go); NodeVolumeLimits
# counts the in-tree sources CSI migration translates (nodevolumelimits/csi.go, csi-translation-lib).
_KEPT_VOLUME_SOURCES = (
    "persistentVolumeClaim", "ephemeral", "gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi",
    "azureDisk", "azureFile", "cinder", "vsphereVolume", "portworxVolume", "photonPersistentDisk", "fc",
    "scaleIO", "storageos",
)
# Of an inline CSI volume only its driver and mode: volumeAttributes are free-form driver settings.
_CSI_VOLUME_FIELDS = ("driver", "readOnly", "fsType")
# Every other source (secret, configMap, projected, downwardAPI, emptyDir, hostPath, nfs, gitRepo,
# flexVolume, image...) is read by no filter or score, and some carry what must not be kept (a
# gitRepo URL with a token, flexVolume options): such volumes are left out.
# What replicas repeat in a pod as kept: shared between pods by Interner.pod.
_SHARED_POD_SPEC = ("affinity", "tolerations", "topologySpreadConstraints", "nodeSelector", "containers",
                    "initContainers", "volumes", "resources", "overhead")
# Storage kinds: fields no plugin reads that may hold credentials (provisioner parameters, a
# driver's free-form attributes and attachment metadata).
_STORAGE_CLASS_DROPPED = ("parameters",)


def is_dra_pod(pod: dict) -> bool:
    """A pod that references resource claims: the store keeps what DRA views show of it. Whether
    DRA concerns a pod (extended resources too) is kubectl_dra.scheduling.extended.concerns_dra."""
    return bool((pod.get("spec") or {}).get("resourceClaims"))


def keep(kind: str, obj: dict, shared: Interner | None = None) -> dict | None:
    """The object as the store keeps it, or None when the store does not keep it at all.

    `shared`: the Interner a source uses for everything it loads (see Interner); ResourceSlices
    then share their devices' repeated values instead of holding a copy per device, Pods what the
    replicas of a workload repeat, Nodes the images they hold."""
    if kind == "Pod":
        kept = _slim_pod(obj) if is_dra_pod(obj) else _plain_pod(obj)
        if shared is not None:
            shared.pod(kept)
        return kept
    if kind == "Node":
        return _slim_node(obj, shared)
    if kind == "ResourceQuota":
        return _dra_quota(obj)
    if kind == "StorageClass":
        return _slim_storage_class(obj)
    if kind == "PersistentVolume":
        return _slim_persistent_volume(obj)
    if kind == "VolumeAttachment":
        return _slim_volume_attachment(obj)
    if kind in _SELECTOR_OWNER_KINDS:
        return _selector_only(obj)
    kept = _without_noise(obj)
    if kind == "ResourceSlice" and shared is not None:
        shared.slice(kept)
    return kept


class Interner:
    """Shares what repeats across devices: every attribute, capacity and counter value that equals
    one seen before (`{"string": "NVIDIA H100 80GB HBM3"}`, `{"value": "80Gi"}`) becomes that same
    dict, a device's whole capacity and whole consumesCounters list and a slice's whole
    sharedCounters list that equal ones seen before become those, and device names are interned
    strings. A fleet of identical nodes repeats almost every value, so a device costs a fraction of
    what the decoded JSON holds (bench/fleet_bench.py --memory in bench/RESULTS.md).

    Objects in the store are read, never written (Store.items), which is what makes sharing safe:
    a reader that changed a shared value would change it on every device holding it. Leaves are
    one-key dicts holding a string, number or bool; capacities and counter lists are shared when
    their JSON spelling (msgspec's encoding, the table's key) and their value (==) both equal those
    of one seen before, so a YAML file's NaN, bytes, sets or non-string keys, which JSON cannot
    spell apart, are never taken for another value. Anything else stays as decoded.
    A source keeps one Interner per load (and its watch events); `limit` bounds the tables for a
    long watch on a churning cluster: past it they start afresh (values already shared stay
    shared)."""

    __slots__ = ("_shared", "_wholes", "_encode", "limit", "plain_attributes", "_last", "_values")

    def __init__(self, limit: int = 1 << 21, record_plain: bool = False) -> None:
        self._shared: dict[str, dict] = {}
        """value type -> {leaf -> the one dict holding it}, a leaf other than a string keyed with its
        Python type: {"int": 1}, {"int": True} and {"int": 1.0} are equal as dict keys but not as API
        values. (A string leaf is its own key: the table keeps nothing the leaves do not hold.)"""
        self._wholes: dict[bytes, object] = {}
        """JSON spelling -> the one capacity dict or counter list spelt so."""
        self._last: dict[str, dict] = {}
        """Attribute name -> the shared plain value with a string leaf last given to it: devices
        listed one after another repeat most of them ({"string": "Hopper"}), and one comparison
        of two one-key dicts costs less than taking the value apart (a string leaf equals only a
        string, so the comparison is as exact as the tables' keys)."""
        self._values: dict[bytes, object] = {}
        """JSON spelling -> the one pod or node value spelt so (Interner.share)."""
        self._encode = _json_encoder()
        self.limit = limit
        self.plain_attributes: dict[int, dict] | None = {} if record_plain else None
        """With `record_plain` (a file source, which validates what it loaded once, at once):
        id -> the spec of each slice whose devices' attributes are all plain
        (allocator.plain_attribute_value), found while sharing them, for
        allocator.objects.Prepared.plain_attributes: validation then need not walk them again."""

    def slice(self, obj: dict) -> None:
        """Share the repeated values of one ResourceSlice, in place (it was just decoded and is
        not yet in any store)."""
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        self._bound()
        whole, intern = self._whole, sys.intern
        attributes = self._leaves
        plain = True
        devices = spec.get("devices")
        if isinstance(devices, list):
            for device in devices:
                if device.__class__ is not dict:
                    plain = False
                    continue
                name = device.get("name")
                if name.__class__ is str:
                    device["name"] = intern(name)
                values = device.get("attributes")
                if values.__class__ is dict:
                    if attributes(values) is False:
                        plain = False
                elif values is not None:
                    plain = False
                values = device.get("capacity")
                if values.__class__ is dict and values:
                    found = whole(values)
                    if found is not values:
                        device["capacity"] = found
                consumes = device.get("consumesCounters")
                if consumes.__class__ is list and consumes:
                    found = whole(consumes)
                    if found is not consumes:
                        device["consumesCounters"] = found
            if plain and self.plain_attributes is not None:
                self.plain_attributes[id(spec)] = spec
        counter_sets = spec.get("sharedCounters")
        if counter_sets.__class__ is list and counter_sets:
            found = whole(counter_sets)
            if found is not counter_sets:
                spec["sharedCounters"] = found

    def pod(self, pod: dict) -> None:
        """Shares, in place, what the replicas of a workload repeat in a pod keep() has just made
        (its spec is a new dict; its metadata is replaced, never changed): labels, placement rules,
        the slim containers (requests, ports, images), volumes. A Deployment's pods then hold one
        copy of each between them."""
        self._bound()
        share = self.share
        spec = pod.get("spec")
        if spec.__class__ is dict:
            for key in _SHARED_POD_SPEC:
                value = spec.get(key)
                if value:
                    spec[key] = share(value)
        metadata: Any = pod.get("metadata")  # JSON; checked by class, which mypy does not follow
        labels = metadata.get("labels") if metadata.__class__ is dict else None
        if labels.__class__ is dict and labels:
            found = share(labels)
            if found is not labels:
                pod["metadata"] = {**metadata, "labels": found}

    def share(self, value):
        """The value seen before whose JSON spelling and value (==) equal `value`'s, else `value`
        (kept for the next one). Values msgspec cannot spell stay as they are."""
        encode = self._encode
        if encode is None:
            return value
        try:
            key = encode(value)
        except Exception:  # noqa: BLE001 - what msgspec cannot spell is not shared
            return value
        found = self._values.get(key)
        if found is None:
            self._values[key] = value
            return value
        return found if found == value else value

    def _bound(self) -> None:
        """Past `limit` values the tables start afresh (what is shared stays shared)."""
        if sum(map(len, self._shared.values())) + len(self._wholes) + len(self._values) > self.limit:
            self._shared, self._wholes, self._last, self._values = {}, {}, {}, {}

    def _whole(self, value):
        """The capacity dict or counter list seen before that equals `value`, else `value` itself
        with its leaves shared (and kept for the next one)."""
        encode = self._encode
        if encode is not None:
            try:
                key = encode(value)
            except Exception:  # noqa: BLE001 - what msgspec cannot spell is shared leaf by leaf
                key = None
            if key is not None:
                found = self._wholes.get(key)
                if found is not None and found == value:
                    return found
                if found is None:
                    self._wholes[key] = value
        leaves = self._leaves
        if value.__class__ is dict:
            leaves(value)
        else:
            for entry in value:
                if entry.__class__ is dict:
                    counters = entry.get("counters")
                    if counters.__class__ is dict:
                        leaves(counters)
        return value

    def _leaves(self, values: dict) -> bool:
        """Shares each one-key value dict ({"string": "H100"}, {"value": "80Gi"}) with an equal one
        seen before, in place; tells whether all are plain attributes (one-key dicts of a known
        value type, the value of that type; allocator.objects.plain_attribute_value), which only a device's
        attributes ask."""
        tables, plain, last = self._shared, True, self._last
        for name, value in values.items():
            before = last.get(name)
            if before is not None and before == value:
                if before is not value:
                    values[name] = before
                continue
            if value.__class__ is not dict or len(value) != 1:
                plain = False
                continue
            [(value_type, leaf)] = value.items()
            leaf_type = leaf.__class__
            # Most attributes are strings: plain_attribute_value's answer for them, without the call.
            valid = (leaf_type is str and value_type in STRING_ATTRIBUTE_TYPES) or plain_attribute_value(value_type, leaf)
            if not valid:
                plain = False
            if leaf_type is not str:
                if leaf_type is not int and leaf_type is not bool and leaf_type is not float:
                    continue
                leaf = (leaf, leaf_type)
            table = tables.get(value_type)
            if table is None:
                table = tables[value_type] = {}
            found = table.setdefault(leaf, value)
            if found is not value:
                values[name] = found
            if leaf_type is str and valid:
                last[name] = found
        return plain


def _json_encoder():
    """msgspec's JSON encoder (the Interner's keys), or None in an install without msgspec."""
    try:
        import msgspec
    except ImportError:
        return None
    return msgspec.json.Encoder().encode


def _without_noise(obj: dict) -> dict:
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        return obj
    annotations = metadata.get("annotations")
    if "managedFields" not in metadata and not (isinstance(annotations, dict) and LAST_APPLIED in annotations):
        return obj
    metadata = {k: v for k, v in metadata.items() if k != "managedFields"}
    if isinstance(annotations, dict) and LAST_APPLIED in annotations:
        metadata["annotations"] = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
        if not metadata["annotations"]:
            del metadata["annotations"]
    return {**obj, "metadata": metadata}


def _slim_pod(pod: dict) -> dict:
    pod = _without_noise(pod)
    spec = pod.get("spec") or {}
    slim_spec = {k: spec[k] for k in _POD_SPEC_FIELDS if k in spec}
    # Only a pod still to be placed is scored by ImageLocality: a bound pod's images are not read.
    images = not spec.get("nodeName")
    for list_name in _CONTAINER_LISTS:
        if list_name in spec:
            slim_spec[list_name] = [_slim_container(c, images) for c in spec[list_name] or [] if isinstance(c, dict)]
    if "volumes" in spec:
        slim_spec["volumes"] = _slim_volumes(spec["volumes"])
    status = pod.get("status") or {}
    slim = {k: v for k, v in pod.items() if k not in ("spec", "status")}
    slim["spec"] = slim_spec
    if status:
        slim["status"] = {k: status[k] for k in _POD_STATUS_FIELDS if k in status}
        for list_name in _CONTAINER_STATUS_LISTS:  # device health (kubectl_dra.model.health)
            health = [{"name": c.get("name"), "allocatedResourcesStatus": c["allocatedResourcesStatus"]}
                      for c in status.get(list_name) or [] if isinstance(c, dict) and c.get("allocatedResourcesStatus")]
            if health:
                slim["status"][list_name] = health
    return slim


def _plain_pod(pod: dict) -> dict:
    """A pod without claims, as the filters need it: a third of a typical pod, a tiny part of a big one."""
    slim = _slim_pod(pod)
    metadata = pod.get("metadata") or {}
    slim["metadata"] = {k: metadata[k] for k in _PLAIN_POD_METADATA if k in metadata}
    owners = _controller_references(metadata.get("ownerReferences"))
    if owners:
        slim["metadata"]["ownerReferences"] = owners
    spec = slim["spec"]
    if spec.get("nodeName"):
        slim["spec"] = {k: v for k, v in spec.items() if k in _BOUND_POD_SPEC}
        affinity = spec.get("affinity")
        if isinstance(affinity, dict):
            kept = {k: affinity[k] for k in _POD_AFFINITY_KINDS if affinity.get(k)}
            if kept:
                slim["spec"]["affinity"] = kept
    status = slim.get("status")
    if status is not None:
        slim["status"] = {k: status[k] for k in _PLAIN_POD_STATUS if k in status}
    return slim


def _controller_references(references) -> list:
    """The controller references among `references` (at most one is valid; all are kept, as the
    API server gave them, so that GetControllerOf picks the same first one)."""
    if not isinstance(references, list):
        return []
    return [{k: ref[k] for k in _OWNER_REFERENCE_FIELDS if k in ref}
            for ref in references if isinstance(ref, dict) and ref.get("controller") is True]


def _selector_only(obj: dict) -> dict:
    """A Service, ReplicationController, ReplicaSet or StatefulSet as the default selector reads it:
    apiVersion, kind, its name and namespace, and spec.selector."""
    metadata = dict_field(obj, "metadata")
    slim = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
    slim["metadata"] = {k: metadata[k] for k in _SELECTOR_OWNER_METADATA if k in metadata}
    spec = obj.get("spec")
    slim["spec"] = {"selector": spec["selector"]} if isinstance(spec, dict) and "selector" in spec else {}
    return slim


def _slim_container(container: dict, image: bool = False) -> dict:
    # resources (requests, limits, claims), host ports, the sidecar restartPolicy and (ImageLocality)
    # the image are all the scheduler reads; env, command and args may hold secrets.
    slim = {"name": container.get("name")}
    if image and container.get("image"):
        name = container["image"]
        slim["image"] = sys.intern(name) if name.__class__ is str else name
    if container.get("resources"):
        slim["resources"] = container["resources"]
    if container.get("restartPolicy"):
        slim["restartPolicy"] = container["restartPolicy"]
    # NodeDeclaredFeatures infers what a pod needs of its node from these two.
    if container.get("restartPolicyRules"):
        slim["restartPolicyRules"] = container["restartPolicyRules"]
    mounts = [{"name": m.get("name"), "bindMountOptions": m["bindMountOptions"]}
              for m in container.get("volumeMounts") or [] if isinstance(m, dict) and m.get("bindMountOptions")]
    if mounts:
        slim["volumeMounts"] = mounts
    ports = [p for p in container.get("ports") or [] if isinstance(p, dict) and p.get("hostPort")]
    if ports:
        slim["ports"] = ports
    return slim


def _slim_volumes(volumes) -> list:
    """The volumes a volume plugin reads (_KEPT_VOLUME_SOURCES, inline CSI without its attributes);
    anything else in the list is left out."""
    if not isinstance(volumes, list):
        return volumes  # not a list: left for the reader to refuse, as the API server would
    slim = []
    for volume in volumes:
        if not isinstance(volume, dict):
            continue
        kept = {k: v for k, v in volume.items() if k in _KEPT_VOLUME_SOURCES}
        csi = volume.get("csi")
        if isinstance(csi, dict):
            kept["csi"] = {k: csi[k] for k in _CSI_VOLUME_FIELDS if k in csi}
        if kept:
            slim.append({"name": volume.get("name"), **kept})
    return slim


def is_dra_quota_resource(name: str) -> bool:
    """A ResourceQuota resource name that limits DRA: devices per class
    (`gpu.deviceclass.resource.k8s.io/devices`), a class's implicit extended resource
    (`requests.deviceclass.resource.kubernetes.io/gpu`), an extended resource a class may back
    (`requests.example.com/gpu`), or the number of claims (`count/resourceclaims.resource.k8s.io`).
    See k8s.io/kubernetes pkg/quota/v1/evaluator/core/resource_claims.go."""
    if name.endswith(".deviceclass.resource.k8s.io/devices") or name == "count/resourceclaims.resource.k8s.io":
        return True
    # requests.<domain>/<name>: an extended resource (native ones, requests.cpu..., have no domain).
    return name.startswith("requests.") and "/" in name


def _dra_quota(quota: dict) -> dict:
    """A ResourceQuota cut down to its DRA resources (in spec.hard, status.hard, status.used). A
    quota limiting none is kept with nothing in them: a watch event that removes its last DRA
    resource must still replace the version kept before."""
    quota = _without_noise(quota)
    spec, status = quota.get("spec") or {}, quota.get("status") or {}
    if not isinstance(spec, dict) or not isinstance(status, dict):
        return quota

    def dra(values) -> dict:
        return {k: v for k, v in values.items() if is_dra_quota_resource(k)} if isinstance(values, dict) else {}

    hard = dra(spec.get("hard"))
    slim_spec = {k: v for k, v in spec.items() if k != "hard"}
    slim_spec["hard"] = hard
    slim = {k: v for k, v in quota.items() if k not in ("spec", "status")}
    slim["spec"] = slim_spec
    if status:
        slim["status"] = {part: dra(status.get(part)) for part in ("hard", "used") if part in status}
    return slim


def _slim_node(node: dict, shared: Interner | None = None) -> dict:
    node = _without_noise(node)
    status = node.get("status")
    if not isinstance(status, dict):
        return node
    slim = {k: status[k] for k in _NODE_STATUS_FIELDS if k in status}
    images = status.get("images")
    if isinstance(images, list):
        # ImageLocality reads each image's names and size. A fleet holds the same images on every
        # node: with an Interner each image (and a whole list equal to one seen) is one object.
        kept = [{k: image[k] for k in ("names", "sizeBytes") if k in image} for image in images if isinstance(image, dict)]
        if shared is not None:
            kept = shared.share([shared.share(image) for image in kept])
        slim["images"] = kept
    return {**node, "status": slim}


def _slim_storage_class(storage_class: dict) -> dict:
    """VolumeBinding and NodeVolumeLimits read a class's provisioner, binding mode and allowed
    topologies; its provisioner parameters (which some provisioners fill with credentials) are not kept."""
    storage_class = _without_noise(storage_class)
    if not any(k in storage_class for k in _STORAGE_CLASS_DROPPED):
        return storage_class
    return {k: v for k, v in storage_class.items() if k not in _STORAGE_CLASS_DROPPED}


def _slim_persistent_volume(volume: dict) -> dict:
    volume = _without_noise(volume)
    spec = volume.get("spec")
    if not isinstance(spec, dict):
        return volume
    slim_spec = _slim_volume_spec(spec)
    return volume if slim_spec is spec else {**volume, "spec": slim_spec}


def _slim_volume_spec(spec: dict) -> dict:
    """A PersistentVolume's spec without a CSI source's volumeAttributes and a flexVolume's options
    (free-form driver settings: NodeVolumeLimits reads the driver and volume handle only)."""
    csi: Any = spec.get("csi")
    flex: Any = spec.get("flexVolume")
    csi_noise = isinstance(csi, dict) and "volumeAttributes" in csi
    flex_noise = isinstance(flex, dict) and "options" in flex
    if not csi_noise and not flex_noise:
        return spec
    spec = dict(spec)
    if csi_noise:
        spec["csi"] = {k: v for k, v in csi.items() if k != "volumeAttributes"}
    if flex_noise:
        spec["flexVolume"] = {k: v for k, v in flex.items() if k != "options"}
    return spec


def _slim_volume_attachment(attachment: dict) -> dict:
    """NodeVolumeLimits counts a node's attachments by attacher and volume (spec); of the status
    only whether it is attached: attachmentMetadata is the driver's own data."""
    attachment = _without_noise(attachment)
    slim = dict(attachment)
    spec = attachment.get("spec")
    if isinstance(spec, dict):
        source: Any = spec.get("source")
        inline = source.get("inlineVolumeSpec") if isinstance(source, dict) else None
        if isinstance(inline, dict):
            slim["spec"] = {**spec, "source": {**source, "inlineVolumeSpec": _slim_volume_spec(inline)}}
    status = attachment.get("status")
    if isinstance(status, dict):
        slim["status"] = {k: status[k] for k in ("attached",) if k in status}
    return slim
