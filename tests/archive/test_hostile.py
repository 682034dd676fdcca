"""Hostile archives: truncations, bit flips, crafted manifests and entries, compression bombs and
tampered entries give an amber error, never a crash or a wrong value."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import amber
from amber import Archive
from tests.archive.build import CLI, crafted, manifest, write

# --- hostile archives ---------------------------------------------------------------------------


def small_archive(tmp_path: Path) -> bytes:
    path = tmp_path / "small.zip"
    write(path, {"c": {"a": [1, 2]}, "w": np.arange(4)})
    return path.read_bytes()


def read_all(data: bytes) -> None:
    with Archive(data) as a:
        for k in a:
            a[k]


def test_every_truncation_raises_an_amber_error(tmp_path: Path) -> None:
    data = small_archive(tmp_path)
    for n in range(len(data)):
        with pytest.raises(amber.AmberError):
            read_all(data[:n])


def test_bit_flips_raise_or_read_back(tmp_path: Path) -> None:
    data = small_archive(tmp_path)
    for i in range(0, len(data), 3):
        bad = bytearray(data)
        bad[i] ^= 0x10
        try:
            read_all(bytes(bad))
        except amber.AmberError as e:
            assert e.kind is not None


@pytest.mark.parametrize(
    ("entries", "kind"),
    [
        ([(".amber/manifest.json", b"{not json")], "malformed"),
        ([(".amber/manifest.json", manifest({}, {}, version=4))], "unsupported"),
        (
            [
                (
                    ".amber/manifest.json",
                    manifest({"k": {"encoding": "amber", "entries": ["k.amber"]}}, {}),
                )
            ],
            "malformed",
        ),
        (
            [
                ("k.amber", amber.dumps(1)),
                (
                    ".amber/manifest.json",
                    manifest(
                        {"k": {"encoding": "amber", "entries": ["k.amber"]}},
                        {"k.amber": {"size": 99, "method": "stored", "blake3": "00"}},
                    ),
                ),
            ],
            "size_mismatch",
        ),
        (
            [
                ("../k.amber", amber.dumps(1)),
                (".amber/manifest.json", manifest({}, {})),
            ],
            "unsafe_name",
        ),
        (
            [
                ("k.amber", amber.dumps(1)),
                (
                    ".amber/manifest.json",
                    manifest(
                        {"../k": {"encoding": "amber", "entries": ["k.amber"]}},
                        {
                            "k.amber": {
                                "size": len(amber.dumps(1)),
                                "method": "stored",
                                "blake3": "00",
                            }
                        },
                    ),
                ),
            ],
            "malformed",
        ),
    ],
    ids=[
        "not json",
        "newer version",
        "missing entry",
        "lying size",
        "escaping name",
        "escaping key",
    ],
)
def test_crafted_manifests_are_refused_by_kind(tmp_path: Path, entries: Any, kind: str) -> None:
    path = crafted(tmp_path, entries)
    with pytest.raises(amber.AmberError) as ei:
        Archive(path)
    assert ei.value.kind == kind, ei.value


def test_duplicate_names_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "dup.zip"
    with pytest.warns(UserWarning), zipfile.ZipFile(path, "w") as z:
        z.writestr("a.npy", b"1")
        z.writestr("a.npy", b"2")
    with pytest.raises(amber.AmberError) as ei:
        Archive(path)
    assert ei.value.kind == "duplicate" and ei.value.entry == "a.npy"


def test_compression_bombs_are_refused(tmp_path: Path) -> None:
    """A directory that declares more than any method can produce is refused; real data of a
    high ratio reads back by default, and a lower `max_ratio` refuses it too."""
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("zeros.npy", bytes(100_000_000))
    data = bytearray(path.read_bytes())
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = (4_000_000_000).to_bytes(4, "little")  # declared size
    with pytest.raises(amber.AmberError) as ei:
        Archive(bytes(data))
    assert ei.value.kind == "bomb" and ei.value.entry == "zeros.npy"
    with pytest.raises(amber.AmberError) as ei:
        Archive(path, max_ratio=100)
    assert ei.value.kind == "bomb"
    with Archive(path) as a:  # deflate's 1,029:1 on zeros is within the default
        assert a.format == "npz"


def test_archives_of_zeros_compressed_with_zstd_read_back(tmp_path: Path) -> None:
    zeros = np.zeros(100_000_000, dtype=np.uint8)  # zstd: about 31,000:1
    write(tmp_path / "z.zip", {"z": zeros, "k": 1}, compression="zstd")
    with Archive(tmp_path / "z.zip") as a:
        assert a["k"] == 1 and not a["z"].any() and a["z"].shape == zeros.shape


def test_a_tampered_entry_fails_its_hash_and_verify_says_so(tmp_path: Path) -> None:
    path = tmp_path / "t.zip"
    write(path, {"x": np.arange(1000)})
    data = bytearray(path.read_bytes())
    i = data.find(np.arange(1000).tobytes()[:16])
    data[i + 100] ^= 1
    path.write_bytes(bytes(data))
    with Archive(path) as a:
        assert any("x.npy" in p for p in a.verify())
        with pytest.raises(amber.AmberError) as ei:
            a["x"]
        assert ei.value.kind == "checksum"
    out = subprocess.run(
        [sys.executable, "-c", CLI, "verify", str(path)], capture_output=True, text=True
    )
    assert out.returncode == 1 and "x.npy" in out.stderr


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_any_manifest_json_is_refused_or_read(doc: Any) -> None:
    """Whatever JSON stands in the manifest, opening raises an ArchiveError or reads it."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        z.writestr("k.amber", amber.dumps(1))
        payload = doc if not isinstance(doc, dict) else {"amber_archive": 1, **doc}
        z.writestr(".amber/manifest.json", json.dumps(payload))
    try:
        with Archive(data.getvalue()) as a:
            for key in a:
                a[key]
    except amber.ArchiveError as e:
        assert e.kind is not None
