"""Textual's Footer without its leak under a long-running dashboard.

The Footer composes its keys again whenever the focused widget's bindings change (every tab
switch, every focus move), and each key binds the footer's `compact` reactive with `data_bind`:
Textual appends a watcher to the footer per key and drops the watchers of removed keys only when
`compact` changes, which it never does here. Each tab switch kept about fourteen removed keys
alive with their styles (bench/churn_bench.py, 6 tabs every 30 s: a steady rise in live objects
and RSS). After each recompose the watchers of keys no longer on screen are dropped.
"""

from __future__ import annotations

from textual.widgets import Footer


class DashboardFooter(Footer):
    async def recompose(self) -> None:
        await super().recompose()
        # Textual keeps a reactive's watchers in the attribute "__watchers" (textual/reactive.py
        # _watch): {name: [(node, callback)]}; the callbacks of detached nodes are never called.
        watchers = getattr(self, "__watchers", None)
        if isinstance(watchers, dict):
            for name, entries in watchers.items():
                entries[:] = [(node, callback) for node, callback in entries if node.is_attached]
