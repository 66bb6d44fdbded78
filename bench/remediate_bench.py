"""Remediation planner memory and time under health churn (issue 30).

P pools of 8 devices, one allocated claim per device; every pass a random share of the devices
flips its driver condition Ready=False/True (with lastTransitionTime now), the planner plans with
one Memory kept across passes (as the controller does), and its create/change/delete steps are
applied to the objects (owned rules added, changed, removed) before the next pass. Every --sample
seconds the bench records the current RSS and the mean plan time.

Target: after the first minute, RSS grows by at most 10%.
Run: .venv/bin/python bench/remediate_bench.py [--pools 100] [--flip 0.05] [--minutes 10]
"""

from __future__ import annotations

import argparse
import datetime
import random
import time

from process_memory import rss_mb  # the script's folder is on sys.path

import allocator
from kubectl_dra.remediation.planner import Memory, plan, written_rule
from kubectl_dra.remediation.policy import parse_policy

DRIVER = "gpu.example.com"
V1 = "resource.k8s.io/v1"
POLICY = """
name: bench
rules:
- {signal: driverCondition, conditionType: Ready, conditionStatus: "False", after: 0, effect: NoSchedule, clearAfter: 0}
limit: {maxPercent: 50}
"""


def world(pools: int) -> tuple[list[dict], dict[tuple[str, str], dict]]:
    slices, claims = [], {}
    for p in range(pools):
        node = f"node-{p}"
        slices.append({"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
                       "spec": {"driver": DRIVER, "nodeName": node,
                                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                                "devices": [{"name": f"gpu-{i}"} for i in range(8)]}})
        for i in range(8):
            result = {"request": "gpu", "driver": DRIVER, "pool": node, "device": f"gpu-{i}"}
            claims[(node, f"gpu-{i}")] = {
                "apiVersion": V1, "kind": "ResourceClaim",
                "metadata": {"name": f"{node}-gpu-{i}", "namespace": "ml", "uid": f"{node}-{i}"},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
                "status": {"allocation": {"devices": {"results": [result]}},
                           "devices": [{"driver": DRIVER, "pool": node, "device": f"gpu-{i}", "conditions": [{
                               "type": "Ready", "status": "True", "reason": "Ok", "message": "",
                               "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]}}
    return slices, claims


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pools", type=int, default=100)
    parser.add_argument("--flip", type=float, default=0.05)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--sample", type=float, default=60)
    args = parser.parse_args()
    policy, features, memory = parse_policy(POLICY), allocator.Features.for_version(35), Memory()
    slices, claims = world(args.pools)
    rules: dict[str, dict] = {}
    rng = random.Random(30)
    started = next_sample = time.monotonic()
    samples, times, passes, acted = [], [], 0, 0
    while time.monotonic() - started < args.minutes * 60:
        now = time.time()
        stamp = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        for key in rng.sample(sorted(claims), max(1, int(len(claims) * args.flip))):
            condition = claims[key]["status"]["devices"][0]["conditions"][0]
            condition.update({"status": "False" if condition["status"] == "True" else "True",
                              "lastTransitionTime": stamp})
        clock = time.perf_counter()
        steps = plan(policy, allocator.load_objects([*slices, *claims.values(), *rules.values()]), features,
                     memory, now, V1)
        times.append(time.perf_counter() - clock)
        for step in steps:
            if step.action in ("create", "change"):
                rule = written_rule(step)
                rules[rule["metadata"]["name"]] = rule
            elif step.action == "delete" and step.rule_name:
                rules.pop(step.rule_name, None)
        acted += sum(1 for s in steps if s.acts)
        passes += 1
        if time.monotonic() >= next_sample:
            samples.append((time.monotonic() - started, rss_mb(), sum(times) / len(times), len(rules)))
            print(f"{samples[-1][0]:6.0f}s  RSS {samples[-1][1]:7.1f} MiB  plan {samples[-1][2] * 1000:7.1f} ms  "
                  f"rules {samples[-1][3]}  passes {passes}  steps acted {acted}", flush=True)
            times, next_sample = [], next_sample + args.sample
    baseline = samples[1][1] if len(samples) > 1 else samples[0][1]
    print(f"devices {len(claims)}, passes {passes}, steps acted {acted}; RSS after the first minute "
          f"{baseline:.1f} MiB, at the end {rss_mb():.1f} MiB ({(rss_mb() / baseline - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
