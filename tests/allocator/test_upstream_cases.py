"""The Python allocator meets the expectations of tests/e2e/upstream_cases.py (behaviours the
upstream allocator's own tests pin); draoracle is held to the same ones in tests/e2e."""

import pytest

import allocator
from e2e.upstream_cases import CASES


def outcome(case):
    objs = allocator.load_objects(case.objects)
    assert not objs.errors, [str(e) for e in objs.errors]
    features = allocator.Features.for_version(case.minor, case.gates or None)
    namespace, name = case.pod.split("/")
    exp = allocator.explain_pod(objs, namespace, name, features)
    verdicts = {v.node: v.verdict for v in exp.nodes}
    chosen = {v.node: [f"{key[1] if isinstance(key, tuple) else key.split('/')[-1]}:{r['request']}:{r['pool']}/{r['device']}"
                       for key, results in v.chosen for r in results] for v in exp.nodes if v.verdict == "Fits"}
    return verdicts, chosen, exp


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_python_allocator_meets_the_upstream_expectation(case):
    verdicts, chosen, exp = outcome(case)
    assert verdicts == case.verdicts, [(v.node, v.verdict, v.message) for v in exp.nodes]
    for node, expected in case.chosen.items():
        assert chosen[node] == expected
