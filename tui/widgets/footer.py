"""Textual's Footer, composed again only when what it shows changes, and without its leak under a
long-running dashboard.

The Footer composes its keys again whenever the focused widget's bindings may have changed (every
tab switch, every focus move): a dozen widgets removed and mounted, their styles applied and the
screen laid out again, on the UI thread right after the frame that shows the new tab. Between the
dashboard's tables the keys are the same, so the recompose is skipped when the bindings it would
show are the ones on screen.

Each key binds the footer's `compact` reactive with `data_bind`: Textual appends a watcher to the
footer per key and drops the watchers of removed keys only when `compact` changes, which it never
does here. Each tab switch kept about fourteen removed keys alive with their styles
(bench/churn_bench.py, 6 tabs every 30 s: a steady rise in live objects and RSS). After each
recompose the watchers of keys no longer on screen are dropped.
"""

from __future__ import annotations

from textual.widgets import Footer


class DashboardFooter(Footer):
    _composed: tuple | None = None
    """What the keys on screen were composed from (see `_shown`)."""

    def _shown(self) -> tuple:
        """Everything Footer.compose reads."""
        keys = tuple((binding.key, binding.action, binding.description, binding.group, enabled, tooltip,
                      self.app.get_key_display(binding))
                     for _, binding, enabled, tooltip in self.screen.active_bindings.values() if binding.show)
        return (self._bindings_ready, self.compact, self.show_command_palette, keys)

    async def recompose(self) -> None:
        shown = self._shown()
        if shown == self._composed:
            return
        await super().recompose()
        self._composed = shown
        # Textual keeps a reactive's watchers in the attribute "__watchers" (textual/reactive.py
        # _watch): {name: [(node, callback)]}; the callbacks of detached nodes are never called.
        watchers = getattr(self, "__watchers", None)
        if isinstance(watchers, dict):
            for entries in watchers.values():
                entries[:] = [(node, callback) for node, callback in entries if node.is_attached]
