"""Semantic Version 2.0.0 as Kubernetes reads it (github.com/blang/semver/v4 Parse).

Strict parsing is what DRA uses for `version` attributes and CEL `semver(s)`; the
normalising parse is CEL `semver(s, true)` (accepts "v1.0", "1", leading zeros).
Equality and ordering follow semver precedence: build metadata is ignored.
"""

from __future__ import annotations

import functools

_UINT64_MAX = (1 << 64) - 1
_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")


class SemverError(ValueError):
    """Not a semantic version; str() is upstream's message."""


def _contains_only(text: str, allowed: frozenset[str]) -> bool:
    return all(c in allowed for c in text)


def _has_leading_zeroes(text: str) -> bool:
    return len(text) > 1 and text[0] == "0"


def _parse_uint(text: str) -> int:
    """strconv.ParseUint(text, 10, 64) for a string already known to hold only digits."""
    if not text:
        raise SemverError('strconv.ParseUint: parsing "": invalid syntax')
    value = int(text)
    if value > _UINT64_MAX:
        raise SemverError(f'strconv.ParseUint: parsing "{text}": value out of range')
    return value


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# A prerelease identifier: numeric identifiers sort before alphanumeric ones.
_Identifier = tuple[bool, int, str]


def _prerelease_identifier(text: str) -> _Identifier:
    if not text:
        raise SemverError("Prerelease is empty")
    if _contains_only(text, _NUMBERS):
        if _has_leading_zeroes(text):
            raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {_go_quote(text)}")
        return (False, _parse_uint(text), "")
    if _contains_only(text, _ALPHANUM):
        return (True, 0, text)
    raise SemverError(f"Invalid character(s) found in prerelease {_go_quote(text)}")


class Semver:
    """An immutable semantic version."""

    __slots__ = ("major", "minor", "patch", "prerelease", "build", "_key")

    def __init__(self, major: int, minor: int, patch: int, prerelease: tuple[str, ...] = (), build: tuple[str, ...] = ()):
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = tuple(prerelease)
        self.build = tuple(build)
        identifiers = tuple(_prerelease_identifier(p) for p in self.prerelease)
        # A release sorts after all of its prereleases; tuples compare element-wise and a
        # shorter prefix sorts first, which is exactly semver's rule for prerelease fields.
        self._key = (major, minor, patch, (1,) if not identifiers else (0, identifiers))

    def compare(self, other: Semver) -> int:
        """Version.Compare: -1, 0 or 1."""
        a, b = self._key, other._key
        return (a > b) - (a < b)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Semver):
            return self._key == other._key
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key)

    def __lt__(self, other: Semver) -> bool:
        return self._key < other._key

    def __le__(self, other: Semver) -> bool:
        return self._key <= other._key

    def __gt__(self, other: Semver) -> bool:
        return self._key > other._key

    def __ge__(self, other: Semver) -> bool:
        return self._key >= other._key

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"Semver({str(self)!r})"


def _parse_strict(text: str) -> Semver:
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    numbers = []
    for label, part in (("major", parts[0]), ("minor", parts[1])):
        if not _contains_only(part, _NUMBERS):
            raise SemverError(f"Invalid character(s) found in {label} number {_go_quote(part)}")
        if _has_leading_zeroes(part):
            raise SemverError(f"{label.capitalize()} number must not contain leading zeroes {_go_quote(part)}")
        numbers.append(_parse_uint(part))

    patch_text = parts[2]
    build: list[str] = []
    prerelease: list[str] = []
    if "+" in patch_text:
        patch_text, build_text = patch_text.split("+", 1)
        build = build_text.split(".")
    if "-" in patch_text:
        patch_text, prerelease_text = patch_text.split("-", 1)
        prerelease = prerelease_text.split(".")
    if not _contains_only(patch_text, _NUMBERS):
        raise SemverError(f"Invalid character(s) found in patch number {_go_quote(patch_text)}")
    if _has_leading_zeroes(patch_text):
        raise SemverError(f"Patch number must not contain leading zeroes {_go_quote(patch_text)}")
    patch = _parse_uint(patch_text)

    for identifier in prerelease:
        _prerelease_identifier(identifier)
    for identifier in build:
        if not identifier:
            raise SemverError("Build meta data is empty")
        if not _contains_only(identifier, _ALPHANUM):
            raise SemverError(f"Invalid character(s) found in build meta data {_go_quote(identifier)}")
    return Semver(numbers[0], numbers[1], patch, tuple(prerelease), tuple(build))


def _normalize(text: str) -> str:
    """normalizeAndParse from the Kubernetes CEL semver library, up to the strict parse."""
    if text.startswith("v"):
        text = text[1:]
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in _NUMBERS:
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


@functools.lru_cache(maxsize=4096)
def parse_semver(text: str, normalize: bool = False) -> Semver:
    """Parse a version; raises SemverError (a ValueError) with upstream's message."""
    return _parse_strict(_normalize(text) if normalize else text)


def is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize)
    except SemverError:
        return False
    return True
