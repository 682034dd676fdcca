"""Archives read from real servers on loopback, through fsspec: an S3-compatible server (moto in
server mode) and an HTTP server that answers Range requests. Reading one key of a big archive
costs a few small requests, counted by the servers themselves."""

from __future__ import annotations

import http.server
import os
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from amber import Archive

pytest.importorskip("fsspec")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with single-range `Range: bytes=a-b` support, counting GETs and bytes."""

    counts: dict[str, int]

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return
        size = os.path.getsize(path)
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        start, end = (0, size - 1)
        if match:
            start = int(match.group(1))
            end = min(int(match.group(2)) if match.group(2) else size - 1, size - 1)
        self.counts["gets"] += 1
        self.counts["bytes"] += end - start + 1
        self.send_response(206 if match else 200)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(end - start + 1))
        if match:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        with open(path, "rb") as f:
            f.seek(start)
            self.wfile.write(f.read(end - start + 1))

    def do_HEAD(self) -> None:
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(os.path.getsize(path)))
        self.end_headers()


@pytest.fixture
def http_root(tmp_path: Path) -> Iterator[tuple[str, Path, dict[str, int]]]:
    pytest.importorskip("aiohttp")
    counts = {"gets": 0, "bytes": 0}
    handler = type("Handler", (RangeHandler,), {"counts": counts})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), lambda *a: handler(*a, directory=str(tmp_path))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", tmp_path, counts
    finally:
        server.shutdown()
        server.server_close()


def big_archive(path: Path) -> np.ndarray:
    big = np.random.default_rng(1).random(4_000_000)  # 32 MB
    with Archive(path, "w") as a:
        a["big"] = big
        a["config"] = {"lr": 0.1, "name": "run"}
        a["nested"] = {"w": big[:100_000], "meta": [1, 2]}
    return big


def test_one_key_over_http_costs_a_few_small_requests(http_root: Any) -> None:
    url, root, counts = http_root
    big = big_archive(root / "big.zip")
    with Archive(f"{url}/big.zip") as a:
        opened = dict(counts)
        assert a["config"] == {"lr": 0.1, "name": "run"}
        assert counts["gets"] - opened["gets"] <= 2
        assert counts["bytes"] < 200_000
        assert np.array_equal(a["nested"]["w"], big[:100_000])
        assert np.array_equal(a["big"], big)
    assert opened["gets"] <= 4 and opened["bytes"] < 200_000


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, Any]]:
    moto_server = pytest.importorskip("moto.server")
    pytest.importorskip("s3fs")
    port = free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    options = {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": f"http://127.0.0.1:{port}", "region_name": "us-east-1"},
    }
    try:
        yield options
    finally:
        server.stop()


def test_archives_read_from_s3(s3: dict[str, Any], tmp_path: Path) -> None:
    import boto3
    import s3fs

    boto3.client(
        "s3",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        **s3["client_kwargs"],
    ).create_bucket(Bucket="amber-test")
    fs = s3fs.S3FileSystem(**s3)
    big = big_archive(tmp_path / "big.zip")
    fs.put(str(tmp_path / "big.zip"), "amber-test/big.zip")
    with Archive("s3://amber-test/big.zip", storage_options=s3) as a:
        requests = a._source.requests  # type: ignore[union-attr]
        assert a["config"]["lr"] == 0.1
        assert a._source.requests - requests <= 2  # type: ignore[union-attr]
        assert np.array_equal(a["big"], big)
        assert sorted(a) == ["big", "config", "nested"]


def test_memory_urls(tmp_path: Path) -> None:
    import fsspec

    big_archive(tmp_path / "m.zip")
    with fsspec.open("memory://amber/m.zip", "wb") as f:
        f.write((tmp_path / "m.zip").read_bytes())
    with Archive("memory://amber/m.zip") as a:
        assert a["config"]["name"] == "run"
