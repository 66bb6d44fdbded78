"""The one place cluster text is made safe for a terminal (kubectl_dra.terminal_text)."""

from __future__ import annotations

import json
import sys
import unicodedata

import yaml
from hostile_text import CLEAR_SCREEN, MARKUP, MIXED, RETITLE, raw_controls

from kubectl_dra.json_codec import to_json
from kubectl_dra.render.base import to_yaml
from kubectl_dra.terminal_text import UNSAFE, escape, has_unsafe, json_escaped, safe_line, safe_text

UNSAFE_CATEGORIES = ("Cc", "Cf", "Zl", "Zp", "Cs")


def test_the_list_covers_every_control_format_and_separator_character():
    missed = [hex(code) for code in range(sys.maxunicode + 1)
              if unicodedata.category(chr(code)) in UNSAFE_CATEGORIES and not UNSAFE.match(chr(code))]
    assert missed == []


def test_the_list_holds_nothing_else_but_characters_newer_than_this_python_knows():
    extra = [hex(code) for code in range(sys.maxunicode + 1)
             if UNSAFE.match(chr(code)) and unicodedata.category(chr(code)) not in (*UNSAFE_CATEGORIES, "Cn")]
    assert extra == []


def test_the_fast_paths_change_exactly_the_unsafe_characters():
    changed_by_line = [hex(code) for code in range(sys.maxunicode + 1)
                       if (safe_line(chr(code)) != chr(code)) != bool(UNSAFE.match(chr(code)))]
    changed_by_text = [hex(code) for code in range(sys.maxunicode + 1)
                       if (safe_text(chr(code)) != chr(code)) != (bool(UNSAFE.match(chr(code))) and chr(code) not in "\t\n")]
    assert changed_by_line == [] and changed_by_text == []
    assert has_unsafe("emoji 👍 and tag \U000e0041") and not has_unsafe("emoji 👍\n\tok")


def test_escapes_are_the_ones_python_writes():
    assert [escape(ch) for ch in "\x1b\x07\x00\r\n\t\x7f\x9b\u202e\U000e0041"] == [
        "\\x1b", "\\x07", "\\x00", "\\r", "\\n", "\\t", "\\x7f", "\\x9b", "\\u202e", "\\U000e0041"]


def test_safe_text_keeps_layout_and_shows_everything_else():
    assert safe_text("line 1\n\tline 2") == "line 1\n\tline 2"
    assert safe_text(CLEAR_SCREEN) == "\\x1b[2J\\x1b[31mPWNED\\x1b[0m"
    assert safe_text(RETITLE + "\n") == "\\x1b]0;owned\\x07\n"
    assert raw_controls(safe_text(MIXED)) == []


def test_safe_line_shows_newlines_and_tabs_too():
    assert safe_line("a\nb\tc\rd") == "a\\nb\\tc\\rd"


def test_ordinary_and_markup_text_is_unchanged():
    for text in ("gpu-0", "ÄÖÜ × — ✓ 日本語 👍", MARKUP, "device.attributes['x'].model == \"A100\""):
        assert safe_text(text) == text and safe_line(text) == text and not has_unsafe(text)


def test_json_stays_the_same_value_without_raw_controls():
    document = {"model": CLEAR_SCREEN, "mixed": MIXED, "tag": "\U000e0041", "markup": MARKUP, "plain": "×"}
    text = to_json(document)
    assert raw_controls(text) == []
    assert json.loads(text) == document
    assert "×" in text  # ordinary Unicode stays readable
    assert json_escaped('"\x7f"') == '"\\u007f"'  # DEL is ASCII but json.dumps leaves it raw


def test_yaml_stays_the_same_value_without_raw_controls():
    document = {"model": CLEAR_SCREEN, "title": RETITLE, "mixed": MIXED, "markup": MARKUP}
    text = to_yaml(document)
    assert raw_controls(text) == []
    assert yaml.safe_load(text) == document


def test_yaml_without_unsafe_characters_keeps_unicode():
    assert to_yaml({"request": "gpu:1×gpu.example.com"}) == "request: gpu:1×gpu.example.com\n"
