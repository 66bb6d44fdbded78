"""Errors the allocator reports as data, never as tracebacks."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ObjectError:
    """A malformed API object: which object, which field, what is wrong."""

    kind: str
    namespace: str | None
    name: str | None
    field: str
    message: str

    @property
    def object_ref(self) -> str:
        name = self.name or "<unnamed>"
        if self.namespace:
            return f"{self.kind}/{self.namespace}/{name}"
        return f"{self.kind}/{name}"

    def __str__(self) -> str:
        return f"{self.object_ref}: {self.field}: {self.message}"

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "field": self.field,
            "message": self.message,
        }


class FieldError(Exception):
    """Raised while normalising one object; turned into an ObjectError by the loader."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
