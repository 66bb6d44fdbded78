"""`kubectl dra taint` and `kubectl dra untaint`: DeviceTaintRules the way `kubectl taint` works
for nodes. Without --apply nothing is written: the rule is printed with what it would affect
(kubectl_dra.taint_rules.preview). `kubectl dra taints` (read-only) lists what is there."""

from __future__ import annotations

import asyncio
import json
import time

import click

from kubectl_dra.options import global_options

WRITE_FORMATS = ("text", "yaml", "json")


def _common(function):
    function = click.option("-o", "--output", type=click.Choice(WRITE_FORMATS), default="text", show_default=True,
                            help="text: the rule and what it affects; yaml/json: the rule objects only.")(function)
    function = click.option("--apply", "apply_", is_flag=True,
                            help="Write to the cluster (without it, only show what would be written).")(function)
    return function


@click.command("taint", epilog="""\b
Examples:
  kubectl dra taint gpu.example.com/node-1/gpu-3 --key example.com/xid --effect None
  kubectl dra taint --pool node-1 --key example.com/maintenance --effect NoSchedule --apply
  kubectl dra taint --driver gpu.example.com --selector 'device.attributes["gpu.example.com"].model == "A100"' \\
      --key example.com/recall --effect NoExecute
  kubectl dra taint --promote gpu-3-1a2b3c4d NoExecute --apply
\b
DEVICE is DRIVER/POOL/DEVICE (or a device name, narrowed by --driver and --pool). A --selector CEL
expression is evaluated now into one rule per device (rules cannot carry CEL from Kubernetes 1.35).
Effect None (1.35+) taints nothing: the device-taint-eviction controller writes what NoExecute
would evict into the rule's status, shown after --apply; then --promote NAME NoExecute.""")
@global_options
@click.argument("device", required=False)
@click.option("--driver", help="Only devices of this driver.")
@click.option("--pool", help="Only devices of this pool.")
@click.option("--key", help="The taint key (a qualified name, e.g. example.com/broken).")
@click.option("--value", help="The taint value (optional).")
@click.option("--effect", type=click.Choice(["None", "NoSchedule", "NoExecute"]), help="The taint effect.")
@click.option("--name", help="The DeviceTaintRule's name (default: derived from key, device and effect).")
@click.option("--promote", nargs=2, metavar="NAME EFFECT", help="Change the effect of an existing rule.")
@click.option("--wait", type=click.FloatRange(min=0), default=10.0, show_default=True, metavar="SECONDS",
              help="After --apply with effect None, wait this long for the controller's preview.")
@_common
@click.pass_context
def taint(ctx, device, driver, pool, key, value, effect, name, promote, wait, output, apply_):
    """Taint devices with a DeviceTaintRule (a preview without --apply).

    --selector CEL (the global -l/--selector flag, here a CEL expression over `device`, as in a
    DeviceClass) narrows the devices further."""
    from kubectl_dra import taint_rules
    from kubectl_dra.commands.common import open_session
    from kubectl_dra.errors import InputError
    from kubectl_dra.options import listing_of

    listing = listing_of(ctx)
    cel, listing.selector = listing.selector, None  # here a CEL expression, not a label selector

    if promote:
        if any((device, driver, pool, cel, key, value, effect, name)):
            raise InputError("--promote NAME EFFECT changes an existing rule: give no DEVICE, --driver, --pool, "
                             "--selector, --key, --value, --effect or --name with it")
        return _promote(ctx, *promote, wait, output, apply_)
    if not key or not effect:
        raise InputError("--key and --effect are required (or --promote NAME EFFECT)")
    if apply_:
        _refuse_offline(ctx)
    selection = taint_rules.parse_device(device) if device else taint_rules.Selection()
    for flag, given, current in (("--driver", driver, selection.driver), ("--pool", pool, selection.pool)):
        if given and current and given != current:
            raise InputError(f"{flag} {given} contradicts DEVICE {device}")
    selection = taint_rules.Selection(driver or selection.driver, pool or selection.pool, selection.device)
    if not (selection.to_dict() or cel):
        raise InputError("select devices: DEVICE, --driver, --pool or --selector (a rule for every device of "
                         "the cluster is not what you want)")
    session = open_session(ctx)
    store = session.store
    api_version = rule_api_version(store)
    minor = store.kubernetes_minor()
    taint_rules.check_taint(key, value, effect, minor)
    if cel:
        selections = taint_rules.select_devices(store.object_set(), store.features(), selection, cel)
        if not selections:
            raise InputError(f"--selector {cel!r}: no device of {selection} matches")
    else:
        selections = [selection]
    rules = []
    for index, chosen in enumerate(selections):
        rule_name = name or taint_rules.rule_name(chosen, key, value, effect)
        if name and len(selections) > 1:
            rule_name = f"{name}-{index}"
        rules.append(taint_rules.build_rule(rule_name, chosen, key, value, effect, api_version))
    slices = store.kind_status.get("ResourceSlice")
    if not cel and (slices is None or slices.state == "ok") and not taint_rules.selects_any(store.object_set(), selection):
        # A typo would otherwise write a rule that taints nothing (kubectl taint refuses a node that does not exist).
        raise InputError(f"{device or selection}: no such device ({selection} matches no device of the cluster; "
                         "kubectl dra devices lists them)")
    previews = previews_of(store, rules)
    if apply_:
        written = _run(_create(session, rules))
        if effect == "None":
            written = _run(_await_status(session, written, wait))
        for preview, obj in zip(previews, written):
            preview.rule = obj
    _show(previews, output, apply_, "created")


def _cel_selector(command):
    """-l/--selector is global (a label selector for list commands); here it is a CEL expression."""
    for param in command.params:
        if param.name == "selector_flag":
            param.metavar = "CEL"
            param.help = ("A CEL expression over `device`, as in a DeviceClass selector (not a label selector), e.g. "
                          "-l 'device.attributes[\"gpu.example.com\"].model == \"A100\"'; evaluated now into one "
                          "rule per device.")
    return command


taint = _cel_selector(taint)


def _promote(ctx, name, effect, wait, output, apply_):
    from kubectl_dra import taint_rules
    from kubectl_dra.commands.common import open_session, require_readable
    from kubectl_dra.errors import InputError

    if effect not in taint_rules.EFFECTS:
        raise InputError(f"--promote {name} {effect}: the effect must be one of {', '.join(taint_rules.EFFECTS)}")
    if apply_:
        _refuse_offline(ctx)
    session = open_session(ctx)
    store = session.store
    rule_api_version(store)
    require_readable(session, "DeviceTaintRule")
    current = store.get("DeviceTaintRule", "", name)
    if current is None:
        raise InputError(f"DeviceTaintRule/{name} not found")
    taint = dict((current.get("spec") or {}).get("taint") or {})
    taint_rules.check_taint(taint.get("key", ""), taint.get("value"), effect, store.kubernetes_minor())
    changed = json.loads(json.dumps(current))
    changed["spec"]["taint"] = {**taint, "effect": effect}
    changed.pop("status", None)
    [preview] = previews_of(store, [changed], replace=True)
    if apply_:
        [written] = _run(_patch_effect(session, current, effect))
        if effect == "None":
            [written] = _run(_await_status(session, [written], wait))
        preview.rule = written
    _show([preview], output, apply_, f"changed from {taint.get('effect')} to {effect}")


@click.command("untaint", epilog="""\b
Examples:
  kubectl dra untaint gpu-3-1a2b3c4d            # what would be deleted
  kubectl dra untaint --key example.com/xid --apply
\b
Only DeviceTaintRules can be removed; a taint a ResourceSlice publishes is its driver's.""")
@global_options
@click.argument("names", nargs=-1)
@click.option("--key", help="Every DeviceTaintRule with this taint key.")
@_common
@click.pass_context
def untaint(ctx, names, key, output, apply_):
    """Delete DeviceTaintRules by name or taint key (a preview without --apply)."""
    from kubectl_dra import taint_rules
    from kubectl_dra.commands.common import open_session, require_readable
    from kubectl_dra.errors import InputError

    if bool(names) == bool(key):
        raise InputError("give rule NAMEs or --key KEY (one of them)")
    if apply_:
        _refuse_offline(ctx)
    session = open_session(ctx)
    store = session.store
    rule_api_version(store)
    require_readable(session, "DeviceTaintRule")  # "not found" would be a guess
    rules = store.items("DeviceTaintRule")
    if key:
        chosen = taint_rules.rules_with_key(rules, key)
        if not chosen:
            from kubectl_dra.commands.common import cluster_model

            sources = sorted({g.source for g in cluster_model(store).taints if g.key == key})
            if sources:
                raise InputError(f"taint key {key} comes from {', '.join(sources)}: a taint a slice publishes is "
                                 "removed by its driver, not by a DeviceTaintRule")
            raise InputError(f"no DeviceTaintRule has taint key {key}")
    else:
        by_name = {(r.get("metadata") or {}).get("name"): r for r in rules}
        missing = [n for n in names if n not in by_name]
        if missing:
            raise InputError(f"DeviceTaintRule/{missing[0]} not found")
        chosen = [by_name[n] for n in dict.fromkeys(names)]
    previews = previews_of(store, chosen, replace=True)
    if apply_:
        _run(_delete(session, chosen))
    _show(previews, output, apply_, "deleted", removing=True)


# --- helpers ------------------------------------------------------------------------------------------


def _refuse_offline(ctx) -> None:
    from kubectl_dra.errors import InputError
    from kubectl_dra.options import options_of

    config = options_of(ctx)
    if config.offline:
        raise InputError(f"--apply writes to a cluster; {'--demo' if config.demo else '--from'} is offline")


def rule_api_version(store) -> str:
    """The served version DeviceTaintRules are read and written in (v1, v1beta2 or v1alpha3)."""
    from kubectl_dra.errors import InputError

    status = store.kind_status.get("DeviceTaintRule")
    if status is not None and status.state == "not-served":
        raise InputError("this cluster serves no DeviceTaintRules (resource.k8s.io v1, v1beta2 or v1alpha3): "
                         "they need the DRADeviceTaintRules feature gate and the API version enabled")
    if status is not None and status.api_version:
        return status.api_version
    version = store.connection.resource_api_version or "resource.k8s.io/v1"
    return version if store.kubernetes_minor() >= 35 or "alpha" in version else "resource.k8s.io/v1alpha3"


def previews_of(store, rules: list[dict], replace: bool = False) -> list:
    """taint_rules.preview over the store's objects, knowing which kinds it could not read."""
    from kubectl_dra import taint_rules
    from kubectl_dra.store import unreadable_set

    return taint_rules.preview(raw_objects(store), rules, store.features(), replace=replace,
                               unreadable=unreadable_set(store.kind_status))


def raw_objects(store) -> list[dict]:
    from kubectl_dra.store import KINDS

    return [obj for kind in KINDS for obj in store.items(kind)]


def _run(coroutine):
    return asyncio.run(coroutine)


async def connect_api(session):
    from kubectl_dra.sources.apiserver import ApiServer, ConnectOptions

    config = session.config
    return await ApiServer.connect(ConnectOptions(config.kubeconfig, config.context, config.request_timeout))


async def _write(session, calls) -> list[dict]:
    """Each call: (verb words, method, path, body, content type). Stops at the first refusal with
    kubectl's line (`Error from server (Forbidden): ...`) and exit 1."""
    from kubectl_dra.errors import EXIT_SERVER_REFUSED
    from kubectl_dra.sources.apiserver import ApiStatusError
    from kubectl_dra.terminal_text import safe_line

    written = []
    async with await connect_api(session) as server:
        for what, method, path, body, content_type in calls:
            try:
                written.append(await server.send_json(method, path, body=body, content_type=content_type))
            except ApiStatusError as error:
                reason = error.reason or str(error.status)
                message = " ".join((error.message or str(error)).split())
                click.echo(safe_line(f"Error from server ({reason}): {what}: {message}"), err=True)
                click.get_current_context().exit(EXIT_SERVER_REFUSED)
    return written


async def _create(session, rules: list[dict]) -> list[dict]:
    from kubectl_dra import taint_rules

    return await _write(session, [(f"creating DeviceTaintRule/{r['metadata']['name']}", "POST",
                                   taint_rules.resource_path(r["apiVersion"]), r, "application/json")
                                  for r in rules])


async def _patch_effect(session, rule: dict, effect: str) -> list[dict]:
    from kubectl_dra import taint_rules

    name = rule["metadata"]["name"]
    body = {"spec": {"taint": {"effect": effect}}}
    return await _write(session, [(f"changing DeviceTaintRule/{name}", "PATCH",
                                   taint_rules.resource_path(_version_of(rule, session), name), body,
                                   "application/merge-patch+json")])


async def _delete(session, rules: list[dict]) -> list[dict]:
    from kubectl_dra import taint_rules

    return await _write(session, [(f"deleting DeviceTaintRule/{r['metadata']['name']}", "DELETE",
                                   taint_rules.resource_path(_version_of(r, session), r["metadata"]["name"]),
                                   None, None) for r in rules])


def _version_of(rule: dict, session) -> str:
    return rule.get("apiVersion") or rule_api_version(session.store)


async def _await_status(session, rules: list[dict], wait_s: float) -> list[dict]:
    """Reads the rules again until the controller wrote its EvictionInProgress condition (effect
    None: what NoExecute would evict), or `wait_s` passed."""
    from kubectl_dra import taint_rules
    from kubectl_dra.sources.apiserver import ApiStatusError

    deadline = time.monotonic() + wait_s
    current = list(rules)
    async with await connect_api(session) as server:
        while True:
            pending = [i for i, r in enumerate(current) if taint_rules.eviction_status(r) is None]
            if not pending or time.monotonic() >= deadline:
                return current
            await asyncio.sleep(0.5)
            for i in pending:
                rule = current[i]
                try:
                    current[i] = await server.get_json(
                        taint_rules.resource_path(rule.get("apiVersion") or "resource.k8s.io/v1",
                                                  rule["metadata"]["name"]))
                except ApiStatusError:
                    continue


def _show(previews, output: str, applied: bool, done: str, removing: bool = False) -> None:
    from kubectl_dra import taint_rules
    from kubectl_dra.terminal_text import safe_line

    if output in ("yaml", "json"):
        objects = [p.rule for p in previews]
        document = objects[0] if len(objects) == 1 else {"apiVersion": "v1", "kind": "List", "items": objects}
        if output == "json":
            click.echo(json.dumps(document, indent=2, ensure_ascii=True))
        else:
            from kubectl_dra.yaml_writer import yaml_text

            click.echo(yaml_text(document, ascii_only=True), nl=False)
        return
    for preview in previews:
        spec = preview.rule.get("spec") or {}
        taint = spec.get("taint") or {}
        text = f"{taint.get('key')}{'=' + taint['value'] if taint.get('value') else ''}:{taint.get('effect')}"
        selection = taint_rules.Selection(**{k: v for k, v in (spec.get("deviceSelector") or {}).items()
                                             if k in ("driver", "pool", "device")})
        verb = "deleted" if removing else done
        state = verb if applied else f"not {'deleted' if removing else 'applied'} (add --apply to write it)"
        lines = [f"DeviceTaintRule/{preview.name} ({preview.rule.get('apiVersion')}): {text} on {selection}: {state}"]
        devices = [str(d.id) for d in preview.devices]
        lines.append(f"  devices: {len(devices)}" + (f" ({_few(devices)})" if devices else ""))
        claims = [f"{c.namespace}/{c.name}" + (" (tolerates)" if c.tolerated else "") for c in preview.claims]
        evicted = preview.evicted_pods()
        effect = taint.get("effect")
        if not preview.claims_known:
            lines.extend(unknown_claims_lines(effect, removing))
        elif claims:
            lines.append(f"  claims: {_few(claims)}")
        if removing or not preview.claims_known:
            pass
        elif effect == "NoExecute":
            lines.append(f"  evicts: {_few(evicted) if evicted else 'no pods'}")
        elif evicted:
            lines.append(f"  with NoExecute would evict: {_few(evicted)}")
        status = taint_rules.eviction_status(preview.rule)
        if applied and not removing and status:
            lines.append(f"  controller: {status}")
        elif applied and not removing and effect == "None":
            lines.append("  controller: no preview in the rule's status yet (the device-taint-eviction controller "
                         "of kube-controller-manager writes it)")
        for line in lines:
            click.echo(safe_line(line))


CLAIMS_UNKNOWN = "? (claims not readable)"
"""A preview's claims and evictions when ResourceClaims could not be read (RulePreview.claims_known)."""


def unknown_claims_lines(effect: str | None, removing: bool) -> list[str]:
    """A preview's claims and evictions when ResourceClaims could not be read: unknown, never none
    (what `taint`, `untaint` and remediate's plan print)."""
    lines = [f"  claims: {CLAIMS_UNKNOWN}"]
    if not removing:
        lines.append(f"  {'evicts' if effect == 'NoExecute' else 'with NoExecute would evict'}: {CLAIMS_UNKNOWN}")
    return lines


def _few(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", … ({len(items) - limit} more)" if len(items) > limit else "")
