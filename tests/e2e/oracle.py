"""Running draoracle (the upstream allocator) from Python: one snapshot, or many in one process."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from typing import Iterable

from . import harness


@dataclass
class OracleScenario:
    """What draoracle batch evaluates: API objects and a pod (or claim) to place."""

    id: str
    objects: list[dict]
    pod: str | None = None  # namespace/name
    claim: str | None = None  # namespace/name
    kubernetes_version: str = "1.37"
    feature_gates: dict[str, bool] | None = None

    def to_json(self) -> dict:
        line = {"id": self.id, "objects": self.objects, "kubernetesVersion": self.kubernetes_version}
        if self.pod:
            line["pod"] = self.pod
        if self.claim:
            line["claim"] = self.claim
        if self.feature_gates:
            line["featureGates"] = self.feature_gates
        return line


class OracleError(Exception):
    pass


def run_batch(scenarios: Iterable[OracleScenario], version: str = "1.37", timeout: float = 600) -> dict[str, dict]:
    """Evaluates all scenarios in one draoracle process; returns {id: answer}, where an answer is
    {"report": {...}} or {"error": "..."}."""
    scenarios = list(scenarios)
    payload = "".join(json.dumps(s.to_json(), separators=(",", ":")) + "\n" for s in scenarios)
    proc = subprocess.run([str(harness.oracle_path(version)), "batch"], input=payload, capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        raise OracleError(f"draoracle-{version} batch failed ({proc.returncode}): {proc.stderr.strip()}")
    answers = {}
    for line in proc.stdout.splitlines():
        answer = json.loads(line)
        answers[answer["id"]] = answer
    missing = [s.id for s in scenarios if s.id not in answers]
    if missing:
        raise OracleError(f"draoracle gave no answer for {len(missing)} scenarios, first {missing[0]}")
    return answers


def run_single(objects: list[dict], pod: str | None = None, claim: str | None = None, version: str = "1.37",
               feature_gates: str = "") -> dict:
    """Runs `draoracle FILE` on objects (fed on stdin) and returns its JSON report."""
    args = [str(harness.oracle_path(version))]
    if pod:
        args += ["--pod", pod]
    if claim:
        args += ["--claim", claim]
    if feature_gates:
        args += ["--feature-gates", feature_gates]
    args.append("-")
    stream = "".join(json.dumps(obj) + "\n" for obj in objects)
    proc = subprocess.run(args, input=stream, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise OracleError(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return json.loads(proc.stdout)
