"""Shell-completion candidates for flag values and arguments.

Names come from where the command would read: --demo, --from FILE, else the cluster (only the one
kind needed, with a short time limit). Completion never prints errors: a failure means no candidates.
"""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem

from kubectl_dra.invocation import options_of

CLUSTER_TIME_LIMIT_S = 5.0


def _options(ctx: click.Context):
    return options_of(ctx)


def _objects(ctx: click.Context, kind: str) -> list[dict]:
    """Objects of `kind`; for namespaced kinds only those of the namespace the command would use."""
    options = _options(ctx)
    try:
        if options.demo or options.from_file:
            from kubectl_dra.sources.files import DEMO_PATH, FileSource
            from kubectl_dra.store import NAMESPACED_KINDS

            items = FileSource(DEMO_PATH if options.demo else options.from_file).open().items(kind)
            if kind in NAMESPACED_KINDS and not options.all_namespaces:
                namespace = options.namespace or "default"
                items = [o for o in items if o["metadata"].get("namespace") == namespace]
            return items
        import asyncio  # only here: importing asyncio costs more than the rest of a TAB

        return asyncio.run(asyncio.wait_for(_cluster_objects(options, kind), CLUSTER_TIME_LIMIT_S))
    except Exception:  # completion must never fail loudly
        return []


async def _cluster_objects(options, kind: str) -> list[dict]:
    from kubectl_dra.sources.apiserver import ApiServer
    from kubectl_dra.sources.cluster import ClusterOptions
    from kubectl_dra.sources.discovery import RESOURCE_KINDS, ServedKind, discover
    from kubectl_dra.sources.informer import Informer
    from kubectl_dra.store import Store

    connect = ClusterOptions(kubeconfig=options.kubeconfig, context=options.context,
                             request_timeout=options.request_timeout)
    async with await ApiServer.connect(connect) as server:
        resource = RESOURCE_KINDS[kind]
        if resource.group:
            served = (await discover(server)).served.get(kind)
            if served is None:
                return []
        else:
            served = ServedKind(resource, resource.versions[0])  # core kinds need no discovery
        store = Store()
        namespace = None
        if served.resource.namespaced and not options.all_namespaces:
            namespace = options.namespace or server.target.namespace
        await Informer(served, store, namespace=namespace).list(server)
        return store.items(kind)


def _matching(values, incomplete: str, help_text: dict | None = None) -> list[CompletionItem]:
    return [CompletionItem(v, help=(help_text or {}).get(v)) for v in sorted(set(values)) if v.startswith(incomplete)]


def contexts(ctx, param, incomplete):
    from kubectl_dra.kubeconfig import context_names

    return _matching(context_names(_options(ctx).kubeconfig), incomplete)


def namespaces(ctx, param, incomplete):
    return _matching((o["metadata"]["name"] for o in _objects(ctx, "Namespace")), incomplete)


def nodes(ctx, param, incomplete):
    return _matching((o["metadata"]["name"] for o in _objects(ctx, "Node")), incomplete)


def drivers(ctx, param, incomplete):
    return _matching(((o.get("spec") or {}).get("driver", "") for o in _objects(ctx, "ResourceSlice")), incomplete)


def pools(ctx, param, incomplete):
    return _matching((((o.get("spec") or {}).get("pool") or {}).get("name", "")
                      for o in _objects(ctx, "ResourceSlice")), incomplete)


def device_classes(ctx, param, incomplete):
    return _matching((o["metadata"]["name"] for o in _objects(ctx, "DeviceClass")), incomplete)


def explain_targets(ctx, param, incomplete):
    """`pod/` and `claim/` first, then names of that kind in the namespace."""
    from kubectl_dra.targets import PREFERRED_WORDS, TARGET_KINDS

    word, slash, _ = incomplete.partition("/")
    if not slash:
        return _matching((f"{w}/" for w in PREFERRED_WORDS), incomplete)
    kind = TARGET_KINDS.get(word.lower())
    if kind is None:
        return []
    return _matching((f"{word}/{o['metadata']['name']}" for o in _objects(ctx, kind)), incomplete)
