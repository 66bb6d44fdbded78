"""Helpers for the CLI tests: run `kubectl dra` in-process, write files, golden comparisons."""

from __future__ import annotations

import os
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "golden"
REGENERATE_ENV = "KUBECTL_DRA_REGENERATE_GOLDEN"


@pytest.fixture
def isolated_kubeconfig(monkeypatch, tmp_path):
    """No kubeconfig from the developer's machine leaks into a test."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return tmp_path


def check_golden(name: str, actual: str) -> None:
    """Compare with tests/cli/golden/NAME; KUBECTL_DRA_REGENERATE_GOLDEN=1 rewrites it instead."""
    path = GOLDEN / name
    if os.environ.get(REGENERATE_ENV):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing golden file {path}; run with {REGENERATE_ENV}=1 to create it"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"output differs from {path} (regenerate with {REGENERATE_ENV}=1 if intended)"


def forbidden_snapshot(tmp_path: pathlib.Path, kind: str, refusal: str, drop_documents: bool = False) -> str:
    """fixtures/claims-forbidden-snapshot.yaml with `kind` forbidden in its header instead of the
    ResourceClaims of one namespace (the API server's words: `refusal`); `drop_documents`: its
    objects of that kind left out too, as a snapshot of an identity that may not list them holds none."""
    text = (FIXTURES / "claims-forbidden-snapshot.yaml").read_text()
    header, rest = text.split("\n---\n", 1)
    header = header.replace("- kind: ResourceClaim\n  state: forbidden\n  namespace: ml-training\n",
                            f"- kind: {kind}\n  state: forbidden\n")
    header = header.replace("resourceclaims.resource.k8s.io is forbidden", refusal)
    assert f"kind: {kind}" in header
    if drop_documents:
        rest = "\n---\n".join(document for document in rest.split("\n---\n")
                               if f"\nkind: {kind}\n" not in f"\n{document}")
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(header + "\n---\n" + rest)
    return str(snapshot)


@pytest.fixture
def prometheus(prometheus_binaries, tmp_path):
    """run(config, name) starts a real Prometheus (tests/cli/prometheus_server.py); all are stopped after the test."""
    from .prometheus_server import started_prometheus

    yield from started_prometheus(prometheus_binaries, tmp_path)
