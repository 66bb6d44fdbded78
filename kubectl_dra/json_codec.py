"""The JSON codec: msgspec where it reads and writes exactly what the standard library's json
would, json itself where the two could differ (and, for reading, where msgspec is not installed).
Reading serves the sources (files, API lists), writing the CLI's -o json."""

from __future__ import annotations

import functools
import json
import mmap
from typing import Callable, TextIO

from kubectl_dra.terminal_text import json_escaped

NOT_DECODED = object()
"""decode_json_bytes' answer for input the fast decoder does not take."""


@functools.cache
def _fast_decoder():
    try:
        import msgspec
    except ImportError:  # an install without it still reads JSON, with the standard library
        return None

    # A `kind: List` document and nothing else, its items marked out in the same pass that skips
    # the rest (a million devices: one pass over 0.66 GB instead of two, ~0.5 s). An empty Raw is
    # an absent field (a JSON value is never empty).
    list_shape = msgspec.defstruct("ListShape", [
        ("apiVersion", msgspec.Raw, msgspec.Raw()), ("kind", msgspec.Raw, msgspec.Raw()),
        ("metadata", msgspec.Raw, msgspec.Raw()),
        ("items", msgspec.UnsetType | list[msgspec.Raw], msgspec.UNSET)], forbid_unknown_fields=True)
    return (msgspec.json.Decoder(), msgspec.json.Decoder(dict[str, msgspec.Raw]),
            msgspec.json.Decoder(list[msgspec.Raw]), msgspec.json.Decoder(list_shape),
            (msgspec.DecodeError, msgspec.ValidationError))


def prepare_decoders() -> None:
    """Make the decoders now: processes forked after this (a fleet's readers) share them instead of
    each importing msgspec and making its own."""
    _fast_decoder()


def decode_json_bytes(data: bytes | mmap.mmap, each: Callable[[dict], None] | None = None):
    """`data` (UTF-8 JSON) as Python objects, decoded by msgspec: about 30% faster than `json`
    on snapshot files and API lists and with no text copy of the input (bench/RESULTS.md). Its values equal json.loads' (big integers stay exact). NOT_DECODED for anything it
    refuses, where json.loads may differ or needs to word the error: a byte order mark, NaN or
    Infinity, lone surrogates, invalid JSON; callers then use json.loads as before."""
    fast = _fast_decoder()
    if fast is None:
        return NOT_DECODED
    decoder, fields_decoder, items_decoder, list_decoder, errors = fast
    try:
        if each is None:
            return decoder.decode(data)
        return _decoded_item_by_item(data, each, decoder, fields_decoder, items_decoder, list_decoder, errors)
    except errors:
        return NOT_DECODED


def _decoded_item_by_item(data, each, decoder, fields_decoder, items_decoder, list_decoder, errors):
    """A List decoded one item at a time, each item handed to `each` before the next is decoded:
    what `each` frees (values it replaced by shared ones) is reused by the next item's objects,
    so sharing lowers the peak instead of leaving holes in a heap as large as the whole file.
    msgspec.Raw marks out the items without decoding them."""
    try:
        shape = list_decoder.decode(data)
    except errors:  # another document, or a List with other fields: marked out field by field
        shape = None
    if shape is not None and shape.items.__class__ is list:
        fields = {key: value for key in ("apiVersion", "kind", "metadata") if (value := getattr(shape, key))}
        fields["items"] = shape.items
        del shape
    else:
        try:
            fields = fields_decoder.decode(data)
        except errors:  # not an object (an array, a scalar): decoded whole, and _flatten words the error
            return decoder.decode(data)
    document = {}
    for key, raw in fields.items():
        if key == "items":
            if raw.__class__ is list:
                items = raw
            else:
                try:
                    items = items_decoder.decode(raw)
                except errors:  # not a list: _flatten says so
                    document[key] = decoder.decode(raw)
                    continue
            decoded = document[key] = []
            for index in range(len(items)):
                obj = decoder.decode(items[index])
                items[index] = None  # the item's place in the file is no longer needed
                if type(obj) is dict:
                    each(obj)
                decoded.append(obj)
        else:
            document[key] = decoder.decode(raw)
    if "items" not in fields and isinstance(document.get("kind"), str):
        each(document)
    return document


def to_json(document) -> str:
    """JSON as kubectl writes it; the characters a terminal would act on are \\u escapes.

    Byte for byte what json.dumps(document, indent=2, ensure_ascii=False) writes, faster: with an
    indent Python's json encodes in pure Python (9 s and ~0.9 GB of pieces for `pools -o json` at a
    million devices), without one in C. So the compact encoding (msgspec's where it spells
    everything as Python does, _plain_json; else the C json.dumps) is re-indented by
    msgspec.json.format, which copies every token verbatim and lays out "key": value, [] and {} as
    json.dumps does. What msgspec cannot read (Infinity, NaN, a lone surrogate) takes json.dumps'
    own indenting path."""
    return _to_json(document, _plain_json(document))


def _to_json(document, plain: bytes | None) -> str:
    import msgspec

    if plain is not None:
        return json_escaped(msgspec.json.format(plain, indent=2).decode()) + "\n"
    compact = _compact_json(document)
    try:
        text = msgspec.json.format(compact, indent=2)
    except (msgspec.DecodeError, UnicodeEncodeError):
        text = json.dumps(document, indent=2, ensure_ascii=False)
    return json_escaped(text) + "\n"


def _compact_json(document) -> str:
    """json.dumps' compact spelling. Without its check for cycles: a document is a tree of what
    the model and the API gave (subtrees may be shared, never cycles), and the check kept an entry
    per dict and list (`pools -o json` at a million devices: 0.68 -> 0.56 s)."""
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"), check_circular=False)


_NOT_JSON_MARKERS = (b"\xca", b"\xcb", b"\xc4", b"\xc5", b"\xc6", b"\xc7", b"\xc8", b"\xc9",
                     b"\xd4", b"\xd5", b"\xd6", b"\xd7", b"\xd8")
"""The MessagePack type bytes of a float (float 32/64), bytes (bin 8/16/32) and a datetime or other
extension (ext 8/16/32, fixext 1-16): what msgspec would write where Python's json writes otherwise
or refuses."""


def _plain_json(document) -> bytes | None:
    """The compact JSON of `document`, as _compact_json spells it, from msgspec (8x faster), or
    None where the two could spell a value apart: a float (msgspec writes 1e16 where Python writes
    1e+16, NaN as null), a str subclass, a key neither a string nor an int, bytes, a datetime.
    msgspec's own MessagePack encoding finds them without a step per value in Python: each has a
    type byte of its own there (_NOT_JSON_MARKERS); the same byte inside a string or a number
    only sends the document to json.dumps. What json.dumps refuses (a set, a dataclass, a
    datetime without a zone, none of them in a document the model makes) comes out as msgspec
    writes it."""
    import msgspec

    try:
        packed = msgspec.msgpack.encode(document)
    except (TypeError, ValueError, OverflowError):  # a str subclass, a bool key, an int past 64 bits
        return None
    if any(marker in packed for marker in _NOT_JSON_MARKERS):
        return None
    del packed
    try:
        return msgspec.json.encode(document)
    except (TypeError, ValueError):  # a lone surrogate (UnicodeEncodeError)
        return None


def write_json(document, out: TextIO) -> None:
    """out.write(to_json(document)), without the text copies where it can: an all-ASCII document
    (nothing to escape, the same bytes in any encoding) goes to out's byte stream as msgspec lays
    it out (`pools -o json` at a million devices: ~120 MB written once instead of copied as text,
    decoded, joined and encoded again)."""
    import msgspec

    plain = _plain_json(document)
    buffer = getattr(out, "buffer", None)
    if plain is not None:
        if buffer is None or not plain.isascii() or b"\x7f" in plain:
            out.write(_to_json(document, plain))
            return
        data = msgspec.json.format(plain, indent=2)
    else:
        compact = _compact_json(document)
        if buffer is None or not compact.isascii() or "\x7f" in compact:
            out.write(_to_json(document, None))
            return
        try:
            data = msgspec.json.format(compact.encode(), indent=2)
        except msgspec.DecodeError:  # Infinity or NaN: json.dumps' own indenting path
            out.write(_to_json(document, None))
            return
        del compact
    del plain
    out.flush()
    buffer.write(data)
    buffer.write(b"\n")
