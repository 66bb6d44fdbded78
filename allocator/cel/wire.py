"""The protobuf wire format, read and written by hand: the checked and parsed expressions
cel-expr-python serialises are read (and rewritten) without generated message classes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

WireValue = Any
"""A field's value: an int for a varint, bytes otherwise. Which one is fixed by the message's schema
for each field number, which the reader knows and the wire does not say."""


def message_fields(data: bytes) -> list[tuple[int, WireValue]]:
    """(field number, value) pairs of one protobuf message: ints for varints, bytes otherwise."""
    out: list[tuple[int, WireValue]] = []
    i, n = 0, len(data)
    while i < n:
        key, i = varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(data, i)
            out.append((number, value))
        elif wire == 2:
            length, i = varint(data, i)
            out.append((number, data[i:i + length]))
            i += length
        elif wire == 1:
            out.append((number, data[i:i + 8]))
            i += 8
        elif wire == 5:
            out.append((number, data[i:i + 4]))
            i += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
    return out


def first_field(fields: list[tuple[int, WireValue]], number: int, default: WireValue = None) -> WireValue:
    return next((v for f, v in fields if f == number), default)


def varint(data: bytes | bytearray, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, i
        shift += 7


def length_delimited_fields(data: bytes | bytearray, start: int, end: int) -> Iterable[tuple[int, int, int]]:
    """(field number, start, end) of the length-delimited fields of the message at data[start:end]."""
    i = start
    while i < end:
        key, i = varint(data, i)
        wire = key & 7
        if wire == 0:
            _value, i = varint(data, i)
        elif wire == 2:
            length, i = varint(data, i)
            yield key >> 3, i, i + length
            i += length
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def enc_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def enc_field(number: int, payload: bytes) -> bytes:
    return enc_varint(number << 3 | 2) + enc_varint(len(payload)) + payload


def raw_fields(data: bytes | bytearray, start: int, end: int) -> Iterable[tuple[int, int, int, int, int]]:
    """(field number, wire type, field start, payload start, end) of each field of a message."""
    i = start
    while i < end:
        field_start = i
        key, i = varint(data, i)
        wire = key & 7
        if wire == 0:
            payload, (_value, i) = i, varint(data, i)
        elif wire == 2:
            length, payload = varint(data, i)
            i = payload + length
        elif wire in (1, 5):
            payload, i = i, i + (8 if wire == 1 else 4)
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield key >> 3, wire, field_start, payload, i
