"""The top line: which cluster, which API, and whether what is on screen is current."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from kubectl_dra.terminal_text import safe_line
from tui.format import clock_time


def connection_text(connection, namespace: str | None, pools_pending: int | None = None,
                    cluster: str | None = None) -> Text:
    """Renders a kubectl_dra.store.ConnectionInfo as one line of styled text; `cluster`: the fleet
    member's name, when the dashboard shows one cluster of a fleet."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(" kubectl dra ", style="bold reverse")
    text.append("  ")
    if cluster is not None:
        text.append(f" {safe_line(cluster)} ", style="bold reverse cyan")
        text.append("  ")
    _field(text, "context", connection.context or "-")
    _field(text, "cluster", connection.server_version or "-")
    _field(text, "api", connection.resource_api_version or "-")
    _field(text, "ns", namespace or "all")
    text.append_text(connection_state(connection))
    if connection.last_event_at is not None:
        text.append("  last event ", style="dim")
        text.append(clock_time(connection.last_event_at))
    freshness = connection.freshness()
    if freshness.stale:
        text.append(f"  {freshness.reason}", style="yellow")
    if pools_pending is None and connection.mode != "loading":
        text.append("  analysing…", style="bold yellow")
    elif pools_pending:
        text.append(f"  analysing {pools_pending} more pools…", style="bold yellow")
    return text


def connection_state(connection) -> Text:
    """"live", "STALE 14s  reconnecting since ...", "from snapshot"."""
    mode = connection.mode
    freshness = connection.freshness()
    if freshness.stale:
        # The age counts up (the app redraws the header every second while stale): a frozen
        # screen is told from a quiet cluster at a glance.
        state = Text(f"● {freshness.label()}", style="bold white on red")
        if mode == "reconnecting":
            state.append(f"  reconnecting since {clock_time(connection.since)}", style="bold yellow")
        return state
    if mode == "loading":
        source = f" {connection.source}" if connection.source else ""
        state = Text(f"◌ reading{source}…", style="bold yellow")
    elif mode == "live":
        state = Text("● live", style="bold green")
    elif mode == "demo":
        state = Text("■ demo snapshot", style="bold cyan")
    else:
        source = f" {connection.source}" if connection.source else ""
        state = Text(f"■ from snapshot{source}", style="bold cyan")
    return state


def _field(text: Text, label: str, value: str) -> None:
    text.append(f"{label} ", style="dim")
    text.append(safe_line(value), style="bold")  # the context is a file's, the version the server's
    text.append("  ")


class ClusterHeader(Static):
    """Context, cluster version, served API version, connection state, last event time."""

    DEFAULT_CSS = """
    ClusterHeader {
        height: 1;
        background: $panel;
        color: $foreground;
    }
    """

    _shown: Text | None = None

    def show(self, connection, namespace: str | None, pools_pending: int | None = 0,
             cluster: str | None = None) -> None:
        """`pools_pending`: pools still being analysed (None: nothing analysed yet); `cluster`: the
        fleet member shown (None: no fleet).

        Called for every batch of watch events: the line is redrawn only when its text changed (at
        most once a second under churn, for the last event's time), and never lays the screen out
        again (one line, its width set by the top line, not by the text); Static.update's default
        relayout per batch kept the UI thread in layout and rendering at 50 slice updates/s."""
        text = connection_text(connection, namespace, pools_pending, cluster)
        if text != self._shown:
            self._shown = text
            self.update(text, layout=False)
        self.set_class(bool(connection.stale), "-stale")
