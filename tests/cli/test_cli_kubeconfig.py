"""Which kubeconfig files and context apply, as kubectl decides, without reading credentials."""

import asyncio
import os

import pytest
import yaml

from kubectl_dra import kubeconfig as kubeconfig_module
from kubectl_dra.errors import InputError
from kubectl_dra.kubeconfig import context_names, kubeconfig_paths, read_kubeconfig
from kubectl_dra.sources.apiserver import ApiServer, ConnectOptions


def kubeconfig(path, contexts, current=None, token="s3cr3t-token"):
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": current,
        "clusters": [{"name": c, "cluster": {"server": f"https://{c}.example:6443"}} for c, _ in contexts],
        "users": [{"name": c, "user": {"token": token}} for c, _ in contexts],
        "contexts": [{"name": c, "context": {"cluster": c, "user": c, **({"namespace": ns} if ns else {})}}
                     for c, ns in contexts],
    }))
    return str(path)


def test_explicit_kubeconfig_must_exist(tmp_path):
    with pytest.raises(InputError, match="--kubeconfig .*nope: no such file"):
        kubeconfig_paths(str(tmp_path / "nope"), environ={})


def test_kubeconfig_env_list_keeps_existing_files_in_order(tmp_path):
    a = kubeconfig(tmp_path / "a", [("a", None)])
    b = kubeconfig(tmp_path / "b", [("b", None)])
    listed = os.pathsep.join([b, str(tmp_path / "missing"), a, b])
    assert kubeconfig_paths(None, environ={"KUBECONFIG": listed}) == [b, a]


def test_default_path_is_home_kube_config(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert kubeconfig_paths(None, environ={}) == []
    (tmp_path / ".kube").mkdir()
    default = kubeconfig(tmp_path / ".kube" / "config", [("home", None)])
    assert kubeconfig_paths(None, environ={}) == [default]


def test_merge_first_file_wins_for_names_and_current_context(tmp_path):
    first = kubeconfig(tmp_path / "first", [("shared", "from-first"), ("one", None)], current="one")
    second = kubeconfig(tmp_path / "second", [("shared", "from-second"), ("two", None)], current="two")
    config = read_kubeconfig([first, second])
    assert sorted(config.contexts) == ["one", "shared", "two"]
    assert config.contexts["shared"].namespace == "from-first"
    assert config.current_context == "one"
    assert config.resolve(None).name == "one"
    assert config.resolve("two").cluster == "two"


def test_unknown_context_is_one_line_listing_known_ones(tmp_path):
    config = read_kubeconfig([kubeconfig(tmp_path / "kc", [("dev", None), ("prod", None)], current="dev")])
    with pytest.raises(InputError, match=r'context "staging" not found in kubeconfig .*kc \(contexts: dev, prod\)'):
        config.resolve("staging")


def test_no_current_context_asks_for_one(tmp_path):
    config = read_kubeconfig([kubeconfig(tmp_path / "kc", [("dev", None)])])
    with pytest.raises(InputError, match="no current context .* pass --context NAME"):
        config.resolve(None)


def test_broken_kubeconfig_names_the_file_but_not_its_content(tmp_path):
    path = tmp_path / "kc"
    path.write_text("users:\n- name: x\n  user: {token: s3cr3t-token\n")
    with pytest.raises(InputError, match=r"kubeconfig .*kc: line \d+ invalid YAML$") as error:
        read_kubeconfig([str(path)])
    assert "s3cr3t" not in str(error.value)


def test_context_names_for_completion_never_fail(tmp_path):
    good = kubeconfig(tmp_path / "kc", [("b", None), ("a", None)])
    assert context_names(good) == ["a", "b"]
    assert context_names(str(tmp_path / "missing")) == []


# A throwaway self-signed CA (no key kept): the pod's ca.crt must parse, nothing is ever sent.
CA_CERTIFICATE = """\
-----BEGIN CERTIFICATE-----
MIIDBTCCAe2gAwIBAgIUXEuM7gNUEM3eiiqArs/FZTiH1qgwDQYJKoZIhvcNAQEL
BQAwEjEQMA4GA1UEAwwHdGVzdC1jYTAeFw0yNjExMzAxNTM2MTdaFw0zNjExMjcx
NTM2MTdaMBIxEDAOBgNVBAMMB3Rlc3QtY2EwggEiMA0GCSqGSIb3DQEBAQUAA4IB
DwAwggEKAoIBAQCa6LRCpluA50iDgSF/D3z7VrxPD+NSMXpyzeX4/r5V+IFNBDNY
sYZMyo/oiX9nJi7ytdi0Qf0PcIQrtG9i+PfVyXz7VwC5yqsy3QhpLLpt4cWbd8N1
Hbyx8EdVcQGFsnZ7M+oDStWjqA2ooFNjItDHDUXMQXzl12IKBY37GHtB5WcjNbY3
LQwPDgA9XJXPfMciKWDa0hQHv7bTwlIe9Ri+Iymfm+ey9Wc0lFKIe1lo5TBcsCyT
koJPm1jB/WPJSJcJg0GJQp1rRAP9BHiGLy8bmyU0HlZXr8urcgiJ5ZWgW7DFs2Qr
WqsJtJ7G49qb3SDndoP3EAmfKvDXeloRrvFhAgMBAAGjUzBRMB0GA1UdDgQWBBQX
0ohGGAqvfztqwMLrWOD454gP6zAfBgNVHSMEGDAWgBQX0ohGGAqvfztqwMLrWOD4
54gP6zAPBgNVHRMBAf8EBTADAQH/MA0GCSqGSIb3DQEBCwUAA4IBAQCQKaA5FUID
ijPoWL3p8zL04By9of9wYRmlam2b/K2bWzgsebsXfg7Fyi2vXzPeepzT54S+D/Ub
Awg7bQCGUn88E/HiQdlv9ULW1I+WIPX7BDf1KRGAHNLHwfLilfKXfUD4Eh42iTrl
mKX58rFeSRV3cwxZgWkIGYI1npHdwTG7FtzqfXg1v+PM/3VsgVyiEfsZkeAEdat/
+XHjHbg231/XJfRKXiQ0Q52/4KiLO1UZWpuSLWkq1CnYGOboABGnrYrtrrQKyPLX
dkHIfKVgQjzvmomAmFfnBikHYWmh8Z2GQm/NoN4WDIowfGsHz6Azf/6W37rsjOup
R69zneoFERVF
-----END CERTIFICATE-----
"""


def test_in_cluster_when_there_is_no_kubeconfig(tmp_path, monkeypatch, isolated_kubeconfig):
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text("pod-token")
    (account / "namespace").write_text("gpu-ops")
    (account / "ca.crt").write_text(CA_CERTIFICATE)
    monkeypatch.setattr(kubeconfig_module, "SERVICE_ACCOUNT_DIR", str(account))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")

    async def connect(options):
        server = await ApiServer.connect(options)
        await server.close()
        return server.target

    target = asyncio.run(connect(ConnectOptions()))
    assert (target.server, target.namespace, target.context) == ("https://10.96.0.1:443", "gpu-ops", None)
    with pytest.raises(InputError, match="--context prod: no kubeconfig found"):
        asyncio.run(connect(ConnectOptions(context="prod")))
