"""Comparing the Python allocator (allocator.explain_pod) with draoracle on the same scenario.

Reproduce one generated scenario (prints its YAML, both answers and the differences):
    .venv/bin/python -m tests.e2e.differential --seed 17 --minor 37
or a stored one:
    .venv/bin/python -m tests.e2e.differential --file tests/e2e/regressions/37-17.yaml
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

from .oracle import OracleScenario, run_batch
from .scenarios import CLASSES, Scenario, exercised, generate

REGRESSIONS_DIR = Path(__file__).parent / "regressions"

# Per node: (verdict, {claim "namespace/name": [normalized allocation results]}).
Outcome = dict[str, tuple[str, dict[str, list[dict]]]]

_QUANTITY = re.compile(r"^([+-]?[0-9.]+)(e[+-]?[0-9]+|E[+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")
_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60, "n": Fraction(1, 10**9),
           "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1, "k": 10**3, "M": 10**6, "G": 10**9,
           "T": 10**12, "P": 10**15, "E": 10**18}


def quantity_value(text: str) -> Fraction | str:
    """The numeric value of a Kubernetes quantity, so that "1Gi" equals "1024Mi"; unparsable
    text is returned unchanged and compared as text."""
    match = _QUANTITY.match(str(text).strip())
    if not match:
        return str(text)
    number, suffix = Fraction(match.group(1)), match.group(2) or ""
    if suffix[:1] in ("e", "E") and len(suffix) > 1:
        return number * Fraction(10) ** int(suffix[1:])
    return number * _SUFFIX[suffix]


def _is_unset(value) -> bool:
    return value is None or value is False or value == "" or value == [] or value == {}


def _without_unset(value):
    if isinstance(value, dict):
        return {k: _without_unset(v) for k, v in value.items() if not _is_unset(v)}
    if isinstance(value, list):
        return [_without_unset(v) for v in value]
    return value


def normalize_result(result: dict) -> dict:
    """An allocation result in a form both sides agree on: absent, empty, false and null fields are
    the same (the API omits them); share IDs are random UUIDs, so only their presence counts;
    quantities compare by value."""
    out = _without_unset(result)
    if "shareID" in out:
        out["shareID"] = "<present>"
    if "consumedCapacity" in out:
        out["consumedCapacity"] = {name: str(quantity_value(q)) for name, q in out["consumedCapacity"].items()}
    return out


def claim_key(key) -> str:
    if isinstance(key, (tuple, list)):
        return "/".join(str(part) for part in key)
    return str(key)


TIMEOUT_MESSAGE = "timed out trying to allocate devices"
EXTENDED_CLAIM = "<extended-resources>"  # the scheduler's in-memory claim (kubectl_dra.scheduling.extended)


def oracle_outcome(report: dict) -> Outcome:
    """The oracle's outcome per node. Nodes where upstream hit the scheduler's filter timeout are
    left out: whether a search ends within 10 s depends on the machine, not on the semantics."""
    to_allocate = [c["claim"] for c in report["claims"] if not c["allocated"]]
    outcome: Outcome = {}
    for node in report["nodes"]:
        if node["verdict"] == "Error" and TIMEOUT_MESSAGE in node["error"]:
            continue
        chosen = {}
        if node["verdict"] == "Fits":
            # The scheduler's claim for extended resources gets no devices on nodes whose device
            # plugins provide them all: nothing is allocated there.
            chosen = {claim: [normalize_result(r) for r in results]
                      for claim, results in zip(to_allocate, node["results"])
                      if results or not claim.endswith("/" + EXTENDED_CLAIM)}
        outcome[node["node"]] = (node["verdict"], chosen)
    return outcome


def python_outcome(scenario: Scenario, only_claims: set[str] | None = None) -> Outcome:
    """Runs the Python allocator; `only_claims` limits the compared choices to the claims the
    oracle allocated (claims allocated before are not chosen again)."""
    import allocator

    objects = allocator.load_objects(scenario.objects)
    features = allocator.Features.for_version(scenario.minor, overrides=dict(scenario.feature_gates) or None)
    if has_extended_requests(scenario):
        return _dynamic_resources_outcome(objects, scenario, features, only_claims)
    explanation = allocator.explain_pod(objects, scenario.pod[0], scenario.pod[1], features)
    outcome: Outcome = {}
    for node in explanation.nodes:
        chosen = {}
        if node.verdict == "Fits":
            for key, results in node.chosen:
                key = claim_key(key)
                if only_claims is None or key in only_claims:
                    chosen[key] = [normalize_result(r) for r in results]
        outcome[node.node] = (node.verdict, chosen)
    return outcome


def has_extended_requests(scenario: Scenario) -> bool:
    """Whether the pod's containers ask for extended resources (DRAExtendedResource's domain)."""
    from kubectl_dra.scheduling.resources import container_requests

    pod = next(o for o in scenario.objects if o["kind"] == "Pod" and (
        (o["metadata"].get("namespace") or "default"), o["metadata"]["name"]) == tuple(scenario.pod))
    spec = pod.get("spec") or {}
    return any("/" in name for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
               for name in container_requests(c))


def _dynamic_resources_outcome(objects, scenario: Scenario, features, only_claims: set[str] | None) -> Outcome:
    """The DynamicResources plugin's verdict per node (kubectl_dra.scheduling), which builds the
    scheduler's claim for extended resources backed by DRA around the allocator, as draoracle does.
    Other plugins (NodeResourcesFit for resources the node advertises) are not draoracle's to judge."""
    from kubectl_dra.scheduling import framework
    from kubectl_dra.scheduling.plugins import dynamic_resources
    from kubectl_dra.scheduling.status import Code

    pod = objects.pods[tuple(scenario.pod)]
    cycle = framework.new_cycle(pod, objects, features)
    _, pre = dynamic_resources.pre_filter(cycle)
    verdicts = cycle.state.get(dynamic_resources.NAME, {})
    outcome: Outcome = {}
    for name in sorted(cycle.node_infos):
        status = pre if pre.code == Code.SKIP or pre.rejected else dynamic_resources.filter(cycle, cycle.node_infos[name])
        if status.code in (Code.SUCCESS, Code.SKIP):
            chosen = {}
            verdict = verdicts.get(name)
            for key, results in (verdict.chosen if verdict is not None else ()):
                key = claim_key(key)
                if only_claims is None or key in only_claims:
                    chosen[key] = [normalize_result(r) for r in results]
            outcome[name] = ("Fits", chosen)
        else:
            outcome[name] = ("Error" if status.code == Code.ERROR else "Unschedulable", {})
    return outcome


def deterministic(scenario: Scenario) -> bool:
    import allocator

    features = allocator.Features.for_version(scenario.minor, overrides=dict(scenario.feature_gates) or None)
    return features.deterministic_order


# Enumerating every order is factorial; scenarios have at most a few pools of a few slices each, so this
# bound is only reached by a scenario that disagrees anyway (then the message says the search was cut).
MAX_ORDERS = 5000


def _pool_orders(pools: list) -> "Iterator[list]":
    """Every order in which a scheduler that walks Go maps can try these pools: any permutation of the
    pools and, inside each pool, of its slices (the informer's list order) — pools with binding
    conditions stay last, as upstream appends them after the others."""
    import dataclasses
    import itertools

    plain = [p for p in pools if not p.has_binding_conditions]
    last = [p for p in pools if p.has_binding_conditions]

    def slice_orders(pool):
        for slices in itertools.permutations(pool.slices_targeting_node):
            yield dataclasses.replace(pool, slices_targeting_node=list(slices))

    def group_orders(group):
        for permutation in itertools.permutations(group):
            yield from itertools.product(*(slice_orders(p) for p in permutation))

    for first in group_orders(plain):
        for second in group_orders(last):
            yield [*first, *second]


def reachable_verdicts(scenario: Scenario, node: str, wanted: str | None = None) -> tuple[set[str], bool]:
    """The verdicts our allocator reaches on `node` under every order of pools and slices a map-order
    scheduler may use; stops early once `wanted` is reached. Returns (verdicts, complete)."""
    import allocator

    objects = allocator.load_objects(scenario.objects)
    features = allocator.Features.for_version(scenario.minor, overrides=dict(scenario.feature_gates) or None)
    verdicts: set[str] = set()
    orders = None

    def first_order(_node, pools):
        nonlocal orders
        orders = _pool_orders(pools)
        return next(orders)

    def next_order(_node, _pools):
        return current

    namespace, name = scenario.pod
    explanation = allocator.explain_pod(objects, namespace, name, features, node=node, pool_order=first_order)
    verdicts.add(explanation.nodes[0].verdict)
    tried = 1
    for current in orders or ():  # noqa: B007 (next_order hands the loop's order to the allocator)
        if wanted in verdicts:
            return verdicts, False
        if tried >= MAX_ORDERS:
            return verdicts, False
        explanation = allocator.explain_pod(objects, namespace, name, features, node=node, pool_order=next_order)
        verdicts.add(explanation.nodes[0].verdict)
        tried += 1
    return verdicts, True


def _order_dependent_diffs(scenario: Scenario, ours: Outcome, theirs: Outcome) -> list[str]:
    """For a scheduler that tries pools in map order: the oracle's verdict on a node must be one that
    some order of pools and slices produces in our allocator; chosen devices are not comparable."""
    diffs = []
    for node in sorted(set(ours) | set(theirs)):
        if node not in ours or node not in theirs:
            diffs += compare({n: o for n, o in ours.items() if n == node}, {n: o for n, o in theirs.items() if n == node})
            continue
        their_verdict = theirs[node][0]
        if ours[node][0] == their_verdict:
            continue
        reachable, complete = reachable_verdicts(scenario, node, wanted=their_verdict)
        if their_verdict not in reachable:
            searched = "every order" if complete else f"the first {MAX_ORDERS} orders"
            diffs.append(f"{node}: oracle {their_verdict}; our verdicts over {searched} of pools and slices: "
                         f"{', '.join(sorted(reachable))}")
    return diffs


def compare(ours: Outcome, theirs: Outcome) -> list[str]:
    """Differences, one line each, between our outcome and the oracle's."""
    diffs = []
    for node in sorted(set(ours) | set(theirs)):
        if node not in ours:
            diffs.append(f"{node}: missing in our answer (oracle: {theirs[node][0]})")
            continue
        if node not in theirs:
            diffs.append(f"{node}: not in the oracle's answer (ours: {ours[node][0]})")
            continue
        (our_verdict, our_chosen), (their_verdict, their_chosen) = ours[node], theirs[node]
        if our_verdict != their_verdict:
            diffs.append(f"{node}: verdict {our_verdict}, oracle {their_verdict}")
        elif our_chosen != their_chosen:
            diffs.append(f"{node}: chose {json.dumps(our_chosen, sort_keys=True)}, "
                         f"oracle {json.dumps(their_chosen, sort_keys=True)}")
    return diffs


def oracle_scenario(scenario: Scenario, run: int = 0) -> OracleScenario:
    return OracleScenario(id=f"{scenario.id}#{run}" if run else scenario.id, objects=scenario.objects,
                          pod="/".join(scenario.pod), kubernetes_version=scenario.kubernetes_version,
                          feature_gates=dict(scenario.feature_gates) or None)


def check(scenarios: list[Scenario], version: str, runs: int = 1) -> dict[str, list[str]]:
    """Runs every scenario `runs` times through one draoracle process (each run is a fresh Allocate, so
    a map-order scheduler meets another order) and once through the Python allocator; returns
    {scenario id: differences} for the scenarios where some run disagrees."""
    answers = run_batch([oracle_scenario(s, run) for s in scenarios for run in range(runs)], version=version)
    disagreements: dict[str, list[str]] = {}
    for scenario in scenarios:
        ours_by_node: Outcome | None = None
        for run in range(runs):
            answer = answers[oracle_scenario(scenario, run).id]
            if "error" in answer:
                diffs = [f"draoracle could not evaluate the scenario: {answer['error']}"]
            else:
                theirs = oracle_outcome(answer["report"])
                only = {c["claim"] for c in answer["report"]["claims"] if not c["allocated"]}
                try:
                    if ours_by_node is None:
                        ours_by_node = python_outcome(scenario, only)
                    diffs = _diffs(scenario, ours_by_node, theirs)
                except Exception as err:  # a crash is a disagreement like any other
                    diffs = [f"the Python allocator raised {type(err).__name__}: {err}"]
            if diffs:
                prefix = f"oracle run {run + 1} of {runs}: " if runs > 1 else ""
                disagreements[scenario.id] = [prefix + d for d in diffs]
                break
    return disagreements


def _diffs(scenario: Scenario, ours: Outcome, theirs: Outcome) -> list[str]:
    ours = {node: o for node, o in ours.items() if node in theirs}
    if deterministic(scenario):
        return compare(ours, theirs)
    # Up to 1.35, and in the stable allocator, pools are tried in Go map order.
    return _order_dependent_diffs(scenario, ours, theirs)


def reproduce_command(scenario: Scenario, stored: Path | None = None) -> str:
    if stored is not None:
        return f".venv/bin/python -m tests.e2e.differential --file {stored}"
    return f".venv/bin/python -m tests.e2e.differential --seed {scenario.seed} --minor {scenario.minor}"


def store_regression(scenario: Scenario, diffs: list[str]) -> Path:
    """Keeps a disagreeing scenario as a fixture that tests/e2e/test_differential.py replays."""
    REGRESSIONS_DIR.mkdir(exist_ok=True)
    path = REGRESSIONS_DIR / f"{scenario.id}.yaml"
    comment = "".join(f"# {line}\n" for line in ["Found by the differential test; differences then:", *diffs])
    path.write_text(comment + scenario.to_yaml())
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--seed", type=int, help="generate the scenario with this seed")
    source.add_argument("--file", type=Path, help="a stored scenario (tests/e2e/regressions/*.yaml)")
    parser.add_argument("--minor", type=int, default=37, choices=(34, 35, 36, 37), help="Kubernetes minor version")
    args = parser.parse_args(argv)
    scenario = Scenario.from_yaml(args.file.read_text()) if args.file else generate(args.seed, args.minor)
    print(scenario.to_yaml())
    print("# exercises:", ", ".join(name for name in CLASSES if name in exercised(scenario)) or "none of the classes")
    answer = run_batch([oracle_scenario(scenario)], version=scenario.kubernetes_version)[scenario.id]
    print("# draoracle:", json.dumps(answer, indent=1))
    diffs = check([scenario], scenario.kubernetes_version).get(scenario.id, [])
    print("# differences:" if diffs else "# no differences", *diffs, sep="\n# ")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
