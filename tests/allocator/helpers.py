"""Run the allocator on built objects and read verdicts per node."""

import allocator


def explain(objects, target=("default", "p"), minor=37, gates=None, node=None):
    objs = allocator.load_objects(objects)
    assert not objs.errors, [str(e) for e in objs.errors]
    features = allocator.Features.for_version(minor, gates)
    namespace, name = target
    if (namespace, name) in objs.pods:
        return allocator.explain_pod(objs, namespace, name, features, node=node)
    return allocator.explain_claim(objs, namespace, name, features, node=node)


def verdicts(exp):
    return {v.node: v.verdict for v in exp.nodes}


def chosen(exp, node):
    """[(request, device)] of the first claim to allocate on that node."""
    verdict = next(v for v in exp.nodes if v.node == node)
    results = [r for _, rs in verdict.chosen for r in rs]
    return [(r["request"], f'{r["pool"]}/{r["device"]}') for r in results]


def node_verdict(exp, node):
    return next(v for v in exp.nodes if v.node == node)


def request_outcome(exp, node, request, claim_index=0):
    v = node_verdict(exp, node)
    claims = [c for c in v.claims if c.state != "Allocated"]
    return next(r for r in claims[claim_index].requests if r.name == request)
