"""The `kubectl dra` dashboard: a Textual app over kubectl_dra's Store (see tui.app)."""
