"""Cluster and file text made safe for a terminal: the one place both faces (CLI and dashboard) ask.

Any driver or node plugin that can write a ResourceSlice chooses the strings an admin sees. A
terminal obeys control characters (ESC starts an escape sequence that clears the screen or sets
the window title, BEL rings, CR rewrites the line, 8-bit C1 codes such as CSI act like ESC [) and
Unicode's bidi overrides and isolates reorder what follows them, so a value could forge other rows.
Such characters are shown as the escapes Python writes (`\\x1b`, `\\u202e`), so they are visible
and nothing reaches the terminal raw. Markup (Rich's `[red]`) is not this module's concern: the
dashboard never reads cluster text as markup (Text objects), the CLI prints no markup at all.
"""

from __future__ import annotations

import re

# Cc (C0, DEL, C1), Cf (bidi embeddings, overrides and isolates, zero-width characters, the BOM,
# soft hyphen, interlinear annotations, tag characters ...), Zl/Zp (line and paragraph separators
# that some terminals break lines on) and lone surrogates (Python keeps them from JSON's \ud800;
# they cannot even be encoded for output). tests/test_terminal_text.py checks this list against
# unicodedata's categories for every code point.
_LAYOUT = "\t\n"
_BMP_UNSAFE = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
    "\ud800-\udfff\ufeff\ufff9-\ufffb"
)
_ASTRAL_UNSAFE = (
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
UNSAFE = re.compile(f"[{_LAYOUT}{_BMP_UNSAFE}{_ASTRAL_UNSAFE}]")
"""One character a terminal could act on, or that hides or reorders text (the exact set)."""

# Python's re scans a class holding several astral ranges several times slower than one holding
# BMP ranges and a single astral block, so the scanning patterns take every astral character as a
# candidate and the callback keeps those outside _ASTRAL_UNSAFE as they are (a 15 MB JSON document:
# 0.13 s instead of 0.6 s).
_CANDIDATE_IN_LINES = re.compile(f"[{_BMP_UNSAFE}\U00010000-\U0010ffff]")
_CANDIDATE = re.compile(f"[{_LAYOUT}{_BMP_UNSAFE}\U00010000-\U0010ffff]")
_ASTRAL = re.compile(f"[{_ASTRAL_UNSAFE}]")


def _is_unsafe(character: str) -> bool:
    return ord(character) <= 0xFFFF or _ASTRAL.match(character) is not None


_SHORT_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def escape(character: str) -> str:
    """The visible form of one unsafe character, as Python writes it: `\\r`, `\\x1b`, `\\u202e`."""
    if character in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[character]
    code = ord(character)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _escape_match(match: re.Match) -> str:
    character = match.group()
    return escape(character) if _is_unsafe(character) else character


_LINE_BREAK = re.compile(r"[ \t]*\r?\n[ \t]*")


def joined_lines(text: str) -> str:
    """A statement written over several lines (a CEL expression in a message) for a one-line view:
    its lines joined by one space, as CEL reads them, instead of shown with `\\n` escapes. Only
    line breaks change; every other character is left for safe_line."""
    return _LINE_BREAK.sub(" ", text) if "\n" in text else text


def safe_text(text: str) -> str:
    """A multi-line text (a message, an explanation) with every unsafe character shown as its
    escape; tabs and newlines are kept, the caller lays out the lines."""
    if text.isprintable():  # Python's printable excludes every unsafe category: no scan needed
        return text
    return _CANDIDATE_IN_LINES.sub(_escape_match, text)


def safe_line(text: str) -> str:
    """One line (a table cell, a label, a title): every unsafe character shown as its escape,
    tabs and newlines included, so nothing can start another line or row."""
    if text.isprintable():
        return text
    return _CANDIDATE.sub(_escape_match, text)


def has_unsafe(text: str) -> bool:
    """Whether safe_text would change `text`."""
    if text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable():
        return False
    return any(_is_unsafe(match.group()) for match in _CANDIDATE_IN_LINES.finditer(text))


def json_escaped(json_text: str) -> str:
    """JSON written with ensure_ascii=False, with the unsafe characters it leaves raw (DEL, C1,
    bidi and other format characters, lone surrogates) as \\u escapes: the same JSON value.

    json.dumps escapes C0 itself; outside strings it writes only ASCII, so every match is inside a
    string, where a \\u escape is always valid."""
    if json_text.isascii() and "\x7f" not in json_text:
        return json_text
    return _CANDIDATE_IN_LINES.sub(_json_escape, json_text)


def _json_escape(match: re.Match) -> str:
    character = match.group()
    if not _is_unsafe(character):
        return character
    code = ord(character)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # astral characters (tag characters) as a UTF-16 surrogate pair, as JSON wants
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"

