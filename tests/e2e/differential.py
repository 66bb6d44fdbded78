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
from fractions import Fraction
from pathlib import Path

from .oracle import OracleScenario, run_batch
from .scenarios import Scenario, generate

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
            chosen = {claim: [normalize_result(r) for r in results]
                      for claim, results in zip(to_allocate, node["results"])}
        outcome[node["node"]] = (node["verdict"], chosen)
    return outcome


def python_outcome(scenario: Scenario, only_claims: set[str] | None = None) -> Outcome:
    """Runs the Python allocator; `only_claims` limits the compared choices to the claims the
    oracle allocated (claims allocated before are not chosen again)."""
    import allocator

    objects = allocator.load_objects(scenario.objects)
    features = allocator.Features.for_version(scenario.minor, overrides=dict(scenario.feature_gates) or None)
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


# Errors the search meets while it walks devices: which comes first depends on the pool order.
_SEARCH_TIME_ERRORS = ("CEL runtime error", "because a claim constraint would not be satisfied")


def _search_time_error(message: str) -> bool:
    return any(marker in message for marker in _SEARCH_TIME_ERRORS)


def _order_dependent_error(report: dict) -> bool:
    return any(n["verdict"] == "Error" and _search_time_error(n["error"]) for n in report["nodes"])


def _python_search_time_error(scenario: Scenario) -> bool:
    import allocator

    objects = allocator.load_objects(scenario.objects)
    features = allocator.Features.for_version(scenario.minor, overrides=dict(scenario.feature_gates) or None)
    explanation = allocator.explain_pod(objects, scenario.pod[0], scenario.pod[1], features)
    return any(n.verdict == "Error" and _search_time_error(n.message) for n in explanation.nodes)


def _deterministic(scenario: Scenario) -> bool:
    import allocator

    features = allocator.Features.for_version(scenario.minor, overrides=dict(scenario.feature_gates) or None)
    return features.deterministic_order


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


def oracle_scenario(scenario: Scenario) -> OracleScenario:
    return OracleScenario(id=scenario.id, objects=scenario.objects, pod="/".join(scenario.pod),
                          kubernetes_version=scenario.kubernetes_version,
                          feature_gates=dict(scenario.feature_gates) or None)


def check(scenarios: list[Scenario], version: str) -> dict[str, list[str]]:
    """Runs every scenario through one draoracle process and through the Python allocator;
    returns {scenario id: differences} for the scenarios that disagree."""
    answers = run_batch([oracle_scenario(s) for s in scenarios], version=version)
    disagreements = {}
    for scenario in scenarios:
        answer = answers[scenario.id]
        if "error" in answer:
            disagreements[scenario.id] = [f"draoracle could not evaluate the scenario: {answer['error']}"]
            continue
        theirs = oracle_outcome(answer["report"])
        only = {c["claim"] for c in answer["report"]["claims"] if not c["allocated"]}
        try:
            ours = python_outcome(scenario, only)
        except Exception as err:  # a crash is a disagreement like any other
            disagreements[scenario.id] = [f"the Python allocator raised {type(err).__name__}: {err}"]
            continue
        ours = {node: o for node, o in ours.items() if node in theirs}
        if not _deterministic(scenario):
            # Up to 1.35, and in the stable allocator, pools are tried in Go map order: the chosen
            # devices are not comparable, and neither is whether the search meets a device whose
            # selector fails at run time (an Error) before it finds a fit.
            ours = {node: (verdict, {}) for node, (verdict, _) in ours.items()}
            theirs = {node: (verdict, {}) for node, (verdict, _) in theirs.items()}
            if _order_dependent_error(answer["report"]) or (
                    any(v == "Error" for v, _ in ours.values()) and _python_search_time_error(scenario)):
                continue
        diffs = compare(ours, theirs)
        if diffs:
            disagreements[scenario.id] = diffs
    return disagreements


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
    answer = run_batch([oracle_scenario(scenario)], version=scenario.kubernetes_version)[scenario.id]
    print("# draoracle:", json.dumps(answer, indent=1))
    diffs = check([scenario], scenario.kubernetes_version).get(scenario.id, [])
    print("# differences:" if diffs else "# no differences", *diffs, sep="\n# ")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
