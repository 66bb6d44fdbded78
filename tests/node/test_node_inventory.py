"""`kubectl dra node inventory`: golden outputs, health verdicts, one-line failures."""

from __future__ import annotations

import json

import pynvml
import pytest
from fakenvml import NODE, a100_mig, h100

from kubectl_dra.node import inventory, nvml


def _three_gpus(machine):
    """H100 (healthy), A100 in MIG mode, and an H100 with uncorrected ECC errors and a pending
    row remap; one critical and one application XID arrive while sampling."""
    return machine([h100(0), a100_mig(1), h100(2, ecc=(12, 3, 40, 3), remapped=(4, 1, 1, 0))],
                   xids=[(2, 48), (0, 13)])


@pytest.mark.parametrize("output", ["table", "json", "yaml"])
def test_golden(machine, run_node, golden, output):
    _three_gpus(machine)
    result = run_node("inventory", "--node-name", NODE, "--xid-seconds", "0.1", "-o", output)
    assert result.exit_code == 0, result.output
    golden(f"inventory.{'txt' if output == 'table' else output}", result.stdout)


def test_json_is_parseable_and_says_na_for_unsupported(machine, run_node):
    machine([h100(0, ecc=None, remapped=None, mig_mode=None)])
    doc = json.loads(run_node("inventory", "--node-name", NODE, "-o", "json").stdout)
    health = doc["gpus"][0]["health"]
    assert health["eccErrors"]["volatileUncorrected"] == "n/a"
    assert health["retiredPages"] == "n/a" and health["remappedRows"] == "n/a"
    assert health["xid"] == "not sampled"
    assert doc["gpus"][0]["migMode"] == {"current": "n/a", "pending": "n/a"}


def test_health_verdicts(machine):
    _three_gpus(machine)
    system = nvml.read_system(xid_seconds=0.1)
    verdicts = [inventory.gpu_health(system, gpu) for gpu in system.gpus]
    assert [v.status for v in verdicts] == ["Healthy", "Healthy", "Unhealthy"]
    # XID 13 is an application error on GPU 0: not a health problem.
    assert verdicts[2].reasons == ("3 uncorrected ECC errors since the driver loaded",
                                   "row remapping pending: GPU reset required", "critical XID 48")


def test_failed_health_query_makes_the_gpu_unhealthy(machine):
    machine([h100(0, fail={"nvmlDeviceGetRemappedRows": pynvml.NVML_ERROR_UNKNOWN})])
    system = nvml.read_system()
    health = inventory.gpu_health(system, system.gpus[0])
    assert health.reasons == ("nvmlDeviceGetRemappedRows failed: Unknown Error",)


def test_missing_library_is_one_line_exit_2(machine, run_node):
    machine(library=False)
    result = run_node("inventory")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "error: NVML unavailable: NVML Shared Library Not Found\n"


def test_no_gpu_is_one_line_exit_2(machine, run_node):
    machine([])
    result = run_node("inventory", "-o", "json")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "error: no NVIDIA GPU found by NVML\n"


def test_nvml_error_mid_inventory_prints_nothing_else(machine, run_node):
    machine([h100(0), h100(1, fail={"nvmlDeviceGetPciInfo": pynvml.NVML_ERROR_GPU_IS_LOST})])
    result = run_node("inventory")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "error: NVML GPU 1: nvmlDeviceGetPciInfo failed: GPU is lost\n"
