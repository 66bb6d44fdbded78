"""Screens pushed over the dashboard: explanation, YAML, help and pickers."""
