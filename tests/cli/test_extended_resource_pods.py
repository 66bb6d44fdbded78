"""A pod that asks for an extended resource a DeviceClass backs (the demo's ml-training/gpu-smoke-test:
`nvidia.com/gpu: 1`, no resourceClaims) is a pod DRA concerns on every face: doctor's pending
pods, the exporter's dra_pending_pods, the dashboard's Pods table and explain."""

from __future__ import annotations

import copy
import datetime
import json

import allocator
from kubectl_dra.metrics.derive import MetricsBuilder
from kubectl_dra.model.incremental import take_snapshot
from kubectl_dra.scheduling.extended import backed_resources, concerns_dra
from kubectl_dra.sources.files import demo_store
from tui.views.claims import pod_rows

SMOKE = ("ml-training", "gpu-smoke-test")
PENDING = {("ml-training", "gpu-smoke-test"), ("ml-training", "trainer-2"), ("research", "big-model-train")}


def test_every_face_counts_the_same_pending_pods(run_cli, isolated_kubeconfig):
    doctor = json.loads(run_cli("--demo", "doctor", "--only", "claims.pending-pods", "-o", "json").stdout)
    assert {tuple(name.split("/")[1:]) for name in doctor["checks"][0]["objects"]} == PENDING

    store = demo_store()
    builder, snapshot, now = MetricsBuilder(), take_snapshot(store), datetime.datetime.now(datetime.timezone.utc)
    builder.build(snapshot, now, clock=0.0)
    builder.explain_pending(snapshot, clock=0.0)
    pending = dict(builder.build(snapshot, now, clock=0.0).family("dra_pending_pods").samples)
    assert pending == {("ml-training", "WaitingForScheduler"): 2, ("research", "PoolIncomplete"): 1}

    objects = store.object_set()
    rows = {row.key[1:]: row.cells for row in pod_rows(objects.pods, None,
                                                        backed_resources(objects.device_classes, store.features()))}
    assert {key for key, cells in rows.items() if cells[2] == "pending"} == PENDING
    assert rows[SMOKE][3] == "nvidia.com/gpu (extended resource)"

    explained = run_cli("--demo", "explain", "-n", "ml-training", "pod/gpu-smoke-test")
    assert explained.status == 0 and "Verdict: Fits" in explained.stdout


def test_a_bound_pod_concerns_dra_only_when_the_scheduler_allocated_its_extended_resources():
    store = demo_store()
    objects = store.object_set()
    backed = backed_resources(objects.device_classes, store.features())
    pod = copy.deepcopy(objects.pods[SMOKE])
    assert concerns_dra(pod, backed)
    pod["spec"]["nodeName"] = "gpu-node-2"
    assert not concerns_dra(pod, backed)  # a device plugin on the node gave it the GPU
    pod.setdefault("status", {})["extendedResourceClaimStatus"] = {"resourceClaimName": "gpu-smoke-test-extended-resources-x",
                                                    "requestMappings": []}
    assert concerns_dra(pod, backed)
    off = allocator.Features.for_version(37, overrides={"DRAExtendedResource": False})
    assert backed_resources(objects.device_classes, off) == {}
