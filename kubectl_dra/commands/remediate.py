"""`kubectl dra remediate`: a policy applied to device health through DeviceTaintRules it owns.

Without --apply nothing is written: the plan is printed (kubectl_dra.remediation.planner), each step
with what its rule taints through `taint`'s preview. --apply acts once. --watch keeps the store
live (the exporter's machinery) and reconciles on every change, at least every --interval, with
/healthz, /readyz and /metrics on --listen; --leader-elect acts only while holding a Lease.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import time
import uuid
from typing import TYPE_CHECKING

import click

from kubectl_dra.options import global_options

if TYPE_CHECKING:
    from kubectl_dra.remediation.lease import LeaderElector
    from kubectl_dra.store import Store

OUTPUTS = ("text", "yaml", "json")
COMPONENT = "kubectl-dra-remediate"
DEFAULT_INTERVAL_S = 30.0
EVENT_REASONS = {"create": "DeviceTainted", "change": "DeviceTaintChanged", "delete": "DeviceUntainted"}


def _interval(ctx, param, value):
    """A duration (`30s`, `1m`) or plain seconds; None when not given."""
    if value is None:
        return None
    from kubectl_dra.errors import InputError
    from kubectl_dra.remediation.policy import parse_duration

    try:
        seconds = float(value)
    except ValueError:
        seconds = parse_duration(value, "--interval")
    if seconds < 0.1:
        raise InputError(f"--interval {value}: at least 0.1s")
    return seconds


@click.command("remediate", epilog="""\b
Examples:
  kubectl dra remediate -f policy.yaml                 # the plan, nothing written
  kubectl dra remediate -f policy.yaml --apply         # act once
  kubectl dra remediate -f policy.yaml --watch --apply --leader-elect --listen :9809
  kubectl dra remediate -f policy.yaml --interval 10s     # a controller showing what it would do
\b
The policy file is described in docs/REMEDIATION.md. Only DeviceTaintRules labelled
kubectl-dra.io/remediation=<policy name> are the policy's: no other rule is ever changed.""")
@global_options
@click.option("-f", "--filename", "policy_file", required=True, metavar="POLICY",
              help="The policy file (YAML).")
@click.option("-o", "--output", type=click.Choice(OUTPUTS), default="text", show_default=True,
              help="text: the plan and what each step affects; yaml/json: the plan as data.")
@click.option("--apply", "apply_", is_flag=True, help="Write the plan's rules (without it, only show them).")
@click.option("--watch", is_flag=True, help="Keep reconciling from a live store (a controller).")
@click.option("--interval", callback=_interval, metavar="DURATION",
              help="Reconcile at least this often, changes or not (delays run out by time): 30s, 1m, or seconds; "
                   "implies --watch.  [default: 30s]")
@click.option("--listen", metavar="HOST:PORT", help="With --watch: serve /healthz, /readyz and /metrics here.")
@click.option("--leader-elect", is_flag=True, help="With --watch: act only while holding the Lease.")
@click.option("--lease-name", default="kubectl-dra-remediate", show_default=True)
@click.option("--lease-namespace", default="kube-system", show_default=True)
@click.option("--lease-duration", type=click.FloatRange(min=1.0), default=15.0, show_default=True, metavar="SECONDS")
@click.option("--identity", help="This replica's name in the Lease (default: hostname and a random suffix).")
@click.pass_context
def remediate(ctx, policy_file, output, apply_, watch, interval, listen, leader_elect, lease_name,
              lease_namespace, lease_duration, identity):
    """Apply a remediation policy: DeviceTaintRules for unhealthy devices (a preview without --apply)."""
    from kubectl_dra.errors import InputError
    from kubectl_dra.options import options_of
    from kubectl_dra.remediation.policy import load_policy

    policy = load_policy(policy_file)  # every policy error before anything is read
    config = options_of(ctx)
    if apply_ and config.offline:
        raise InputError(f"--apply writes to a cluster; {'--demo' if config.demo else '--from'} is offline")
    watch = watch or interval is not None
    if not watch and (listen or leader_elect):
        raise InputError("--listen and --leader-elect are for a controller: add --watch")
    if watch:
        from kubectl_dra.commands.exporter import parse_listen

        address = parse_listen(listen) if listen else None
        controller = Controller(config, policy, apply_, interval or DEFAULT_INTERVAL_S, address, identity or _identity(),
                                (lease_namespace, lease_name, lease_duration) if leader_elect else None)
        controller.serve()
        return
    _once(ctx, policy, output, apply_)


def _once(ctx, policy, output: str, apply_: bool) -> None:
    from kubectl_dra.commands.common import open_session, require_readable
    from kubectl_dra.commands.taint import raw_objects, rule_api_version
    from kubectl_dra.remediation.planner import Memory, plan, step_previews
    from kubectl_dra.store import unreadable_set

    session = open_session(ctx)
    store = session.loaded_store
    api_version = rule_api_version(store)
    require_readable(session, *policy.read_kinds)  # which rules are ours, and which devices fail, must be known
    steps = plan(policy, store.object_set(), store.features(), Memory(), _now(store), api_version)
    previews = step_previews(steps, raw_objects(store), store.features(), unreadable_set(store.kind_status))
    if apply_:
        _, errors = asyncio.run(_apply_once(session, store, steps, previews))
        for error in errors:
            click.echo(f"error: {error}", err=True)
        _show(policy, steps, previews, output, True)
        if errors:
            ctx.exit(1)
        return
    _show(policy, steps, previews, output, False)


async def _apply_once(session, store, steps, previews) -> tuple[list, list[str]]:
    from kubectl_dra.commands.taint import connect_api

    async with await connect_api(session) as server:
        return await apply_steps(server, store, steps, previews, COMPONENT, _identity())


async def apply_steps(server, store, steps, previews, component: str, instance: str) -> tuple[list, list[str]]:
    """Writes each acting step (deletes first), then an Event on each claim it affects; returns the
    steps written and the refusals, one line each (a rule created or deleted meanwhile is neither)."""
    from kubectl_dra.remediation.planner import written_rule
    from kubectl_dra.sources.apiserver import ApiStatusError
    from kubectl_dra.taint_rules import resource_path

    written, errors = [], []
    for index, step in enumerate(steps):
        if not step.acts:
            continue
        rule = written_rule(step)
        name = rule["metadata"]["name"]
        version = rule.get("apiVersion") or "resource.k8s.io/v1"
        try:
            if step.action == "create":
                await server.send_json("POST", resource_path(version), body=rule, content_type="application/json")
            elif step.action == "change":
                await server.send_json("PATCH", resource_path(version, name),
                                       body={"spec": {"taint": {"effect": step.effect}}},
                                       content_type="application/merge-patch+json")
            else:
                await server.send_json("DELETE", resource_path(version, name))
        except ApiStatusError as error:
            if (step.action, error.status) not in (("create", 409), ("change", 404), ("delete", 404)):
                errors.append(f"{step.action} DeviceTaintRule/{name}: {error.reason or error.status}: "
                              f"{' '.join((error.message or str(error)).split())}")
            continue
        written.append(step)
        preview = previews.get(index)
        for claim in preview.claims if preview else ():
            event = _event(store, step, name, claim.namespace, claim.name, component, instance)
            try:
                await server.send_json("POST", f"/api/v1/namespaces/{claim.namespace}/events", body=event,
                                       content_type="application/json")
            except ApiStatusError as error:
                errors.append(f"Event on ResourceClaim {claim.namespace}/{claim.name}: {error.reason or error.status}")
    return written, errors


def _event(store, step, rule_name: str, namespace: str, claim_name: str, component: str, instance: str) -> dict:
    from kubectl_dra.remediation.lease import micro_time

    claim = store.get("ResourceClaim", namespace, claim_name) or {}
    now = time.time()
    stamp = micro_time(now)[:19] + "Z"
    device = "/".join(step.device)
    verb = {"create": f"tainted {step.effect}", "change": f"taint changed from {step.previous} to {step.effect}",
            "delete": "taint removed"}[step.action]
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"generateName": f"{claim_name}.", "namespace": namespace},
            "involvedObject": {"apiVersion": claim.get("apiVersion") or "resource.k8s.io/v1", "kind": "ResourceClaim",
                               "namespace": namespace, "name": claim_name,
                               "uid": (claim.get("metadata") or {}).get("uid", "")},
            "reason": EVENT_REASONS[step.action],
            "message": f"device {device} {verb} by DeviceTaintRule/{rule_name}: {step.reason}"[:1024],
            "type": "Normal" if step.action == "delete" else "Warning",
            "source": {"component": component}, "reportingComponent": component, "reportingInstance": instance,
            "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1}


def _now(store) -> float:
    """The time delays are measured at: a snapshot's own offline (its ages do not grow), else now."""
    from kubectl_dra.store import utc_now

    return store.connection.reference_time(utc_now()).timestamp()


def _identity() -> str:
    """client-go's habit: the hostname and a random suffix, so two replicas never share one."""
    return f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"


def _show(policy, steps, previews, output: str, applied: bool) -> None:
    from kubectl_dra.terminal_text import safe_line

    if output in ("json", "yaml"):
        document = {"policy": policy.name, "applied": applied, "steps": []}
        for index, step in enumerate(steps):
            entry = step.to_dict()
            preview = previews.get(index)
            if preview is not None:
                entry.update({k: v for k, v in preview.to_dict().items() if k != "devices"})
            document["steps"].append(entry)
        if output == "json":
            click.echo(json.dumps(document, indent=2, ensure_ascii=True))
        else:
            from kubectl_dra.yaml_writer import yaml_text

            click.echo(yaml_text(document, ascii_only=True), nl=False)
        return
    acting = sum(1 for s in steps if s.acts)
    held = sum(1 for s in steps if s.action == "hold")
    state = "applied" if applied else "not applied (add --apply to act)"
    click.echo(safe_line(f"policy {policy.name}: {acting} step{'s' if acting != 1 else ''} to act, {held} held back"
                         + (f": {state}" if acting else "")))
    for index, step in enumerate(steps):
        device = "/".join(step.device)
        rule = f" DeviceTaintRule/{step.rule_name}" if step.rule_name else ""
        effect = {"create": f" {step.effect}", "change": f" {step.previous} -> {step.effect}",
                  "hold": f" {step.effect}", "wait": f" {step.effect or ''}".rstrip()}.get(step.action, "")
        click.echo(safe_line(f"{step.action}{rule}{effect} on {device}: {step.reason}"))
        preview = previews.get(index)
        if preview is None:
            continue
        if not preview.claims_known:
            from kubectl_dra.commands.taint import unknown_claims_lines

            for line in unknown_claims_lines(step.effect, step.action == "delete"):
                click.echo(line)
            continue
        claims = [f"{c.namespace}/{c.name}" + (" (tolerates)" if c.tolerated else "") for c in preview.claims]
        if claims:
            click.echo(safe_line(f"  claims: {', '.join(claims)}"))
        evicted = preview.evicted_pods()
        if step.action != "delete" and evicted:
            words = "evicts" if step.effect == "NoExecute" else "with NoExecute would evict"
            click.echo(safe_line(f"  {words}: {', '.join(evicted)}"))


class Controller:
    """--watch: the live store, a reconcile on every change (at least every interval), the Lease."""

    def __init__(self, config, policy, apply_: bool, interval: float, address, identity: str, lease) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge

        from kubectl_dra.remediation.lease import LeaderElector
        from kubectl_dra.remediation.planner import Memory

        self.config, self.policy, self.apply, self.interval = config, policy, apply_, interval
        self.address, self.identity = address, identity
        self.memory = Memory()
        self.store: Store | None = None
        self.problem = "the first lists are not in yet"
        self.reconciled_at: float | None = None
        self.ticked_at = time.monotonic()
        self.elector: LeaderElector | None = None
        if lease is not None:
            namespace, name, duration = lease
            self.elector = LeaderElector(identity, namespace, name, duration, renew_deadline_s=duration * 2 / 3)
        self.registry = CollectorRegistry(auto_describe=True)
        self.applied = Counter("dra_remediation_steps_applied", "Steps written: DeviceTaintRules created, "
                               "their effect changed, deleted.", ["policy", "action"], registry=self.registry)
        self.held = Gauge("dra_remediation_devices_held", "Devices the policy would taint that its limit holds "
                          "back, at the last reconcile.", ["policy"], registry=self.registry)
        self.errors = Counter("dra_remediation_write_errors", "Writes the API server refused.", ["policy"],
                              registry=self.registry)
        self.leader = Gauge("dra_remediation_leader", "1 while this replica may act (holds the Lease, or "
                            "no leader election).", ["policy"], registry=self.registry)
        self.reconciles = Counter("dra_remediation_reconciles", "Plans made.", ["policy"], registry=self.registry)

    def serve(self) -> None:
        import signal

        server = self._http() if self.address else None

        async def main() -> None:
            task = asyncio.current_task()
            assert task is not None
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, task.cancel)
            try:
                await self.run()
            except asyncio.CancelledError:
                pass

        try:
            asyncio.run(main())
        finally:
            if server is not None:
                server.shutdown()

    async def run(self) -> None:
        from kubectl_dra.commands.exporter import load_store
        from kubectl_dra.sources.apiserver import ApiServer, ConnectOptions

        def unreachable(problem: str) -> None:
            self.problem = problem

        store, source = await load_store(self.config, unreachable)
        self.store = store
        changed = asyncio.Event()
        store.add_listener(lambda change: changed.set())
        changed.set()
        server = None
        if not self.config.offline:
            server = await ApiServer.connect(ConnectOptions(self.config.kubeconfig, self.config.context,
                                                            self.config.request_timeout))
        tasks = [asyncio.create_task(self._reconcile_forever(store, server, changed))]
        if source is not None and source.live:
            tasks.append(asyncio.create_task(source.run(store)))
        if self.elector is not None and server is not None:
            tasks.append(asyncio.create_task(self._elect_forever(self.elector, server, changed)))
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()
        finally:
            for task in tasks:
                task.cancel()
            if self.elector is not None and server is not None:
                await self._release(self.elector, server)
            if server is not None:
                await server.close()

    def may_act(self) -> bool:
        return self.elector is None or self.elector.leading(time.monotonic())

    async def _reconcile_forever(self, store, server, changed: asyncio.Event) -> None:
        from kubectl_dra.commands.common import unreadable_line
        from kubectl_dra.commands.taint import raw_objects, rule_api_version
        from kubectl_dra.remediation.planner import plan, step_previews
        from kubectl_dra.store import unreadable_kinds, unreadable_set

        while True:
            try:
                await asyncio.wait_for(changed.wait(), self.interval)
            except asyncio.TimeoutError:
                pass
            changed.clear()
            self.ticked_at = time.monotonic()
            leading = self.may_act()
            self.leader.labels(self.policy.name).set(1 if leading else 0)
            missing = unreadable_kinds(store.kind_status, self.policy.read_kinds)
            if missing:  # no plan without the signals: a rule would be deleted as if its device were healthy
                self.problem = f"cannot plan: {unreadable_line(missing[0])}"
                print(f"error: {self.problem}", file=sys.stderr, flush=True)
                continue
            try:
                steps = plan(self.policy, store.object_set(), store.features(), self.memory, _now(store),
                             rule_api_version(store))
                previews = step_previews(steps, raw_objects(store), store.features(),
                                         unreadable_set(store.kind_status))
            except Exception as error:  # a bug or a refused rule must not stop the controller: say it on /readyz
                self.problem = f"planning failed: {type(error).__name__}: {error}"
                print(f"error: {self.problem}", file=sys.stderr, flush=True)
                continue
            self.reconciles.labels(self.policy.name).inc()
            self.held.labels(self.policy.name).set(sum(1 for s in steps if s.action == "hold"))
            self.problem = ""
            self.reconciled_at = time.monotonic()
            acting = [s for s in steps if s.acts]
            if not acting:
                continue
            for step in acting:
                print(f"{'' if self.apply and leading else 'would '}{step.action} {'/'.join(step.device)} "
                      f"{step.effect or ''}: {step.reason}", file=sys.stderr, flush=True)
            if not self.apply or not leading or server is None:
                continue
            written, errors = await apply_steps(server, store, steps, previews, COMPONENT, self.identity)
            for refusal in errors:
                print(f"error: {refusal}", file=sys.stderr, flush=True)
            self.errors.labels(self.policy.name).inc(len(errors))
            for step in written:
                self.applied.labels(self.policy.name, step.action).inc()

    async def _elect_forever(self, elector: LeaderElector, server, changed: asyncio.Event) -> None:
        from kubectl_dra.remediation.lease import lease_path
        from kubectl_dra.sources.apiserver import ApiStatusError

        retry = max(0.2, elector.lease_duration_s / 5)
        while True:
            was_leading = elector.leading(time.monotonic())
            try:
                try:
                    lease = await server.get_json(lease_path(elector.namespace, elector.name))
                except ApiStatusError as error:
                    if error.status != 404:
                        raise
                    lease = None
                attempt = elector.attempt(lease, time.time(), time.monotonic())
                if attempt is not None:
                    verb, body = attempt
                    path = lease_path(elector.namespace, None if verb == "POST" else elector.name)
                    written = await server.send_json(verb, path, body=body, content_type="application/json")
                    elector.written(written, time.monotonic())
            except Exception as failure:  # a conflict (another won), a refusal, the network: not leading
                elector.lost()
                if was_leading:
                    print(f"lost the Lease {elector.namespace}/{elector.name}: {failure}", file=sys.stderr, flush=True)
            leading = elector.leading(time.monotonic())
            if leading != was_leading:
                if leading:
                    print(f"leading: holding Lease {elector.namespace}/{elector.name} as {self.identity}",
                          file=sys.stderr, flush=True)
                changed.set()  # act (or stop acting) now, not at the next interval
            await asyncio.sleep(retry)

    async def _release(self, elector: LeaderElector, server) -> None:
        from kubectl_dra.remediation.lease import lease_path

        if not elector.leading(time.monotonic()):
            return
        try:
            lease = await server.get_json(lease_path(elector.namespace, elector.name))
            if (lease.get("spec") or {}).get("holderIdentity") == self.identity:
                await server.send_json("PUT", lease_path(elector.namespace, elector.name), body=elector.released(lease),
                                       content_type="application/json")
        except Exception:  # best effort: otherwise the Lease expires
            pass

    # --- probes ---------------------------------------------------------------------------------------

    def healthz(self) -> tuple[bool, str]:
        stalled = time.monotonic() - self.ticked_at
        if stalled > max(3 * self.interval, 30.0):
            return False, f"no reconcile for {stalled:.0f}s"
        return True, "ok"

    def readyz(self) -> tuple[bool, str]:
        store = self.store
        if store is None or self.reconciled_at is None:
            return False, f"not ready: {self.problem or 'no plan made yet'}"
        freshness = store.freshness()
        if freshness.stale:
            return False, f"not ready: {freshness.label()}: {freshness.reason}"
        role = "" if self.elector is None else ("\nleader" if self.may_act() else "\nstandby (another replica holds the Lease)")
        return True, "ok" + role + (f"\n{self.problem}" if self.problem else "")

    def _http(self):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        from kubectl_dra.errors import InputError

        controller = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                if self.path == "/metrics":
                    status, kind, body = 200, CONTENT_TYPE_LATEST, generate_latest(controller.registry)
                elif self.path in ("/healthz", "/livez", "/readyz"):
                    ok, text = controller.readyz() if self.path == "/readyz" else controller.healthz()
                    status, kind, body = (200 if ok else 503), "text/plain; charset=utf-8", (text + "\n").encode()
                else:
                    status, kind, body = 404, "text/plain; charset=utf-8", b"not found\n"
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format, *args):  # noqa: A002 - probes are not news
                pass

        host, port = self.address
        try:
            server = ThreadingHTTPServer((host, port), Handler)
        except OSError as error:
            raise InputError(f"--listen {host}:{port}: cannot listen: {error.strerror or error}") from None
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, name="remediate-http", daemon=True).start()
        print(f"serving /healthz, /readyz and /metrics on http://{host}:{server.server_port}", file=sys.stderr,
              flush=True)
        self.address = (host, server.server_port)
        return server
