"""Reusable widgets of the dashboard."""
