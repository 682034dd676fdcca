"""Protobuf wire pieces built by hand: varints, tags and length-delimited fields."""

from __future__ import annotations


def varint(n: int) -> bytes:
    """`n` (not negative) as a base-128 varint, low groups first, in its shortest form."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def pb_tag(num: int, wire_type: int) -> bytes:
    """A protobuf field's tag."""
    return varint(num << 3 | wire_type)


def pb_len(num: int, body: bytes) -> bytes:
    """A length-delimited protobuf field: tag, length, body."""
    return pb_tag(num, 2) + varint(len(body)) + body
