"""`kubectl dra node match`: published devices of any driver <-> local GPUs <-> claims and pods."""

from __future__ import annotations

import json
from pathlib import Path

from fakenvml import NODE, a100_mig, h100

SNAPSHOT = str(Path(__file__).parent / "fixtures" / "node-snapshot.yaml")


def test_golden_table(machine, run_node, golden):
    machine()
    result = run_node("match", "--node-name", NODE, "--from", SNAPSHOT)
    assert result.exit_code == 0, result.output
    golden("match.txt", result.stdout)


def test_both_drivers_map_to_the_same_physical_gpu(machine, run_node):
    machine()
    doc = json.loads(run_node("match", "--node-name", NODE, "--from", SNAPSHOT, "-o", "json").stdout)
    gpu0 = {(row["driver"], row["device"]): row for row in doc["devices"]
            if row["local"] and row["local"]["device"] == "GPU 0"}
    assert set(gpu0) == {("gpu.nvidia.com", "gpu-0"), ("node.kubectl-dra.io", "gpu-0")}
    nvidia = gpu0[("gpu.nvidia.com", "gpu-0")]
    assert nvidia["matchedBy"] == "uuid"
    assert nvidia["holders"] == [{"claim": {"namespace": "ml", "name": "nvidia-train"},
                                  "request": "gpu", "pods": [{"namespace": "ml", "name": "nv-trainer"}]}]
    ours = gpu0[("node.kubectl-dra.io", "gpu-0")]
    assert [h["claim"]["name"] for h in ours["holders"]] == ["train"]
    # gpu-node-2's slice is not this node's.
    assert all(row["pool"] == NODE for row in doc["devices"])
    # The A100 itself is in MIG mode and published only through its MIG devices.
    assert doc["unpublished"] == [{"device": "GPU 1", "uuid": "GPU-a1000000-0000-4000-8000-000000000001"}]


def test_pci_bus_id_matches_when_the_uuid_is_unknown(machine, run_node):
    # A replaced H100 in the same slot: new UUID, same PCI address.
    machine([h100(0, uuid="GPU-99999999-0000-4000-8000-000000000000"), a100_mig(1)])
    doc = json.loads(run_node("match", "--node-name", NODE, "--from", SNAPSHOT, "-o", "json").stdout)
    row = next(r for r in doc["devices"] if (r["driver"], r["device"]) == ("gpu.nvidia.com", "gpu-0"))
    assert row["matchedBy"] == "pciBusID"
    assert row["local"] == {"device": "GPU 0", "uuid": "GPU-99999999-0000-4000-8000-000000000000"}


def test_published_device_without_local_match(machine, run_node):
    machine([h100(0)])  # the A100 is gone
    doc = json.loads(run_node("match", "--node-name", NODE, "--from", SNAPSHOT, "-o", "json").stdout)
    missing = [r for r in doc["devices"] if r["local"] is None]
    assert {r["device"] for r in missing} == {"gpu-1-mig-1g5gb-19-6", "gpu-1-mig-2g10gb-14-4",
                                              "gpu-1-mig-3g20gb-9-0"}
