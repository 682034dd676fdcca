"""Archives read from real servers on loopback, through fsspec: an S3-compatible server (moto in
server mode) and an HTTP server that answers Range requests. Reading one key of a big archive
costs a few small requests, counted by the servers themselves."""

from __future__ import annotations

import contextlib
import http.server
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from amber import Archive, ArchiveError

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


# --- hostile servers: bounded memory, bounded waits ---------------------------------------------


class Hostile(http.server.BaseHTTPRequestHandler):
    """Answers HEAD honestly (the archive's size) and GET as `behaviour` says, counting the body
    bytes it manages to send."""

    protocol_version = "HTTP/1.1"
    behaviour: str
    size: int
    data: bytes
    sent: list[int]

    def log_message(self, *args: Any) -> None:
        pass

    def do_HEAD(self) -> None:
        if self.behaviour == "silent":
            time.sleep(30)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(self.size))
        # What an S3 client wants to see of an object (an HTTP client ignores them).
        self.send_header("ETag", '"0"')
        self.send_header("Last-Modified", "Fri, 27 Nov 2026 00:00:00 GMT")
        self.end_headers()

    def _chunks(self, chunk: bytes, count: int, last: bool = True) -> None:
        # `sent` keeps the most body bytes one answer got out (a client may retry a garbled
        # answer on a new connection, whose socket buffers take some again).
        answer = 0
        with contextlib.suppress(OSError):
            for _ in range(count):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                answer += len(chunk)
                self.sent[0] = max(self.sent[0], answer)
            if last:
                self.wfile.write(b"0\r\n\r\n")

    def do_GET(self) -> None:
        match = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
        assert match is not None
        start, end = int(match.group(1)), int(match.group(2))
        b = self.behaviour
        if b == "slow body":
            self.send_response(206)
            self.send_header("Content-Length", str(end - start + 1))
            self.end_headers()
            time.sleep(30)
            return
        if b in ("ignores range", "endless 200"):
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._chunks(b"\0" * 65536, 16384)  # up to 1 GiB
            return
        if b == "endless 206":
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{self.size}")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._chunks(self.data[start : end + 1], 1, last=False)
            self._chunks(b"\0" * 65536, 16384)
            return
        if b == "junk after":  # the range, then bytes that are no HTTP answer
            self.send_response(206)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._chunks(self.data[start : end + 1] + b"\0", 1)
            self._chunks(b"\0" * 65536, 16384)
            return
        body = self.data[start : end + 1]
        if b == "shifted":
            body = self.data[start + 1 : end + 2]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start + 1}-{end + 1}/{self.size}")
        elif b == "long length":
            body += b"\0" * 100
            self.send_response(206)
        elif b == "short":
            body = body[: len(body) // 2]
            self.send_response(206)
        else:
            self.send_response(206)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(body)


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Any]:
    pytest.importorskip("aiohttp")
    servers = []
    path = tmp_path / "a.zip"
    with Archive(path, "w") as a:
        a["config"] = {"lr": 0.1}
        a["w"] = np.arange(1000.0)
    data = path.read_bytes()

    def start(behaviour: str, protocol: str = "http") -> tuple[str, list[int]]:
        """The archive's URL on a server that behaves so, and the most body bytes one answer sent;
        for `protocol` "s3", the same server reached as an S3 endpoint (path-style,
        anonymous): `s3://bucket/a.zip`, its options in `options[url]`."""
        sent = [0]
        handler = type(
            "H", (Hostile,), {"behaviour": behaviour, "size": len(data), "data": data, "sent": sent}
        )
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        if protocol == "s3":
            pytest.importorskip("s3fs")
            url = f"s3://bucket{len(servers)}/a.zip"
            start.options[url] = {  # type: ignore[attr-defined]
                "anon": True,
                "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"},
                "config_kwargs": {"retries": {"max_attempts": 1}},
            }
            return url, sent
        return f"{endpoint}/a.zip", sent

    start.options = {}  # type: ignore[attr-defined]
    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("protocol", ["http", "s3"])
@pytest.mark.parametrize(
    "behaviour",
    [
        "ignores range",
        "endless 200",
        "endless 206",
        "junk after",
        "shifted",
        "long length",
        "short",
    ],
)
def test_a_server_that_sends_other_bytes_gets_an_archive_error(
    hostile: Any, behaviour: str, protocol: str
) -> None:
    url, sent = hostile(behaviour, protocol)
    with pytest.raises(ArchiveError) as e:
        Archive(url, storage_options=hostile.options.get(url))
    assert e.value.kind in ("remote", "truncated"), e.value
    assert url in str(e.value)
    # What the client took in of one answer is bounded by what it asked for (about 65 kB); the
    # server's count also holds what the kernel's socket buffers took before the connection
    # was closed.
    assert sent[0] < 16 << 20


@pytest.mark.parametrize("protocol", ["http", "s3"])
def test_an_honest_range_server_reads_back(hostile: Any, protocol: str) -> None:
    url, _ = hostile("honest", protocol)
    with Archive(url, storage_options=hostile.options.get(url)) as a:
        assert a["config"] == {"lr": 0.1}
        assert np.array_equal(a["w"], np.arange(1000.0))


@pytest.mark.parametrize("behaviour", ["silent", "slow body"])
def test_a_server_that_does_not_answer_times_out(hostile: Any, behaviour: str) -> None:
    url, _ = hostile(behaviour)
    began = time.monotonic()
    with pytest.raises(ArchiveError) as e:
        Archive(url, timeout=1.0)
    assert e.value.kind == "timeout" and url in str(e.value)
    assert time.monotonic() - began < 10


def test_storage_options_timeouts_win(hostile: Any) -> None:
    import aiohttp

    url, _ = hostile("silent")
    began = time.monotonic()
    options = {"client_kwargs": {"timeout": aiohttp.ClientTimeout(total=1.0)}}
    with pytest.raises(ArchiveError) as e:
        Archive(url, storage_options=options, timeout=60)
    assert e.value.kind == "timeout"
    assert time.monotonic() - began < 10
