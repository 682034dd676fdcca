"""Write the hand-made seed inputs under seeds/<target>/.

Run from crates/fuzz: `python3 seeds/make_seeds.py`. Each decode seed is a
whole frame; the decode_body seeds are the same bodies without the header.
Byte values follow crates/amber-core/src/format.rs.
"""

import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent


def varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def fixstr(s: bytes) -> bytes:
    assert len(s) <= 31
    return bytes([0x40 + len(s)]) + s


def frame(body: bytes) -> bytes:
    return bytes([0xAB, 1, 0, 0]) + struct.pack("<I", len(body)) + body


def long_frame(body: bytes) -> bytes:
    return bytes([0xAB, 1, 1, 0, 0, 0, 0, 0]) + struct.pack("<Q", len(body)) + body


BODIES = {
    # None.
    "none": b"\xa8",
    # {"ints": [0, -1, 300, -70000, 2**40, i64::MIN], "text": ("héllo", ref 0,
    #  nan, b"raw"), ref 1: {None, 2**64}, "date": date(2024, 2, 29)}: the
    # hostile.rs sample.
    "scalars": (
        b"\x74"
        + b"\xb3\x04ints"
        + b"\x66\x00\xff\xac\x2c\x01\xad"
        + struct.pack("<i", -70000)
        + b"\xae"
        + struct.pack("<q", 1 << 40)
        + b"\xae"
        + struct.pack("<q", -(1 << 63))
        + b"\xb3\x04text"
        + b"\xa4"
        + fixstr("héllo".encode())
        + b"\x80"
        + b"\xb0"
        + struct.pack("<d", float("nan"))
        + b"\xb6\x03raw"
        + b"\x81"
        + b"\xbb\x02\xa8\xaf\x09"
        + b"\x00" * 8
        + b"\x01"
        + fixstr(b"date")
        + b"\xbd"
        + struct.pack("<H", 2024)
        + b"\x02\x1d"
    ),
    # A list that holds itself (SHARE [MEMO_REF 0]), then REPLACE 1 (padded
    # to REPLACE_ALIGN) around a tuple whose shared inner tuple is entry 1,
    # then a shared OBJECT_FILL whose state refers to the object itself.
    "shared": (
        b"\x63"
        + b"\xcf\x61\xd0\x00"
        + b"\xd1\x01\x06"
        + b"\x00" * 6
        + b"\xa1\xcf\xa0"
        + b"\xcf\xd4"
        + fixstr(b"mod.Node")
        + b"\x71"
        + fixstr(b"me")
        + b"\xd0\x02"
    ),
    # datetime(2024, 1, 2, 3, 4, 5, 6, fold=1, tz=UTC), time with a fixed
    # offset zone named "X", timedelta, a zone key, Decimal, UUID, complex.
    "datetime": (
        b"\x67"
        + b"\xbf\x03"
        + struct.pack("<H", 2024)
        + b"\x01\x02\x03\x04\x05"
        + struct.pack("<I", 6)
        + b"\xc1"
        + b"\xbe\x02\x0c\x00\x00"
        + struct.pack("<I", 0)
        + b"\xc2"
        + struct.pack("<q", 3_600_000_000)
        + fixstr(b"X")
        + b"\xc0"
        + struct.pack("<iii", -1, 3600, 5)
        + b"\xc3"
        + fixstr(b"Europe/Paris")
        + b"\xc4\x04"
        + b"1.50"
        + b"\xc5"
        + bytes(range(16))
        + b"\x00"
        + b"\xb1"
        + struct.pack("<dd", 1.5, -2.0)
    ),
    # OrderedDict, Counter, defaultdict(list), deque(maxlen=3), Fraction,
    # frozenset, bytearray, enum and object of a registered class.
    "collections": (
        b"\x69"
        + b"\xc7\x01"
        + fixstr(b"a")
        + b"\x01"
        + b"\xc9\x01"
        + fixstr(b"b")
        + b"\x02"
        + b"\xca\x01\x01"
        + fixstr(b"c")
        + b"\x60"
        + b"\xc8\x03\x02\x01\x02"
        + b"\xc6\x01\x03"
        + b"\xbc\x02\x01\x02"
        + b"\xb7\x02\x00\xff"
        + b"\xcb"
        + fixstr(b"mod.Color")
        + b"\x01"
        + b"\xcc"
        + fixstr(b"mod.Point")
        + b"\x72"
        + fixstr(b"x")
        + b"\x01"
        + fixstr(b"y")
        + b"\x02"
    ),
    # numpy: an in-band float64 array of shape (2,), an out-of-band one, a
    # scalar, and out-of-band bytes. The in-band data is padded to 8 bytes.
    "numpy": None,  # built below: the padding depends on the offset
    # Dict shapes: [{"a": 1, "b": 2}, SHAPE_DEF (keys refs 0, 1) {3, {"a":
    # SHAPED 0 inside its own shape's value}}, SHAPED 0 {5, 6}], shared in
    # identity mode with a SHARE before the last one.
    "shapes": (
        b"\x63"
        + b"\x72\xb3\x01a\x01\xb3\x01b\x02"
        + b"\xd5\x02\x80\x81\x03\xd6\x00\x04\x60"
        + b"\xcf\xd6\x00\x05\x06"
    ),
    # Deep nesting: 100 one-item lists around None.
    "deep": b"\x61" * 100 + b"\xa8",
    # Long forms: a 20-item list, a 40-byte str, a 16-pair dict, an
    # 8-item tuple, STR_REF past the fixed range.
    "long_forms": None,
}


def numpy_body() -> bytes:
    head = b"\x64" + b"\xcd" + fixstr(b"<f8") + b"\x01\x02\x00" + varint(16)
    # After the pad byte, data must start 8-aligned from the frame start
    # (header is 8 bytes).
    after_pad = 8 + len(head) + 1
    pad = (8 - after_pad % 8) % 8
    arr = head + bytes([pad]) + b"\x00" * pad + struct.pack("<dd", 1.0, 2.0)
    oob = b"\xcd" + fixstr(b"<i4") + b"\x02\x02\x03\x03\x00"
    scalar = b"\xce" + fixstr(b"<i8") + b"\x08" + struct.pack("<q", 7)
    return arr + oob + scalar + b"\xd2\x00"


def long_forms_body() -> bytes:
    out = b"\x65"
    out += b"\xb8" + varint(20) + bytes(range(20))
    out += b"\xb2" + varint(40) + b"x" * 40
    out += b"\xba" + varint(16) + b"".join(fixstr(bytes([65 + i])) + b"\xa8" for i in range(16))
    out += b"\xb9" + varint(8) + b"\xa8" * 8
    defs = b"".join(b"\xb3\x01" + bytes([33 + i]) for i in range(33))
    out += b"\x62" + b"\xb8" + varint(33) + defs + b"\xb4" + varint(32)
    return out


BODIES["numpy"] = numpy_body()
BODIES["long_forms"] = long_forms_body()

VARINTS = {
    "zero": varint(0),
    "one_byte_max": varint(127),
    "two_bytes": varint(128),
    "u32_max": varint(2**32 - 1),
    "u64_max": varint(2**64 - 1),
    "padded": b"\x80\x00",
    "overflow": b"\xff" * 9 + b"\x02",
}


def zip_of(entries: dict[str, bytes], compression: int, zip64: bool = False) -> bytes:
    """A zip made by Python's zipfile, as archives from other tools are."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compression) as z:
        for name, data in entries.items():
            with z.open(name, "w", force_zip64=zip64) as f:
                f.write(data)
    return out.getvalue()


NPY_HEADER = (
    b"\x93NUMPY\x01\x00v\x00{'descr': [('a', '<i4'), ('b', '<f8', (2,))], 'fortran_order': "
    b"False, 'shape': (3,), }" + b" " * 36 + b"\n"
)


def write(target: str, name: str, data: bytes) -> None:
    d = HERE / target
    d.mkdir(parents=True, exist_ok=True)
    assert len(data) < 1024, (target, name, len(data))
    (d / name).write_bytes(data)


def copy_stream(rows: list[list[bytes | None]], ext: bytes = b"") -> bytes:
    """A COPY BINARY stream (PostgreSQL's COPY docs, "Binary Format")."""
    out = b"PGCOPY\n\xff\r\n\0" + struct.pack(">iI", 0, len(ext)) + ext
    for row in rows:
        out += struct.pack(">h", len(row))
        for f in row:
            out += struct.pack(">i", -1) if f is None else struct.pack(">i", len(f)) + f
    return out + struct.pack(">h", -1)


def copy_seeds() -> None:
    """copy_parse seeds: the first byte picks where the stream is split."""
    int4 = struct.pack(">i", 7)
    # numeric 1.10: ndigits 2, weight 0, sign +, dscale 2, digits 1, 1000.
    numeric = struct.pack(">hhHHhh", 2, 0, 0, 2, 1, 1000)
    # int4[] {1,NULL,3}: ndim 1, has-null 1, OID 23, length 3, lower bound 1.
    array = struct.pack(">iiIii", 1, 1, 23, 3, 1)
    array += struct.pack(">ii", 4, 1) + struct.pack(">i", -1) + struct.pack(">ii", 4, 3)
    rows = [[int4, b"text", None], [None, "h\u00e9".encode(), b""]]
    write("copy_parse", "ints_text", bytes([128]) + copy_stream(rows))
    write("copy_parse", "numeric_array", bytes([40]) + copy_stream([[numeric, array]] * 2))
    write("copy_parse", "header_ext", bytes([10]) + copy_stream([[b"\x01"]], ext=b"ext!"))


def main() -> None:
    for name, body in BODIES.items():
        assert body is not None
        write("decode", name, frame(body))
        write("decode_body", name, body)
    write("decode", "long_header", long_frame(BODIES["collections"]))
    for name, data in VARINTS.items():
        write("varint", name, data)
    # roundtrip reads its input through `arbitrary`: any bytes make a tree.
    write("roundtrip", "small", bytes(range(64)))
    write("roundtrip", "nested", bytes([0x0C, 0x05] * 40))
    write("roundtrip", "mixed", bytes((i * 37 + 11) % 256 for i in range(256)))
    import zipfile

    entries = {".amber/manifest.json": b'{"amber_archive": 1}', "k.npy": NPY_HEADER + bytes(8)}
    write("archive", "stored", zip_of(entries, zipfile.ZIP_STORED))
    write("archive", "deflated_zip64", zip_of(entries, zipfile.ZIP_DEFLATED, zip64=True))
    write("archive", "npy", NPY_HEADER)
    copy_seeds()


if __name__ == "__main__":
    main()
