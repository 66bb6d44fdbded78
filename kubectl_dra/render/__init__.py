"""One renderer per kind or command (see base.ListView); CONVENTIONS.md documents the output."""
