"""What the allocator cannot mirror exactly it says through Python's warnings; a command prints it
as every other warning (`Warning: ...` once on stderr), never in Python's `file:line: Category:` form."""

from __future__ import annotations

from pathlib import Path

FIXTURE = str(Path(__file__).parent / "fixtures" / "derived-version-fallback.json")


def test_a_derived_version_that_may_lose_its_build_is_one_warning_line(run_cli):
    # An optional compared under dyn: evaluated without build metadata (allocator/cel.py), so the
    # derived version 1.2.3 may lack the +dev that Kubernetes keeps.
    result = run_cli("--from", FIXTURE, "explain", "claim/c", "--feature-gates", "DRADerivedAttributes=true")
    assert result.status == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "derived attribute expression" in line]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Warning: derived attribute expression ") and "may lack build metadata" in lines[0]
    assert "DerivedBuildMetadataWarning" not in result.stderr and ".py:" not in result.stderr


def test_no_warning_when_the_gate_is_off(run_cli):
    result = run_cli("--from", FIXTURE, "explain", "claim/c")
    assert "derived attribute expression" not in result.stderr
