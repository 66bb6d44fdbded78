"""The CEL engine (cel-expr-python and protobuf, ~0.025 s of CPU beside a command's other imports)
is loaded only when an object holds an expression to compile (issue 18): a file of ResourceSlices and Nodes, the commonest dump,
never loads it; a DeviceClass with a selector does, and its errors still read the same."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from kubectl_dra.cli import main
sys.argv = ["kubectl-dra", "--from", sys.argv[1], "pools", "-o", "json"]
sys.exit(main())
"""

SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
         "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n",
                  "devices": [{"name": "d", "attributes": {"model": {"string": "a"}}}]}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}


def _class(expression: str | None) -> dict:
    spec = {"selectors": [{"cel": {"expression": expression}}]} if expression is not None else {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": spec}


def _loads_cel(tmp_path, items: list[dict]) -> tuple[bool, subprocess.CompletedProcess]:
    path = tmp_path / "objects.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", PROBE, str(path)], cwd=ROOT,
                            capture_output=True, text=True)
    loaded = any(line.startswith("import time:") and line.split("|")[-1].strip() == "allocator.cel"
                 for line in result.stderr.splitlines())
    return loaded, result


def test_slices_and_a_class_without_selectors_do_not_load_cel(tmp_path):
    loaded, result = _loads_cel(tmp_path, [SLICE, NODE, _class(None)])
    assert result.returncode == 0 and '"gpu.example.com"' in result.stdout, result.stdout + result.stderr[-2000:]
    assert not loaded


def test_a_selector_loads_cel_and_a_broken_one_is_refused(tmp_path):
    loaded, result = _loads_cel(tmp_path, [SLICE, NODE, _class('device.driver == "gpu.example.com"')])
    assert loaded
    loaded, result = _loads_cel(tmp_path, [SLICE, NODE, _class("device.driver == ")])
    assert loaded
    assert result.returncode != 0
    assert "DeviceClass/gpu: spec.selectors[0].cel.expression: Invalid value: compilation failed" in result.stderr
