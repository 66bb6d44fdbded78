"""Guards CI runs with every test: the lint configuration in pyproject.toml, the one-way doors
between the rooms (docs/ARCHITECTURE.md), and no module reaching into another's private names."""

from __future__ import annotations

import ast
import fnmatch
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("allocator", "kubectl_dra", "tui")
CLI = ("kubectl_dra.cli", "kubectl_dra.options", "kubectl_dra.invocation", "kubectl_dra.completers",
       "kubectl_dra.completion", "kubectl_dra.commands", "kubectl_dra.render")
"""The command line: click, flags, TAB, output formats. Nothing below it may import it."""
NODE_CLI = ("kubectl_dra.node.cli", "kubectl_dra.node.__main__")
"""Node mode's command line (a CLI module too, with doors of its own)."""

ROOMS = {
    "allocator": ("allocator",),
    "tui": ("tui",),
    "cli": CLI,
    "node cli": NODE_CLI,
    "node": ("kubectl_dra.node",),
    # The core, one room per job, ordered below.
    "store": ("kubectl_dra.store",),
    "snapshot": ("kubectl_dra.snapshot",),
    "sources": ("kubectl_dra.sources",),
    "session": ("kubectl_dra.session", "kubectl_dra.fleet"),
    "model": ("kubectl_dra.model",),
    "workloads": ("kubectl_dra.workloads",),
    "scheduling": ("kubectl_dra.scheduling",),
    "doctor": ("kubectl_dra.doctor",),
    "metrics": ("kubectl_dra.metrics",),
    "targets": ("kubectl_dra.targets",),
    "taint rules": ("kubectl_dra.taint_rules",),
    "remediation": ("kubectl_dra.remediation",),
}
"""Room -> the modules in it; a module is in the room of the longest prefix naming it. Every other
kubectl_dra module (the package root, errors, terminal_text, documents, objects, kubeconfig, labels,
yaml_writer, safe_write, same_name, allocator_warnings, fast_exit, fields, missing_nodes, and new
modules until named here) is in `base`: helpers every room may use, which import only each other and the allocator."""

CORE_ORDER = ("store", "snapshot", "sources", "session", "model", "scheduling")
"""The core's rooms, lowest first: each may import the ones before it (and `base`, the allocator),
never one after it. doctor and metrics stand on all of them (and on neither other)."""


def _below(room_name: str) -> set[str]:
    return {"base", "allocator", *CORE_ORDER[:CORE_ORDER.index(room_name)]}


CORE_ROOMS = {"base", *CORE_ORDER, "workloads", "doctor", "metrics", "targets", "taint rules", "remediation"}
ALLOWED = {
    "allocator": set(),
    "base": {"allocator"},
    "store": _below("store"),
    "snapshot": _below("snapshot"),
    "sources": _below("sources"),
    "session": _below("session"),
    "model": _below("model"),
    "workloads": {"base", "allocator"},
    "scheduling": _below("scheduling") | {"workloads"},
    "doctor": _below("scheduling") | {"scheduling", "workloads"},
    "metrics": _below("scheduling") | {"scheduling", "workloads"},
    "targets": {"base", "allocator", "workloads"},
    "taint rules": _below("model") | {"model"},
    "remediation": _below("model") | {"model", "taint rules"},
    "node": {"base", "allocator", "sources"},
    "node cli": {"base", "allocator", "node"},
    "cli": CORE_ROOMS | {"allocator", "tui"},
    "tui": (CORE_ROOMS | {"allocator"}) - {"sources", "session"},
}
"""Room -> the rooms its modules may import (its own always). The dashboard is handed its session
by the CLI and reads no source itself; node mode's core reads the cluster through sources only;
the CLI reaches node mode only through node mode's own entry point."""

DOORWAYS = {
    "node cli": ("kubectl_dra.cli", "kubectl_dra.options", "kubectl_dra.invocation", "kubectl_dra.render.base",
                 "kubectl_dra.commands.common"),
}
"""Room -> single modules of other rooms it may import: the node CLI shares the root command's
error policy, the global flags, the output formats and the session opener, nothing else of the CLI."""

NOT_IMPORTED = {
    "allocator": ("click", "textual", "rich", "kubernetes_asyncio", "aiohttp"),
    "tui": ("click", "kubernetes_asyncio", "aiohttp"),
    "node": ("click", "textual", "rich"),
    "node cli": ("textual", "rich"),
    **{name: ("click", "textual", "rich") for name in CORE_ROOMS},
}
"""Room -> third-party packages it must not import: the allocator is pure; the core serves both
faces, so it holds no click or Textual; the dashboard talks to no cluster client and parses no flags."""

WHY = {
    "allocator": "the allocator is pure: plain dicts in, data out",
    "tui": "the dashboard formats the model itself; the CLI's internals and the cluster client are not its API",
    "cli": "the CLI launches node mode only through its own entry point",
    "node cli": "node mode's command line uses its core, the shared helpers and the CLI's doorways only",
    "node": "node mode's core is used by its command line, not the reverse",
}
"""Why a room's doors are where they are (the core: its order, see CORE_ORDER)."""

KNOWN_CROSSINGS: dict[tuple[str, str], str] = {}
"""(module, room) imports against the core's order that are known and owned by the rooms that hold
them, each with the move that ends it. The guard fails once one is gone, so the list only shrinks;
a new crossing is never added here: it is fixed."""


def room(module: str) -> str:
    best, length = "base", 0
    for name, prefixes in ROOMS.items():
        for prefix in prefixes:
            if within(module, (prefix,)) and len(prefix) > length:
                best, length = name, len(prefix)
    return best


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> list[tuple[str, Path, ast.Module]]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found.append((module_name(path), path, ast.parse(path.read_text(encoding="utf-8"), str(path))))
    return found


def imported(module: str, path: Path, tree: ast.Module) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import, inside functions and TYPE_CHECKING blocks too,
    relative ones resolved."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    result = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            result.extend((node.lineno, alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            result.append((node.lineno, base, [alias.name for alias in node.names]))
    return result


def within(name: str, prefixes) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def module_graph() -> tuple[dict[str, set[str]], dict[str, dict[str, tuple[Path, int]]]]:
    """module -> the modules of PACKAGES it imports (`from a import b` is a.b where b is a module,
    else a), and where each import is. A package's __init__ importing its own submodules is left
    out: re-exporting is not a dependency back."""
    parsed = sources()
    known = {module for module, _, _ in parsed}
    edges: dict[str, set[str]] = {module: set() for module in known}
    where: dict[str, dict[str, tuple[Path, int]]] = {module: {} for module in known}
    for module, path, tree in parsed:
        is_package = path.name == "__init__.py"
        for line, target, names in imported(module, path, tree):
            for name in [target, *(f"{target}.{n}" for n in names)] if names else [target]:
                while name and name not in known:
                    name = name.rpartition(".")[0]
                if not name or name == module or (is_package and within(name, (module,))):
                    continue
                edges[module].add(name)
                where[module].setdefault(name, (path, line))
    return edges, where


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """The components of more than one module (Tarjan, iterative: the graph is deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def crossings() -> list[tuple[str, str, str]]:
    """(module, imported module, where) for every import between rooms that ALLOWED and DOORWAYS do not let through."""
    edges, where = module_graph()
    found = []
    for module in sorted(edges):
        source_room = room(module)
        for target in sorted(edges[module]):
            target_room = room(target)
            if target_room == source_room or target_room in ALLOWED[source_room]:
                continue
            if within(target, DOORWAYS.get(source_room, ())):
                continue
            path, line = where[module][target]
            found.append((module, target, f"{path.relative_to(ROOT)}:{line}"))
    return found


def test_every_room_has_a_table_row():
    assert set(ALLOWED) == set(ROOMS) | {"base"}
    assert set(NOT_IMPORTED) == set(ALLOWED) - {"cli"}


def test_imports_follow_the_doors_between_rooms():
    broken = []
    for module, target, where in crossings():
        if (module, room(target)) in KNOWN_CROSSINGS:
            continue
        source_room, target_room = room(module), room(target)
        why = WHY.get(source_room, f"the core is ordered {' < '.join(CORE_ORDER)} < doctor, metrics; "
                                   f"{source_room} may import {', '.join(sorted(ALLOWED[source_room]))}")
        broken.append(f"{where}: {module} ({source_room}) imports {target} ({target_room}): {why}")
    assert not broken, "\n".join(broken)


def test_known_crossings_are_still_there():
    """A crossing fixed is struck from KNOWN_CROSSINGS, so the list cannot hide a new one later."""
    present = {(module, room(target)) for module, target, _ in crossings()}
    assert not set(KNOWN_CROSSINGS) - present, f"gone, strike them: {sorted(set(KNOWN_CROSSINGS) - present)}"


def test_rooms_import_none_of_the_packages_they_must_not():
    broken = []
    for module, path, tree in sources():
        forbidden = NOT_IMPORTED.get(room(module), ())
        for line, target, _ in imported(module, path, tree):
            if within(target, forbidden):
                broken.append(f"{path.relative_to(ROOT)}:{line}: {module} ({room(module)}) imports {target}: "
                              f"{WHY.get(room(module), 'the core serves the CLI and the dashboard alike')}")
    assert not broken, "\n".join(broken)


ALLOCATOR_DOORS = ("allocator", "allocator.codes")
"""All other rooms import of the allocator: its public API (the names in allocator/__init__'s
__all__) and its words (verdicts, reason codes, pool states). Its submodules are its own to move."""


def allocator_submodules_reached(module: str, path: Path, tree: ast.Module, known: set[str]) -> list[tuple[int, str]]:
    """(line, submodule) of every allocator submodule that a module outside the allocator imports,
    `from allocator import <submodule>` included."""
    if within(module, ("allocator",)):
        return []
    found = []
    for line, target, names in imported(module, path, tree):
        for name in [target, *(f"{target}.{n}" for n in names if f"{target}.{n}" in known)]:
            if within(name, ("allocator",)) and name not in ALLOCATOR_DOORS:
                found.append((line, name))
    return found


def test_other_rooms_import_only_the_allocators_public_api():
    parsed = sources()
    known = {module for module, _, _ in parsed}
    broken = [f"{path.relative_to(ROOT)}:{line}: {module} imports {name}: import it from `allocator` (export it "
              f"in allocator/__init__.py) or `allocator.codes`"
              for module, path, tree in parsed for line, name in allocator_submodules_reached(module, path, tree, known)]
    assert not broken, "\n".join(broken)


def test_the_allocator_door_check_sees_submodules_however_imported():
    tree = ast.parse("import allocator\nfrom allocator import Features, search\nfrom allocator.codes import FITS\n"
                     "def explain():\n    from allocator.explain import explain_pod\n    import allocator.cel\n")
    known = {"allocator", "allocator.codes", "allocator.search", "allocator.explain", "allocator.cel"}
    found = allocator_submodules_reached("kubectl_dra.session", ROOT / "kubectl_dra" / "session.py", tree, known)
    assert [name for _, name in found] == ["allocator.search", "allocator.explain", "allocator.cel"]
    assert allocator_submodules_reached("allocator.reports", ROOT / "allocator" / "reports.py", tree, known) == []


ALLOCATOR_PROBE = """
import sys
import allocator
print("LOADED", ",".join(sorted(name for name in ("allocator.cel", "allocator.search", "allocator.explain",
                                                  "allocator.validation") if name in sys.modules)))
for name in allocator.__all__:
    getattr(allocator, name)
"""


def test_the_allocators_public_api_resolves_and_loads_cel_only_when_asked():
    """Every name in allocator.__all__ exists; importing the package loads no CEL engine, search or
    explainer (node mode and pool reports do not need them)."""
    result = subprocess.run([sys.executable, "-c", ALLOCATOR_PROBE], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.rsplit("LOADED", 1)[-1].strip() == ""


def test_no_import_cycles():
    """No module imports one that imports it back, through any path, imports inside functions and
    TYPE_CHECKING blocks included: the shared piece moves to the module both need, or is passed in."""
    edges, where = module_graph()
    cycles = strongly_connected(edges)
    lines = []
    for component in cycles:
        members = set(component)
        links = [f"{where[m][t][0].relative_to(ROOT)}:{where[m][t][1]}: {m} -> {t}"
                 for m in component for t in sorted(edges[m] & members)]
        lines.append(" <-> ".join(component) + "\n  " + "\n  ".join(links))
    assert not cycles, "\n".join(lines)


def test_the_cycle_check_finds_every_cycle_and_nothing_else():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set()}
    assert sorted(strongly_connected(edges)) == [["a", "b", "c"], ["d", "e"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_imports_inside_functions_and_type_checking_blocks_count():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .store import Store\n"
                     "def load():\n    from kubectl_dra.model import states\n")
    found = imported("kubectl_dra.session", ROOT / "kubectl_dra" / "session.py", tree)
    assert [(target, names) for _, target, names in found][1:] == [("kubectl_dra.store", ["Store"]),
                                                                  ("kubectl_dra.model", ["states"])]


def test_no_module_reaches_into_another_modules_private_names():
    broken = []
    for module, path, tree in sources():
        for line, target, names in imported(module, path, tree):
            if target == module:
                continue
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    broken.append(f"{path.relative_to(ROOT)}:{line}: from {target} import {name}")
        aliases = {alias.asname or alias.name: alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                   for alias in node.names if within(alias.name, PACKAGES)}
        aliases.update({alias.asname or alias.name: f"{node.module}.{alias.name}" for node in ast.walk(tree)
                        if isinstance(node, ast.ImportFrom) and node.module and within(node.module, PACKAGES)
                        for alias in node.names})
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                broken.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    assert not broken, "\n".join(broken)


def test_ruff_finds_nothing():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                            cwd=ROOT, capture_output=True, text=True)
    assert "No module named ruff" not in result.stderr, "ruff is a test dependency: pip install -e '.[test]'"
    assert result.returncode == 0, result.stdout + result.stderr


HELP_PROBE = """
import sys
from kubectl_dra.cli import main
sys.argv = ["kubectl-dra", "--help"]
try:
    main()
except SystemExit:
    pass
heavy = sorted(name for name in ("textual", "kubernetes_asyncio", "aiohttp", "yaml", "allocator", "allocator.cel",
                                 "kubectl_dra.model", "kubectl_dra.sources.files") if name in sys.modules)
print("LOADED", ",".join(heavy))
"""


def test_help_loads_no_client_dashboard_or_allocator():
    """The lazy command table keeps `kubectl dra --help` (and so TAB) fast: nothing heavy is imported."""
    result = subprocess.run([sys.executable, "-c", HELP_PROBE], cwd=ROOT, capture_output=True, text=True)
    loaded = result.stdout.rsplit("LOADED", 1)[-1].strip()
    assert loaded == "", f"--help imported {loaded}"


ISSUE_REFERENCE = re.compile(r"\bissues?[ #-]?\d+\b", re.IGNORECASE)


def test_source_names_no_issue_numbers():
    """Why a rule is there belongs in the code; which issue brought it belongs in the commit, and
    what it measured in bench/RESULTS.md, cited by bench name."""
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for _, path, _ in sources()
             for number, line in enumerate(path.read_text().splitlines(), 1) if ISSUE_REFERENCE.search(line)]
    assert not found, "\n".join(found)


MYPY_CHECKED = ("allocator/", "kubectl_dra/", "tui/")
"""The files whose mypy errors fail the guard: a folder (all below it) or a glob of one folder's
files. Every package [tool.mypy] names; allocator.* and kubectl_dra.scheduling.* are held to
typed definitions and checked bodies ([[tool.mypy.overrides]] in pyproject.toml)."""


def mypy_checks(path: str) -> bool:
    return any(path.startswith(entry) if entry.endswith("/") else
               fnmatch.fnmatch(path, entry) and path.count("/") == entry.count("/") for entry in MYPY_CHECKED)

MYPY_ERROR = re.compile(r"^(?P<path>[^:\s]+\.py):\d+: error: ")


def test_mypy_finds_nothing():
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-color-output", "--no-error-summary"],
                            cwd=ROOT, capture_output=True, text=True)
    assert "No module named mypy" not in result.stderr, "mypy is a test dependency: pip install -e '.[test]'"
    assert result.returncode in (0, 1), f"mypy did not run to the end:\n{result.stdout}{result.stderr}"
    errors = [line for line in result.stdout.splitlines()
              if (match := MYPY_ERROR.match(line)) and mypy_checks(match["path"])]
    assert not errors, f"{len(errors)} mypy errors:\n" + "\n".join(errors)


TYPE_IGNORE = re.compile(r"#\s*type:\s*ignore\b")
EXPLAINED_TYPE_IGNORE = re.compile(r"#\s*type:\s*ignore\[[\w-]+(?:,\s*[\w-]+)*\]\s+#\s*\S")


def test_type_ignores_name_their_code_and_reason():
    """A silenced mypy error says which one (`# type: ignore[code]`) and why (`  # reason`): a bare
    ignore hides every later error on the line too."""
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for _, path, _ in sources()
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if TYPE_IGNORE.search(line) and not EXPLAINED_TYPE_IGNORE.search(line)]
    assert not found, "\n".join(found)


def test_the_type_ignore_check_wants_a_code_and_a_reason():
    bare, coded = "x = f()  # type: ignore", "x = f()  # type: ignore[arg-type]"
    explained = "x = f()  # type: ignore[arg-type]  # the stub is wrong"
    assert [bool(EXPLAINED_TYPE_IGNORE.search(line)) for line in (bare, coded, explained)] == [False, False, True]
