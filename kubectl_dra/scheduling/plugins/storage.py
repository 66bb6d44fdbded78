"""What the volume plugins (VolumeBinding, VolumeZone, VolumeRestrictions, NodeVolumeLimits) read
alike of PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSI objects, as
k8s.io/component-helpers storage/volume and storage/ephemeral and client-go's listers give it.

Objects come from the cycle's ObjectSet as given (nothing defaulted): a missing field reads as
the API server's default where it has one.
"""

from collections.abc import Iterable
from datetime import datetime, timezone

from allocator import (
    NodeSelectorError,
    describe_node_selector as describe,
    node_selector_term_matches as term_matches,
    validate_node_selector as validate,
)

from ..node_allocatable import Amount
from ..resources import exact_amount

BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
IMMEDIATE = "Immediate"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"


def go_quote(text: str) -> str:
    """fmt's %q of a string, for the names (DNS subdomains) it quotes here."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in escaped) + '"'


def not_found(resource: str, name: str) -> str:
    """apierrors.NewNotFound's message as client-go's listers return it: `persistentvolumeclaim
    "data" not found`, `storageclass.storage.k8s.io "fast" not found`."""
    return f"{resource} {go_quote(name)} not found"


PVC_RESOURCE = "persistentvolumeclaim"
PV_RESOURCE = "persistentvolume"
STORAGE_CLASS_RESOURCE = "storageclass.storage.k8s.io"


def meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def spec(obj: dict) -> dict:
    return obj.get("spec") or {}


def annotations(obj: dict) -> dict:
    return meta(obj).get("annotations") or {}


def labels(obj: dict) -> dict:
    return meta(obj).get("labels") or {}


def pod_namespace(pod: dict) -> str:
    return meta(pod).get("namespace") or "default"


def claim_name(pod: dict, volume: dict) -> tuple[str | None, bool]:
    """(the PVC a volume uses, whether it is a generic ephemeral volume); (None, False) for a
    volume of another kind. ephemeral.VolumeClaimName: `<pod>-<volume>`."""
    source = volume.get("persistentVolumeClaim")
    if source is not None:
        return source.get("claimName") or "", False
    if volume.get("ephemeral") is not None:
        return f"{meta(pod).get('name') or ''}-{volume.get('name') or ''}", True
    return None, False


def pod_volumes(pod: dict) -> list[dict]:
    return list(spec(pod).get("volumes") or [])


def is_for_pod(pod: dict, pvc: dict) -> str:
    """ephemeral.VolumeIsForPod: "" when the PVC was made for the pod (same namespace, the pod its
    controller owner), else the error upstream returns."""
    pvc_meta, pod_meta = meta(pvc), meta(pod)
    namespace = pvc_meta.get("namespace") or "default"
    owned = any(ref.get("controller") and ref.get("uid") == pod_meta.get("uid")
                for ref in pvc_meta.get("ownerReferences") or [])
    if namespace != pod_namespace(pod) or not owned:
        return (f"PVC {namespace}/{pvc_meta.get('name')} was not created for pod "
                f"{pod_namespace(pod)}/{pod_meta.get('name')} (pod is not owner)")
    return ""


def pvc_class(pvc: dict) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation wins over spec.storageClassName."""
    ann = annotations(pvc)
    if BETA_STORAGE_CLASS in ann:
        return ann[BETA_STORAGE_CLASS] or ""
    return spec(pvc).get("storageClassName") or ""


def pv_class(pv: dict) -> str:
    """GetPersistentVolumeClass."""
    ann = annotations(pv)
    if BETA_STORAGE_CLASS in ann:
        return ann[BETA_STORAGE_CLASS] or ""
    return spec(pv).get("storageClassName") or ""


IS_DEFAULT_CLASS = ("storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class")


def default_class(classes: Iterable[dict]) -> str | None:
    """GetDefaultClass (pkg/volume/util/storageclass.go): among the classes annotated default
    (IsDefaultAnnotation: either annotation "true"), the newest, then the first by name. A class
    without creationTimestamp (one of a what-if manifest, created now) is the newest."""
    defaults = [c for c in classes if any(annotations(c).get(key) == "true" for key in IS_DEFAULT_CLASS)]
    if not defaults:
        return None
    by_name = sorted(defaults, key=lambda c: meta(c).get("name") or "")
    return meta(sorted(by_name, key=_created, reverse=True)[0]).get("name")


def _created(obj: dict) -> datetime:
    stamp = meta(obj).get("creationTimestamp")
    if not isinstance(stamp, str):
        return datetime.max.replace(tzinfo=timezone.utc)
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return datetime.max.replace(tzinfo=timezone.utc)


def with_default_class(pvc: dict, classes: Iterable[dict]) -> dict:
    """The claim as the API server stores it when it is created: the DefaultStorageClass admission
    plugin (plugin/pkg/admission/storage/storageclass/setdefault/admission.go) gives a claim with
    neither spec.storageClassName nor the beta annotation (PersistentVolumeClaimHasClass) the
    default class, when there is one."""
    if spec(pvc).get("storageClassName") is not None or BETA_STORAGE_CLASS in annotations(pvc):
        return pvc
    name = default_class(classes)
    if name is None:
        return pvc
    return {**pvc, "spec": {**spec(pvc), "storageClassName": name}}


def binding_mode(storage_class: dict) -> str:
    """volumeBindingMode, Immediate when absent: the API server defaults it, so a StorageClass it
    has stored always has one (upstream's "VolumeBindingMode not set" error cannot be met)."""
    return storage_class.get("volumeBindingMode") or IMMEDIATE


def storage_amount(value: object) -> Amount:
    """A storage quantity's exact amount; 0 when absent or unparsable (the API server refuses
    such a quantity)."""
    amount = exact_amount(value) if value is not None else None
    return 0 if amount is None else amount


def value(amount: Amount) -> int:
    """Quantity.Value(): rounded up to a whole number."""
    if isinstance(amount, int):
        return amount
    return -(-amount.numerator // amount.denominator)


def requested_storage(pvc: dict) -> Amount | None:
    """spec.resources.requests.storage (exact), None when the claim requests none."""
    requests = (spec(pvc).get("resources") or {}).get("requests") or {}
    return storage_amount(requests["storage"]) if "storage" in requests else None


def pv_capacity(pv: dict) -> Amount:
    return storage_amount((spec(pv).get("capacity") or {}).get("storage"))


def pv_node_affinity_matches(pv: dict, node_labels: dict) -> bool:
    """volume.CheckNodeAffinity: the PV's spec.nodeAffinity.required against a node that has only
    the labels (upstream builds a Node with labels and no name, so a matchFields metadata.name
    term never matches). A term that does not parse is skipped (LazyErrorNodeSelector)."""
    required = (spec(pv).get("nodeAffinity") or {}).get("required")
    if required is None:
        return True
    for term in required.get("nodeSelectorTerms") or []:
        try:
            validate({"nodeSelectorTerms": [term]})
        except NodeSelectorError:
            continue
        if term_matches(term, "", node_labels):
            return True
    return False


def describe_pv_affinity(pv: dict) -> str:
    return describe((spec(pv).get("nodeAffinity") or {}).get("required")) or "<none>"


def format_bytes(amount: Amount) -> str:
    """A storage amount in the binary unit that shows it whole (10Gi, 1536Mi, 100 bytes)."""
    whole = value(amount)
    for unit, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if whole >= size and whole % size == 0:
            return f"{whole // size}{unit}"
    return f"{whole}"
