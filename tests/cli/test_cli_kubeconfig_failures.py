"""Every kubeconfig failure is one line on stderr and exit 2: never a traceback, never a secret.

Each kubeconfig points at a closed port, so a connection that gets as far as the network fails
there, also one line."""

from __future__ import annotations

import base64

import pytest
import yaml

PASSWORD = "hunter2-password"
TOKEN = "s3cr3t-token-value"
CLOSED = "https://127.0.0.1:1"


def write_kubeconfig(path, cluster: dict, user: dict) -> str:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": cluster}], "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}]}))
    return str(path)


def exec_user(script: str) -> dict:
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "sh", "args": ["-c", script]}}


def run(run_cli, path):
    result = run_cli("--kubeconfig", path, "pools", "--request-timeout", "5")
    lines = result.stderr.splitlines()
    assert result.status == 2, result
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    for secret in (PASSWORD, TOKEN):
        assert secret not in result.stderr
    return lines[0]


def test_user_and_password_in_the_server_url_with_a_token_use_the_token(run_cli, tmp_path, isolated_kubeconfig):
    path = write_kubeconfig(tmp_path / "kc", {"server": f"https://admin:{PASSWORD}@127.0.0.1:1"}, {"token": TOKEN})
    line = run(run_cli, path)  # before: aiohttp's ValueError traceback, exit 1
    assert line.startswith("error: cannot reach the cluster at https://127.0.0.1:1 (context ctx): ")


def test_a_failing_exec_plugin_prints_its_stderr_once(run_cli, tmp_path, isolated_kubeconfig):
    path = write_kubeconfig(tmp_path / "kc", {"server": CLOSED},
                            exec_user("echo 'no credentials for this account' >&2; exit 3"))
    line = run(run_cli, path)
    assert line == 'error: kubeconfig context "ctx": exec: process returned 3. no credentials for this account'


@pytest.mark.parametrize("user, message", [
    ({"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "/nonexistent/plugin"}},
     "No such file or directory: '/nonexistent/plugin'"),
    (exec_user("echo not-json"), "exec: failed to decode process output"),
])
def test_other_exec_plugin_failures(run_cli, tmp_path, isolated_kubeconfig, user, message):
    assert message in run(run_cli, write_kubeconfig(tmp_path / "kc", {"server": CLOSED}, user))


def test_missing_certificate_files(run_cli, tmp_path, isolated_kubeconfig):
    missing_ca = write_kubeconfig(tmp_path / "ca", {"server": CLOSED, "certificate-authority": "/nonexistent/ca.crt"},
                                  {"token": TOKEN})
    assert "/nonexistent/ca.crt" in run(run_cli, missing_ca)
    missing_cert = write_kubeconfig(tmp_path / "cert", {"server": CLOSED},
                                    {"client-certificate": "/nonexistent/c.crt", "client-key": "/nonexistent/c.key"})
    assert "/nonexistent/c.crt" in run(run_cli, missing_cert)


@pytest.mark.parametrize("cluster", [
    {"certificate-authority": "{garbage}"},
    {"certificate-authority-data": base64.b64encode(b"not a certificate").decode()},
])
def test_certificates_that_are_not_certificates(run_cli, tmp_path, isolated_kubeconfig, cluster):
    garbage = tmp_path / "garbage.crt"
    garbage.write_text("not a certificate\n")
    cluster = {key: value.format(garbage=garbage) for key, value in cluster.items()}
    line = run(run_cli, write_kubeconfig(tmp_path / "kc", {"server": CLOSED, **cluster}, {"token": TOKEN}))
    assert line.startswith('error: kubeconfig context "ctx": cannot load its TLS certificates or key: ')


def test_a_client_key_that_does_not_match_is_one_line(run_cli, tmp_path, isolated_kubeconfig):
    cert, key = tmp_path / "c.crt", tmp_path / "c.key"
    cert.write_text("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    key.write_text("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    line = run(run_cli, write_kubeconfig(tmp_path / "kc", {"server": CLOSED},
                                         {"client-certificate": str(cert), "client-key": str(key)}))
    assert line.startswith('error: kubeconfig context "ctx": ')


@pytest.mark.parametrize("proxy", ["::not a url", f"http://user:{PASSWORD}@[bad"])
def test_a_bad_proxy_url_is_one_line_without_its_password(run_cli, tmp_path, isolated_kubeconfig, proxy):
    line = run(run_cli, write_kubeconfig(tmp_path / "kc", {"server": CLOSED, "proxy-url": proxy}, {"token": TOKEN}))
    assert "invalid URL" in line and "proxy-url" in line


def test_a_cluster_without_a_server_says_what_to_check(run_cli, tmp_path, isolated_kubeconfig):
    line = run(run_cli, write_kubeconfig(tmp_path / "kc", {}, {"token": TOKEN}))
    assert line == ('error: kubeconfig context "ctx": incomplete entry (AssertionError in the client library): '
                    "check its cluster's server and its user's credentials")



def test_an_exec_plugin_failing_when_its_token_is_refreshed_is_one_line(run_cli, tmp_path, isolated_kubeconfig):
    # The first run gives an already expired token; the refresh before the first request runs the
    # plugin again, and that run fails.
    runs = tmp_path / "runs"
    credential = ('{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",'
                  f'"status":{{"token":"{TOKEN}","expirationTimestamp":"2020-01-01T00:00:00Z"}}}}')
    script = (f"if [ -e {runs} ]; then echo 'refresh refused: account locked' >&2; exit 4; fi; "
              f"touch {runs}; echo '{credential}'")
    line = run(run_cli, write_kubeconfig(tmp_path / "kc", {"server": CLOSED}, exec_user(script)))
    assert line == 'error: kubeconfig context "ctx": exec: process returned 4. refresh refused: account locked'
