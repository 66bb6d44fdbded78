"""What every read command does: open the session, filter, render, say when nothing matched."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

import click

from kubectl_dra import heap
from kubectl_dra.errors import EXIT_SERVER_REFUSED
from kubectl_dra.options import options_of, refuse_unused_filters
from kubectl_dra.render.base import ListView, RenderContext
from kubectl_dra.session import Session
from kubectl_dra.store import Store

if TYPE_CHECKING:
    from kubectl_dra.model.cluster import ClusterModel
from kubectl_dra.terminal_text import safe_line


def now() -> datetime.datetime:
    """The current time (tests replace it to freeze AGE columns)."""
    return datetime.datetime.now(datetime.timezone.utc)


SESSION_KEY = "kubectl_dra.session"


def open_session(ctx: click.Context) -> Session:
    from kubectl_dra.commands.fleet_state import current_member
    from kubectl_dra.commands.watching import session_of

    member = current_member(ctx)
    if member is not None and member.session is not None:
        return member.session  # a fleet's member whose turn it is (commands.fleet_lists)
    session = session_of(ctx)  # a -w rebuild reuses the watched session
    if session is None:
        refuse_unused_filters(ctx)
        session = Session(options_of(ctx))
        with heap.long_lived():  # the store lives until the command ends
            session.load()
        ctx.find_root().meta[SESSION_KEY] = session
    return session


def cluster_model(store: Store) -> ClusterModel:
    """The command's model of its store, analysed once; like the store it lives until the command
    ends (heap.long_lived)."""
    from kubectl_dra.model.cluster import ClusterModel

    with heap.long_lived():
        return ClusterModel.from_store(store)


def require_readable(session: Session, *kinds: str, namespace: str | None = None) -> None:
    """kubectl's answer when the kind a command lists cannot be read: the API server's error line
    and exit 1 (`Error from server (Forbidden): resourceslices.resource.k8s.io is forbidden: ...`),
    never an empty list. A kind readable only in `namespace` (the others forbidden) is readable there."""
    from kubectl_dra.model.knowledge import unreadable_kinds

    for missing in unreadable_kinds(session.loaded_store.kind_status, kinds):
        if namespace is not None and missing.status.namespace == namespace:
            continue
        from kubectl_dra.commands.fleet_state import MemberRefused, current_member

        if current_member(click.get_current_context()) is not None:
            raise MemberRefused(unreadable_line(missing))
        click.echo(safe_line(unreadable_line(missing)), err=True)  # the API server's words
        click.get_current_context().exit(EXIT_SERVER_REFUSED)


def unreadable_line(missing) -> str:
    """The line kubectl prints for a list the API server refused (its message kept word for word)."""
    from kubectl_dra.sources.discovery import RESOURCE_KINDS

    status = missing.status
    if status.state == "forbidden":
        resource = RESOURCE_KINDS[missing.kind]
        group = f".{resource.group}" if resource.group else ""
        message = status.message or f"{resource.plural}{group} is forbidden"
        return f"Error from server (Forbidden): {' '.join(message.split())}"
    return f"error: {missing.kind}: {' '.join(status.message.split()) or status.state}"


def render_context(session: Session, unknown=()) -> RenderContext:
    """`unknown`: the unreadable kinds (model.knowledge.Unreadable) behind Unknown values shown."""
    store = session.loaded_store
    connection = store.connection
    return RenderContext(now=connection.reference_time(now()), show_namespace=session.config.all_namespaces,
                         warnings=list(session.warnings), kubernetes_version=f"1.{store.kubernetes_minor()}",
                         unknown=[missing.to_dict() for missing in unknown])


def show(view: ListView, output: str, no_headers: bool, nothing: str) -> None:
    """Select, sort and emit the view (commands.listing: -l, --field-selector, --sort-by, templates,
    -w); for tables with no rows say so on stderr, as kubectl does."""
    from kubectl_dra.commands.fleet_lists import collect
    from kubectl_dra.commands.listing import present

    if collect(click.get_current_context(), view, nothing):
        return
    present(click.get_current_context().find_root().meta[SESSION_KEY], view, output, no_headers, nothing)


def in_namespace(session: Session) -> str:
    namespace = session.namespace()
    return f" in {namespace} namespace" if namespace else ""


def features_with_gates(session: Session, feature_gates: str):
    """The rules of the cluster's minor (or --kubernetes-version), with --feature-gates overrides."""
    import allocator

    try:
        features = session.loaded_store.features()
        if feature_gates:
            features = allocator.Features.from_flags(features.minor, allocator.parse_gate_overrides(feature_gates))
    except allocator.FeatureError as error:
        raise click.UsageError(f"--feature-gates: {error}") from None
    return features
