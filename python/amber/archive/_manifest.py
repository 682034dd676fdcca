"""The manifest: the archive's table of contents, a small JSON entry a person can read.

    {"amber_archive": 1,
     "keys": {"config": {"type": "dict", "encoding": "amber", "entries": ["config.amber"]}, ...},
     "entries": {"config.amber": {"size": 812, "method": "zstd", "blake3": "9f2c..."}, ...}}

`keys` maps each key to what it holds and the zip entries that hold it (its main entry first,
then out-of-band buffers); `entries` gives each of those entries' content size, compression and
BLAKE3 hash, and the byte-shuffle width of compressed numbers (`"shuffle": 8`). Parsing checks
every field's type and that the entries exist in the zip with the sizes it says, so nothing
later trusts a field it has not checked.
"""

from __future__ import annotations

import json
from typing import Any

from amber._native import ArchiveError
from amber.archive._errors import archive_error

NAME = ".amber/manifest.json"
# Version 2 adds byte-shuffled entries, version 3 pandas frames described by their extras
# (`"described": true`); an archive is written at the oldest version that holds it, so one
# without either is version 1, which every reader of amber archives reads.
VERSION = 3
SHUFFLE_WIDTHS = (2, 4, 8, 16)  # the core's `archive::data::SHUFFLE_WIDTHS`
ENCODINGS = ("amber", "json", "npy", "arrow", "parquet")
METHODS = ("stored", "deflate", "zstd")
RESERVED = ".amber/"


def malformed(msg: str, entry: str | None = NAME) -> ArchiveError:
    return archive_error("malformed", f"{msg} (entry {entry!r})" if entry else msg, entry=entry)


def dump(keys: dict[str, dict[str, Any]], entries: dict[str, dict[str, Any]]) -> bytes:
    """The manifest, at the oldest version that holds what it lists: 3 when a key holds a
    pandas frame its extras describe, 2 when an entry is shuffled, else 1."""
    if any(k.get("described") for k in keys.values()):
        version = 3
    elif any("shuffle" in e for e in entries.values()):
        version = 2
    else:
        version = 1
    doc = {"amber_archive": version, "keys": keys, "entries": entries}
    return json.dumps(doc, indent=1, ensure_ascii=False).encode("utf-8") + b"\n"


def load(data: Any, sizes: dict[str, int]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(keys, entries) from the manifest's bytes, checked against the zip's entry sizes."""
    try:
        doc = json.loads(bytes(data).decode("utf-8"), object_pairs_hook=_unique)
    except (UnicodeDecodeError, ValueError) as e:  # JSONDecodeError, an int of 4,300+ digits
        raise malformed(f"the manifest is not JSON amber reads: {e}") from None
    except RecursionError:
        raise malformed("the manifest nests JSON values too deeply") from None
    if not isinstance(doc, dict):
        raise malformed("the manifest is not a JSON object")
    version = doc.get("amber_archive")
    if type(version) is not int:
        raise malformed("the manifest has no amber_archive version")
    if version < 1:
        raise malformed(f"archive format version {version} does not exist (versions start at 1)")
    if version > VERSION:
        raise archive_error(
            "unsupported",
            f"archive format version {version}: this amber reads version {VERSION}; upgrade it",
            entry=NAME,
        )
    keys, entries = doc.get("keys"), doc.get("entries")
    if not isinstance(keys, dict) or not isinstance(entries, dict):
        raise malformed("the manifest needs 'keys' and 'entries' objects")
    for name, info in entries.items():
        _check_entry(name, info, sizes)
    owner: dict[str, str] = {}
    for key, info in keys.items():
        try:
            check_key(key)
        except ValueError as e:
            raise malformed(str(e)) from None
        if not isinstance(info, dict) or info.get("encoding") not in ENCODINGS:
            raise malformed(f"key {key!r} has no known encoding")
        names = info.get("entries")
        if not isinstance(names, list) or not names:
            raise malformed(f"key {key!r} lists no entries")
        for name in names:
            if not isinstance(name, str) or name not in entries:
                raise malformed(f"key {key!r} lists entry {name!r}, which the manifest lacks")
            if owner.setdefault(name, key) != key:
                raise malformed(f"entry {name!r} belongs to keys {owner[name]!r} and {key!r}")
    return keys, entries


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose names are all different: a name given twice would otherwise take its
    last value silently."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise ValueError(f"the name {name[:200]!r} appears twice in one JSON object")
            seen.add(name)
    return out


def _check_entry(name: str, info: Any, sizes: dict[str, int]) -> None:
    if not isinstance(info, dict):
        raise malformed(f"entry {name!r} is described by {type(info).__name__}")
    size, method, digest = info.get("size"), info.get("method"), info.get("blake3")
    if type(size) is not int or method not in METHODS or not isinstance(digest, str):
        raise malformed(f"entry {name!r} needs a size, a method and a blake3 hash")
    shuffle = info.get("shuffle", 0)
    if "shuffle" in info and (shuffle not in SHUFFLE_WIDTHS or method == "stored"):
        raise malformed(f"entry {name!r} has shuffle {shuffle!r}: 2, 4, 8 or 16, when compressed")
    if name not in sizes:
        raise malformed(f"the manifest lists entry {name!r}, which the zip lacks")
    if sizes[name] != size:
        raise archive_error(
            "size_mismatch",
            f"entry {name!r} holds {sizes[name]} bytes, the manifest says {size}",
            entry=name,
        )


# The longest key, in bytes of UTF-8: its entry names (the key, a suffix such as `.parquet`, and
# `.N` for the out-of-band buffers of an amber entry) must fit the zip's 65,535-byte names.
MAX_KEY_BYTES = 65_000


def check_key(key: object) -> str:
    """A key is a str path of non-empty segments: no `..`, no leading `/`, no backslash or NUL,
    not a drive (a letter and a colon, as `c:x`, which zip tools take for a Windows path), at
    most `MAX_KEY_BYTES` bytes of UTF-8, and nothing under `.amber/`, which the archive keeps
    for itself. Every key that passes makes entry names the zip layer writes."""
    if not isinstance(key, str):
        raise TypeError(f"archive keys are str, not {type(key).__name__}")
    parts = key.split("/")
    if (
        not key
        or any(p in ("", ".", "..") for p in parts)
        or "\\" in key
        or "\x00" in key
        or key.startswith(RESERVED)
        or (len(key) >= 2 and key[1] == ":" and key[0].isascii() and key[0].isalpha())
    ):
        raise ValueError(
            f"invalid archive key {key[:200]!r}: use non-empty '/'-separated names without '.', "
            f"'..', backslashes, a drive ('c:') or a leading '{RESERVED}'"
        )
    try:
        size = len(key.encode("utf-8"))
    except UnicodeEncodeError as e:
        raise ValueError(
            f"invalid archive key {key[:200]!r}: not valid Unicode ({e.reason})"
        ) from None
    if size > MAX_KEY_BYTES:
        raise ValueError(
            f"archive key of {size} bytes: keys are at most {MAX_KEY_BYTES} bytes of UTF-8"
        )
    return key
