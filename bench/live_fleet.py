"""A fleet of live clusters on this machine for bench/multicluster_bench.py --live: one etcd and N
kube-apiservers from the Go harness (tests/harness, built into .cache/harness), each apiserver with
its own --etcd-prefix and port, so N clusters cost one etcd; no scheduler or controller runs (the
bench only reads). Each cluster is filled with bench/fleet.py's objects over the API (parallel
requests on kept-alive connections), and one kubeconfig names a context per cluster (c0, c1, ...).

Every process runs in its own group (tests/e2e/controlplane.Component) and `LiveFleet.stop`
ends them all; use it as a context manager so Ctrl-C stops them too.

    nice .venv/bin/python bench/live_fleet.py [--clusters 10] [--nodes 500] [--shape partitioned|whole]

starts and fills a fleet, prints its kubeconfig and keeps it running until Ctrl-C or SIGTERM (for
`multicluster_bench.py --kubeconfig FILE`, which then measures it again and again without filling).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import secrets
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import fleet  # noqa: E402  (bench/fleet.py: this script's folder is on the path)

from e2e import harness  # noqa: E402
from e2e.controlplane import Component, apiserver_args, free_port  # noqa: E402

READY_TIMEOUT_S = 120.0
FILL_CONNECTIONS = 6
"""Requests in flight per apiserver while filling: enough to keep it busy on 2 shared cores."""
SYSTEM_FIELDS = ("uid", "resourceVersion", "creationTimestamp")
"""What fleet.py's snapshot objects carry that an apiserver sets itself (and refuses on create)."""


class LiveFleet:
    def __init__(self, clusters: int, nodes: int, shape: str) -> None:
        self.clusters, self.nodes, self.shape = clusters, nodes, shape
        self.workdir = Path(tempfile.mkdtemp(prefix="live-fleet-"))
        self.token = secrets.token_hex(16)
        self.components: list[Component] = []
        self.ports: list[int] = []

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig"

    def contexts(self) -> list[str]:
        return [f"c{index}" for index in range(self.clusters)]

    def __enter__(self) -> LiveFleet:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        harness.build("controlplane")
        (self.workdir / "tokens.csv").write_text(f'{self.token},admin,admin,"system:masters"\n')
        for args in (["genrsa", "-out", str(self.workdir / "sa.key"), "2048"],
                     ["rsa", "-in", str(self.workdir / "sa.key"), "-pubout", "-out", str(self.workdir / "sa.pub")]):
            subprocess.run(["openssl", *args], check=True, capture_output=True)
        etcd_port, peer_port = free_port(), free_port()
        etcd_url, peer = f"http://127.0.0.1:{etcd_port}", f"http://127.0.0.1:{peer_port}"
        etcd = Component("etcd", [
            str(harness.binary("etcd")), "--name=fleet", f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls={etcd_url}", f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=fleet={peer}", "--unsafe-no-fsync", "--log-level=warn",
            "--quota-backend-bytes=8589934592"], self.workdir / "etcd.log", f"{etcd_url}/health")
        self._start(etcd, token=None)
        for index in range(self.clusters):
            port = free_port()
            self.ports.append(port)
            args = apiserver_args(self.workdir, etcd_url, port, self.workdir / f"certs-c{index}",
                                  etcd_prefix=f"/fleet/c{index}")
            self.components.append(Component(f"kube-apiserver-c{index}", args,
                self.workdir / f"kube-apiserver-c{index}.log", f"https://127.0.0.1:{port}/readyz"))
        for component in self.components[1:]:
            component.start()  # all at once: each takes seconds of CPU to come up
        for component in self.components[1:]:
            self._wait(component, token=self.token)
        self._write_kubeconfig()

    def stop(self) -> None:
        for component in reversed(self.components):
            component.stop()
        self.components.clear()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def fill(self) -> tuple[int, float]:
        """Every cluster filled with fleet.py's objects: (objects written, seconds)."""
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.clusters) as pool:
            written = sum(pool.map(self._fill_one, range(self.clusters)))
        return written, time.perf_counter() - start

    def _fill_one(self, index: int) -> int:
        port = self.ports[index]
        first = [_creatable(obj) for obj in fleet.cluster_objects()]
        for obj in first[:3]:  # the namespace and the classes before anything that names them
            _Writer(port, self.token).write(obj)
        per_node = [_creatable(obj) for n in range(self.nodes) for obj in fleet.node_objects(n, self.shape)]
        rest = first[3:] + per_node
        local = threading.local()

        def write(obj: dict) -> None:
            if not hasattr(local, "writer"):
                local.writer = _Writer(port, self.token)
            local.writer.write(obj)

        with concurrent.futures.ThreadPoolExecutor(max_workers=FILL_CONNECTIONS) as pool:
            list(pool.map(write, rest, chunksize=64))
        return len(first[:3]) + len(rest)

    def _start(self, component: Component, token: str | None) -> None:
        self.components.append(component)
        component.start()
        self._wait(component, token)

    def _wait(self, component: Component, token: str | None) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not _healthy(component.health_url, token):
            if not component.running():
                raise RuntimeError(f"{component.name} exited; last log lines:\n{component.log_tail(30)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{component.name} not ready after {READY_TIMEOUT_S:.0f} s:\n"
                                   f"{component.log_tail(30)}")
            time.sleep(0.25)
        print(f"{component.name} ready", file=sys.stderr, flush=True)

    def _write_kubeconfig(self) -> None:
        contexts = self.contexts()
        self.kubeconfig.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": contexts[0],
            "clusters": [{"name": name, "cluster": {"server": f"https://127.0.0.1:{port}",
                                                    "insecure-skip-tls-verify": True}}
                         for name, port in zip(contexts, self.ports)],
            "users": [{"name": "admin", "user": {"token": self.token}}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": "admin"}} for name in contexts]}))


def _creatable(obj: dict) -> dict:
    metadata = {key: value for key, value in obj["metadata"].items() if key not in SYSTEM_FIELDS}
    obj = {**obj, "metadata": metadata}
    if obj["kind"] != "ResourceSlice":
        return obj
    # The apiserver wants counter names that are DNS labels (validateCounterName in
    # kubernetes/kubernetes pkg/apis/resource/validation/validation.go); fleet.py's files name the
    # memory slices memorySlice0.., which the snapshot files keep so that earlier figures compare.
    spec = dict(obj["spec"])
    if "sharedCounters" in spec:
        spec["sharedCounters"] = [{**counter_set, "counters": _dns_counters(counter_set["counters"])}
                                  for counter_set in spec["sharedCounters"]]
    if "devices" in spec:
        spec["devices"] = [{**device, "consumesCounters": [{**used, "counters": _dns_counters(used["counters"])}
                                                           for used in device["consumesCounters"]]}
                           if "consumesCounters" in device else device for device in spec["devices"]]
    return {**obj, "spec": spec}


def _dns_counters(counters: dict) -> dict:
    return {name.replace("memorySlice", "memory-slice-"): value for name, value in counters.items()}


def _insecure() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _healthy(url: str, token: str | None) -> bool:
    import urllib.request

    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5, context=_insecure()) as response:
            return response.status == 200
    except OSError:
        return False


class _Writer:
    """One kept-alive connection to an apiserver that creates objects (and a claim's status)."""

    PATHS = {"Namespace": "/api/v1/namespaces", "Node": "/api/v1/nodes",
             "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
             "ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices"}
    NAMESPACED = {"ResourceClaim": "/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims",
                  "Pod": "/api/v1/namespaces/{}/pods"}

    def __init__(self, port: int, token: str) -> None:
        self.connection = http.client.HTTPSConnection("127.0.0.1", port, context=_insecure(), timeout=60)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                        "Accept": "application/json"}

    def write(self, obj: dict) -> None:
        kind = obj["kind"]
        path = self.PATHS.get(kind) or self.NAMESPACED[kind].format(obj["metadata"]["namespace"])
        created = self._request("POST", path, obj)
        if kind == "ResourceClaim" and "status" in obj:
            created["status"] = obj["status"]
            self._request("PUT", f"{path}/{obj['metadata']['name']}/status", created)

    def _request(self, method: str, path: str, body: dict) -> dict:
        self.connection.request(method, path, json.dumps(body), self.headers)
        response = self.connection.getresponse()
        payload = response.read()
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: {response.status}: {payload[:300]!r}")
        return json.loads(payload)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--shape", choices=tuple(fleet.SHAPES), default="partitioned")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with LiveFleet(args.clusters, args.nodes, args.shape) as clusters:
        written, seconds = clusters.fill()
        print(f"{written} objects written in {seconds:.0f} s; kubeconfig {clusters.kubeconfig} "
              f"(contexts {','.join(clusters.contexts())}); Ctrl-C stops it", flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
