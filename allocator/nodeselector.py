"""core/v1 NodeSelector matching, as k8s.io/component-helpers scheduling/corev1/nodeaffinity.

Terms are ORed; inside a term every matchExpression and matchField must hold; an empty term
selects nothing. matchFields supports only `metadata.name` with In/NotIn. An invalid selector
is an error (the allocator reports it as fatal, like upstream).
"""

from __future__ import annotations


class NodeSelectorError(ValueError):
    pass


def _check(req: dict, fields: bool) -> None:
    op, values = req.get("operator"), req.get("values") or []
    if fields:
        if req.get("key") != "metadata.name":
            raise NodeSelectorError(f"not a valid field selector key: {req.get('key')!r}")
        if op not in ("In", "NotIn"):
            raise NodeSelectorError(f"{op!r} is not a valid node field selector operator")
        if len(values) != 1:
            raise NodeSelectorError(f"unexpected number of value ({len(values)}) for node field selector operator {op!r}")
    if op in ("In", "NotIn"):
        if not values:
            raise NodeSelectorError(f"values must be non-empty for operator {op}")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            raise NodeSelectorError(f"values must be empty for operator {op}")
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            raise NodeSelectorError(f"exactly one value is required for operator {op}")
        try:
            int(values[0])
        except ValueError:
            raise NodeSelectorError(f"value {values[0]!r} must be an integer for operator {op}") from None
    else:
        raise NodeSelectorError(f"{op!r} is not a valid node selector operator")


def validate(selector: dict) -> None:
    for term in selector.get("nodeSelectorTerms") or []:
        for req in term.get("matchExpressions") or []:
            _check(req, fields=False)
        for req in term.get("matchFields") or []:
            _check(req, fields=True)


def _requirement_matches(req: dict, value: str | None) -> bool:
    op, values = req["operator"], req.get("values") or []
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if value is None:
        return False
    try:
        actual, wanted = int(value), int(values[0])
    except ValueError:
        return False
    return actual > wanted if op == "Gt" else actual < wanted


def term_matches(term: dict, node_name: str, labels: dict) -> bool:
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    for req in expressions:
        if not _requirement_matches(req, labels.get(req["key"])):
            return False
    for req in fields:
        if not _requirement_matches(req, node_name):
            return False
    return True


def matches(selector: dict, node: dict) -> bool:
    """True if the node satisfies the selector. Raises NodeSelectorError if it is invalid."""
    validate(selector)
    meta = node.get("metadata") or {}
    name, labels = meta.get("name", ""), meta.get("labels") or {}
    return any(term_matches(term, name, labels) for term in selector.get("nodeSelectorTerms") or [])


def node_matches(node: dict, node_name: str | None, all_nodes: bool, selector: dict | None) -> bool:
    """Upstream NodeMatches: nodeName, then allNodes, then nodeSelector; nothing set matches nothing."""
    if node_name:
        return (node.get("metadata") or {}).get("name") == node_name
    if all_nodes:
        return True
    if selector is not None:
        return matches(selector, node)
    return False


def describe(selector: dict | None) -> str:
    """A compact one-line rendering: `gpu=a100,zone in (a,b) | metadata.name=n1`."""
    if not selector:
        return ""
    terms = []
    for term in selector.get("nodeSelectorTerms") or []:
        parts = []
        for req in (term.get("matchExpressions") or []) + (term.get("matchFields") or []):
            key, op, values = req.get("key"), req.get("operator"), req.get("values") or []
            if op == "In" and len(values) == 1:
                parts.append(f"{key}={values[0]}")
            elif op in ("In", "NotIn"):
                parts.append(f"{key} {'in' if op == 'In' else 'notin'} ({','.join(values)})")
            elif op == "Exists":
                parts.append(key)
            elif op == "DoesNotExist":
                parts.append(f"!{key}")
            else:
                parts.append(f"{key} {'>' if op == 'Gt' else '<'} {values[0] if values else ''}")
        terms.append(",".join(parts) or "<empty term>")
    return " | ".join(terms)
