"""A real Kubernetes 1.37 control plane for the tests: etcd, kube-apiserver, kube-scheduler and
kube-controller-manager (resourceclaim controller only) as child processes on 127.0.0.1.

Every process runs in its own process group and is stopped with its children; logs go to files
in the control plane's folder, which is removed on stop.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from . import harness
from .kubeclient import KubeClient

KUBERNETES_MINOR = 37
# resource.k8s.io v1 is served by default in 1.37; the beta versions are switched on so that the
# tests can read and write objects in every version a 1.34-1.37 cluster may serve.
RUNTIME_CONFIG = "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true"
# Gates given to every component. 1.37 defaults already enable everything the allocator's
# default feature set uses (DeviceTaintRules are GA); keep this empty unless a test needs more, and
# keep all components on the same gates.
FEATURE_GATES = ""
# Components the restricted user may read: not deviceclasses and not devicetaintrules, so that
# RBAC-denied kinds can be tested.
RESTRICTED_RULES = [
    {"apiGroups": [""], "resources": ["nodes", "pods", "namespaces"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["resource.k8s.io"], "resources": ["resourceslices", "resourceclaims", "resourceclaimtemplates"],
     "verbs": ["get", "list", "watch"]},
]
READY_TIMEOUT = 90.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Component:
    name: str
    args: list[str]
    log_path: Path
    health_url: str
    process: subprocess.Popen | None = None

    def start(self) -> None:
        log = open(self.log_path, "ab")
        try:
            # A new session makes the process the leader of its own group, so stop() reaches any
            # children it may have.
            self.process = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        finally:
            log.close()

    def stop(self, grace: float = 10.0) -> None:
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(text[-lines:])


@dataclass
class ControlPlane:
    """A running control plane. `admin_token` is in system:masters; `restricted_token` belongs to a
    user that may read nodes, pods, namespaces, slices, claims and claim templates only."""

    workdir: Path
    with_scheduler: bool = True
    feature_gates: str = FEATURE_GATES  # one control plane of a test module may run alpha gates
    runtime_config: str = RUNTIME_CONFIG  # ... and serve alpha API versions
    # ... and run more of kube-controller-manager. The PV binder completes the static bindings
    # VolumeBinding's PreBind asks for (and waits on) as it would in a cluster.
    controllers: str = "resourceclaim-controller,persistentvolume-binder-controller"
    admin_token: str = field(default_factory=lambda: secrets.token_hex(16))
    restricted_token: str = field(default_factory=lambda: secrets.token_hex(16))
    components: dict[str, Component] = field(default_factory=dict)

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.apiserver_port}"

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig"

    @property
    def restricted_kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig-restricted"

    def client(self, restricted: bool = False) -> KubeClient:
        return KubeClient(self.server, self.restricted_token if restricted else self.admin_token)

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.etcd_port, self.etcd_peer_port = free_port(), free_port()
        self.apiserver_port = free_port()
        self.etcd_url = f"http://127.0.0.1:{self.etcd_port}"
        self._write_credentials()
        self._add("etcd", self._etcd_args(), f"{self.etcd_url}/health")
        self._add("kube-apiserver", self._apiserver_args(), f"{self.server}/readyz")
        try:
            self._start_and_wait("etcd")
            self._start_and_wait("kube-apiserver")
            self._grant_restricted_user()
            if self.with_scheduler:
                port = free_port()
                self._add("kube-scheduler", self._scheduler_args(port), f"https://127.0.0.1:{port}/healthz")
                port = free_port()
                self._add("kube-controller-manager", self._controller_manager_args(port),
                          f"https://127.0.0.1:{port}/healthz")
                self._start_and_wait("kube-scheduler")
                self._start_and_wait("kube-controller-manager")
        except BaseException:
            self.stop()
            raise

    def restart_apiserver(self) -> None:
        """Stops kube-apiserver and starts it again on the same port (for reconnect tests), then
        restarts kube-scheduler and kube-controller-manager. Their reflectors would come back on
        their own, each after its own backoff (up to 30 s), and until then the scheduler decides
        later tests' pods on stale caches ("device class X does not exist" for a class the
        apiserver has). A fresh one waits for its caches to sync before it schedules or
        reconciles anything, so every test after a restart meets a whole control plane."""
        self.components["kube-apiserver"].stop()
        self._start_and_wait("kube-apiserver")
        for name in ("kube-scheduler", "kube-controller-manager"):
            if name in self.components:
                self.components[name].stop()
                self._start_and_wait(name)

    def stop(self, remove_workdir: bool = True) -> None:
        for name in ("kube-controller-manager", "kube-scheduler", "kube-apiserver", "etcd"):
            if name in self.components:
                self.components[name].stop()
        if remove_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def logs(self, lines: int = 60) -> dict[str, str]:
        return {name: c.log_tail(lines) for name, c in self.components.items()}

    # -- internals ----------------------------------------------------------------------------

    def _add(self, name: str, args: list[str], health_url: str) -> None:
        self.components[name] = Component(name, args, self.workdir / f"{name}.log", health_url)

    def _start_and_wait(self, name: str) -> None:
        component = self.components[name]
        component.start()
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            if not component.running():
                raise RuntimeError(f"{name} exited during start-up; last log lines:\n{component.log_tail(40)}")
            if self._healthy(component.health_url):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} not healthy after {READY_TIMEOUT:.0f} s; last log lines:\n"
                                   f"{component.log_tail(40)}")
            time.sleep(0.25)

    def _healthy(self, url: str) -> bool:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        req = urllib.request.Request(url)
        if url.startswith(self.server):
            req.add_header("Authorization", f"Bearer {self.admin_token}")
        try:
            with urllib.request.urlopen(req, timeout=5, context=context) as resp:
                return resp.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def _write_credentials(self) -> None:
        (self.workdir / "tokens.csv").write_text(
            f'{self.admin_token},admin,admin,"system:masters"\n'
            f"{self.restricted_token},restricted,restricted\n")
        subprocess.run(["openssl", "genrsa", "-out", str(self.workdir / "sa.key"), "2048"],
                       check=True, capture_output=True)
        subprocess.run(["openssl", "rsa", "-in", str(self.workdir / "sa.key"), "-pubout",
                        "-out", str(self.workdir / "sa.pub")], check=True, capture_output=True)
        for path, token, user in ((self.kubeconfig, self.admin_token, "admin"),
                                  (self.restricted_kubeconfig, self.restricted_token, "restricted")):
            path.write_text(
                "apiVersion: v1\nkind: Config\n"
                f"clusters:\n- name: e2e\n  cluster:\n    server: {self.server}\n    insecure-skip-tls-verify: true\n"
                f"users:\n- name: {user}\n  user:\n    token: {token}\n"
                f"contexts:\n- name: e2e-{user}\n  context:\n    cluster: e2e\n    user: {user}\n"
                f"current-context: e2e-{user}\n")

    def _etcd_args(self) -> list[str]:
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        return [str(harness.binary("etcd")), "--name=e2e", f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={self.etcd_url}", f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=e2e={peer}", "--unsafe-no-fsync", "--log-level=warn"]

    def _apiserver_args(self) -> list[str]:
        return apiserver_args(self.workdir, self.etcd_url, self.apiserver_port, self.workdir / "certs",
                              self.runtime_config, self.feature_gates)

    def _scheduler_args(self, port: int) -> list[str]:
        args = [str(harness.binary("kube-scheduler")), f"--kubeconfig={self.kubeconfig}",
                "--leader-elect=false", "--bind-address=127.0.0.1", f"--secure-port={port}"]
        if self.feature_gates:
            args.append(f"--feature-gates={self.feature_gates}")
        return args

    def _controller_manager_args(self, port: int) -> list[str]:
        args = [str(harness.binary("kube-controller-manager")), f"--kubeconfig={self.kubeconfig}",
                f"--controllers={self.controllers}", "--leader-elect=false",
                "--bind-address=127.0.0.1", f"--secure-port={port}", "--use-service-account-credentials=false"]
        if self.feature_gates:
            args.append(f"--feature-gates={self.feature_gates}")
        return args

    def _grant_restricted_user(self) -> None:
        kube = self.client()
        kube.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                     "metadata": {"name": "e2e-restricted"}, "rules": RESTRICTED_RULES})
        kube.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                     "metadata": {"name": "e2e-restricted"},
                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                 "name": "e2e-restricted"},
                     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "restricted"}]})


def apiserver_args(workdir: Path, etcd_url: str, port: int, cert_dir: Path, runtime_config: str = RUNTIME_CONFIG,
                   feature_gates: str = FEATURE_GATES, etcd_prefix: str | None = None) -> list[str]:
    """kube-apiserver on 127.0.0.1:`port` over etcd at `etcd_url`, with the tokens and service
    account keys in `workdir` (tokens.csv, sa.key, sa.pub); `etcd_prefix` keeps several apiservers
    apart on one etcd."""
    args = [str(harness.binary("kube-apiserver")),
            f"--etcd-servers={etcd_url}", "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            f"--secure-port={port}", f"--cert-dir={cert_dir}",
            f"--token-auth-file={workdir / 'tokens.csv'}", "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={workdir / 'sa.pub'}",
            f"--service-account-signing-key-file={workdir / 'sa.key'}",
            "--service-cluster-ip-range=10.0.0.0/24", "--endpoint-reconciler-type=none",
            # No service-account, node-lifecycle or priority controllers run: these plugins
            # would reject pods or taint the fake nodes forever.
            "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority",
            f"--runtime-config={runtime_config}"]
    if etcd_prefix:
        args.append(f"--etcd-prefix={etcd_prefix}")
    if feature_gates:
        args.append(f"--feature-gates={feature_gates}")
    return args


def make_node(name: str, labels: dict | None = None) -> dict:
    """A Node the scheduler treats as Ready (there is no kubelet): Ready condition and allocatable."""
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "fake node for tests"}],
            "capacity": {"pods": "110", "cpu": "8", "memory": "32Gi"},
            "allocatable": {"pods": "110", "cpu": "8", "memory": "32Gi"},
        },
    }


def create_ready_node(kube: KubeClient, name: str, labels: dict | None = None) -> dict:
    """Creates a fake Ready node; the status is written again through the status subresource in
    case the create call dropped it."""
    node = make_node(name, labels)
    created = kube.create(node)
    created["status"] = node["status"]
    return kube.replace(created, subresource="status")
