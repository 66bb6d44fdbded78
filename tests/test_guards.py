"""Guards CI runs with every test: the lint configuration in pyproject.toml, the one-way doors
between the rooms (docs/ARCHITECTURE.md), and no module reaching into another's private names."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("allocator", "kubectl_dra", "tui")
CLI = ("kubectl_dra.cli", "kubectl_dra.options", "kubectl_dra.invocation", "kubectl_dra.completers",
       "kubectl_dra.completion", "kubectl_dra.commands", "kubectl_dra.render")
"""The command line: click, flags, TAB, output formats. Nothing below it may import it."""
NODE_CLI = ("kubectl_dra.node.cli", "kubectl_dra.node.__main__")
"""Node mode's command line (a CLI module too)."""


def room(module: str) -> str:
    """allocator, tui, cli, node (node mode's core) or core: every other kubectl_dra module (sources,
    store, session, snapshots, model, scheduling, objects, documents...), new modules included."""
    if within(module, ("allocator",)):
        return "allocator"
    if within(module, ("tui",)):
        return "tui"
    if within(module, CLI + NODE_CLI):
        return "cli"
    if within(module, ("kubectl_dra.node",)):
        return "node"
    return "core"


# room -> (forbidden prefixes, why)
DOORS = {
    "allocator": (("kubectl_dra", "tui", "click", "textual", "kubernetes_asyncio"),
                  "the allocator is pure: plain dicts in, data out"),
    "core": ((*CLI, "tui", "click", "textual"), "the core serves the CLI and the dashboard alike"),
    "tui": (CLI, "the dashboard formats the model itself; the CLI's internals are not its API"),
    "node": ((*CLI, "tui", "textual"), "node mode's core is used by its command line, not the reverse"),
}


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
    """(line, module, names) of every import, inside functions too, relative ones resolved."""
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


def test_imports_follow_the_doors_between_rooms():
    broken = []
    for module, path, tree in sources():
        if room(module) not in DOORS:
            continue
        forbidden, why = DOORS[room(module)]
        for line, target, names in imported(module, path, tree):
            targets = [target] + [f"{target}.{name}" for name in names]
            if any(within(t, forbidden) for t in targets):
                broken.append(f"{path.relative_to(ROOT)}:{line}: {module} imports {target} ({why})")
    assert not broken, "\n".join(broken)


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
