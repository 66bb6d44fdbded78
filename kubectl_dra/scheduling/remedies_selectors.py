"""The relax-selector remedy: a claim's CEL comparison over a device attribute or capacity, moved to
the nearest value a free device has.

Only comparisons of one attribute or capacity with a literal are relaxed, in the forms people write:
`device.capacity['d'].memory.compareTo(quantity('80Gi')) >= 0`, `...isGreaterThan(quantity('80Gi'))`,
`...isLessThan(semver('1.2.3'))` and `device.attributes['d'].index >= 2`. The clause is rewritten in
place (the rest of the expression stays), inclusive, and the target is judged again.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from allocator import Device
from allocator.codes import REQUEST_SELECTOR

from .explanation import Remedy
from .remedies_search import RELAX, Editable, Search, edited_spec, nodes_text, request_spec

_QUOTED = r"""(?:'[^'\\]*'|"[^"\\]*")"""
_REF = rf"device\.(?P<map>attributes|capacity)\[(?P<domain>{_QUOTED})\]\.(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
_LITERAL = rf"(?P<fn>quantity|semver)\((?P<literal>{_QUOTED})\)"
_COMPARE_TO = re.compile(rf"{_REF}\.compareTo\({_LITERAL}\)\s*(?P<op>>=|<=|>|<)\s*0(?![\d.])")
_IS = re.compile(rf"(?P<negated>!\s*)?{_REF}\.(?P<method>isGreaterThan|isLessThan)\({_LITERAL}\)")
_INT = re.compile(rf"{_REF}\s*(?P<op>>=|<=|>|<)\s*(?P<number>-?\d+)(?![\d.])")
_NEGATED = {">": "<=", ">=": "<", "<": ">=", "<=": ">"}
# Values tried per clause, nearest first.
_VALUES_TRIED = 3


@dataclass(frozen=True)
class Clause:
    start: int
    end: int
    ref: str                  # the device.attributes[...]/device.capacity[...] text
    capacity: bool
    domain: str
    name: str
    op: str                   # the comparison the clause makes: device value OP threshold
    fn: str | None            # quantity | semver | None for integers
    threshold: object

    @property
    def wants_more(self) -> bool:
        return self.op in (">", ">=")

    def accepts(self, value: Any) -> bool:
        return {">": value > self.threshold, ">=": value >= self.threshold,
                "<": value < self.threshold, "<=": value <= self.threshold}[self.op]

    def rewritten(self, expression: str, value: object) -> str:
        op = ">=" if self.wants_more else "<="
        if self.fn is None:
            clause = f"{self.ref} {op} {value}"
        else:
            clause = f"{self.ref}.compareTo({self.fn}('{value}')) {op} 0"
        return expression[:self.start] + clause + expression[self.end:]

    def describe(self, value: object = None) -> str:
        op = self.op if value is None else (">=" if self.wants_more else "<=")
        return f"{self.name} {op} {self.threshold if value is None else value}"


@functools.lru_cache(maxsize=256)
def clauses(expression: str) -> tuple[Clause, ...]:
    """Comparisons of one device attribute or capacity with a literal, in source order."""
    found = []
    for match in _COMPARE_TO.finditer(expression):
        found.append(_clause(match, match["op"], match["fn"], match["literal"]))
    for match in _IS.finditer(expression):
        op = ">" if match["method"] == "isGreaterThan" else "<"
        found.append(_clause(match, _NEGATED[op] if match["negated"] else op, match["fn"], match["literal"]))
    for match in _INT.finditer(expression):
        found.append(_clause(match, match["op"], None, match["number"]))
    return tuple(sorted((c for c in found if c is not None), key=lambda c: c.start))


def _clause(match: re.Match, op: str, fn: str | None, literal: str) -> Clause | None:
    from allocator import QuantityError, SemverError, parse_quantity, parse_semver

    threshold: object
    try:
        if fn == "quantity":
            threshold = parse_quantity(literal[1:-1])
        elif fn == "semver":
            threshold = parse_semver(literal[1:-1])
        else:
            threshold = int(literal)
    except (QuantityError, SemverError, ValueError):
        return None
    ref = match.group(0)[match.start("map") - match.start() - len("device."):match.end("name") - match.start()]
    return Clause(match.start(), match.end(), ref, match["map"] == "capacity", match["domain"][1:-1], match["name"],
                  op, fn, threshold)


def relax_selector_remedies(search: Search) -> list[Remedy]:
    usage = search.usage()
    # (claim, request, selector index, clause start) -> (editable, clause, {value: nodes with a free device of it})
    seen: dict[tuple, tuple[Editable, int, Clause, dict]] = {}
    for verdict in search.failing:
        for editable, request in search.requests(verdict):
            selectors = (request_spec(editable.spec, request.name) or {}).get("selectors") or []
            parsed = [clauses(((s or {}).get("cel") or {}).get("expression") or "") for s in selectors]
            if not any(parsed):
                continue
            for rejection in request.rejected:
                if rejection.code != REQUEST_SELECTOR or any(not h.admin_access for h in usage.get(rejection.device, [])):
                    continue
                device = search.device(rejection.device)
                if device is None:
                    continue
                for index, found in enumerate(parsed):
                    for clause in found:
                        value = _value(device, clause)
                        if value is None or clause.accepts(value):
                            continue
                        key = (editable.ref, request.name, index, clause.start)
                        entry = seen.setdefault(key, (editable, index, clause, {}))
                        entry[3].setdefault(value, set()).add(verdict.node)
    remedies = []
    for (_ref, request_name, index, _), (editable, _, clause, values) in sorted(seen.items(), key=lambda i: i[0]):
        remedy = _relaxed(search, editable, request_name, index, clause, values)
        if remedy is not None:
            remedies.append(remedy)
        if search.spent():
            break
    return remedies


def _value(device: Device, clause: Clause) -> Any:
    key = clause.name if clause.domain == device.driver else f"{clause.domain}/{clause.name}"
    if clause.capacity:
        return device.capacity.get(key)
    value = device.attributes.get(key)
    if clause.fn is None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    return value if type(value) is type(clause.threshold) else None


def _relaxed(search: Search, editable: Editable, request_name: str, index: int, clause: Clause,
             values: dict) -> Remedy | None:
    nearest = sorted(values, reverse=clause.wants_more)
    for value in nearest[:_VALUES_TRIED]:
        if search.spent():
            return None
        selectors = (request_spec(editable.spec, request_name) or {}).get("selectors") or []
        before = selectors[index]["cel"]["expression"]
        after = clause.rewritten(before, value)
        spec = edited_spec(editable, request_name,
                           lambda r, after=after: r["selectors"][index]["cel"].__setitem__("expression", after))
        objs, target = search.with_spec(editable, spec)
        nodes = sorted({n for v, ns in values.items() if (v >= value if clause.wants_more else v <= value) for n in ns})
        fitting = search.fits_on(objs, target, nodes)
        if fitting:
            extreme = "largest" if clause.wants_more else "smallest"
            where = nodes_text(sorted(values[value]))
            return Remedy(
                RELAX,
                f"Relax `{clause.describe()}` to `{clause.describe(value)}` in selector #{index} of request "
                f"{request_name} of {editable.location()}: the {extreme} value of a free device that works is {value} "
                f"(on {where}); then it fits on "
                f"{fitting.text()}.",
                {**editable.change(request_name), "selector": {"index": index, "from": before, "to": after}},
                fitting.nodes)
    return None
