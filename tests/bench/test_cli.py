"""`amber ls`, `amber show` and `amber verify` as a user meets them: the installed `amber` entry
point in a subprocess (and `amber.cli.main` in this process where that is enough), on real
archives, .npz and DataZip files, files that are not archives, failing servers on loopback, and
keys and entry names made to attack the terminal."""

from __future__ import annotations

import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import amber
from amber import Archive, _native
from amber.cli import _human, main

AMBER = str(Path(sys.executable).parent / "amber")
DATAZIP = Path(__file__).parents[1] / "data" / "datazip"
HOSTILE_KEYS = [
    "\x1b]0;owned\x07\x1b[2J",  # retitle the terminal, clear the screen
    "ok\nfake\tnumpy.ndarray\tnpy",  # a forged line
    "\u202eevil.txt",  # right-to-left override
    "c1\x9b31mred",  # C1 CSI
    "del\x7f",
    "tab\there",
    "nbsp\xa0x",
    "zero\u200bwidth",
    "line\u2028sep",
    "cr\rbs\x08",  # carriage return, backspace
]


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([AMBER, *args], capture_output=True, timeout=timeout)


def assert_clean(out: bytes) -> None:
    """No byte or character a terminal acts on, other than the newlines ending lines."""
    text = out.decode("utf-8")  # strict: no lone surrogates either
    bad = [c for c in text if c != "\n" and not c.isprintable()]
    assert not bad, bad


def assert_one_line_error(result: subprocess.CompletedProcess[bytes], command: str) -> str:
    err = result.stderr.decode()
    assert result.returncode == 1, (result.returncode, err)
    assert "Traceback" not in err and err.count("\n") == 1 and result.stdout == b"", err
    assert err.startswith(f"amber {command}: "), err
    assert_clean(result.stderr)
    return err


# --- amber ls -------------------------------------------------------------------------------


def test_ls_has_a_header_sizes_in_the_file_and_uncompressed_and_a_total(archive: Path) -> None:
    result = run("ls", "--header", "--bytes", str(archive))
    assert result.returncode == 0 and result.stderr == b""
    lines = result.stdout.decode().splitlines()
    assert lines[0].split() == ["STORED", "SIZE", "SAVED", "METHOD", "ENCODING", "TYPE", "KEY"]
    assert re.fullmatch(r"-+ +-+ +-+ +-+", lines[-2])
    rows = {line.split()[-1]: line.split() for line in lines[1:-2]}
    with Archive(archive) as a:
        assert list(rows) == list(a)
        size = stored = 0
        for key, (s_stored, s_size, saved, method, encoding, type_, _) in rows.items():
            info = a.info(key)
            entries = info["entries"].values()
            want_size = sum(e["size"] for e in entries)
            want_stored = sum(e["compressed_size"] for e in entries)
            assert (int(s_stored), int(s_size)) == (want_stored, want_size)
            assert saved == f"{(want_size - want_stored) * 100 // want_size}%"
            assert (method, encoding, type_) == (
                next(iter(entries))["method"],
                info["encoding"],
                info["type"],
            )
            size += want_size
            stored += want_stored
    assert rows["zeros"][3] == "zstd" and int(rows["zeros"][0]) < 10_000 < int(rows["zeros"][1])
    assert rows["zeros"][2] == "99%"
    saved = f"{(size - stored) * 100 // size}%"
    assert lines[-1].split() == [str(stored), str(size), saved, str(len(rows)), "keys"]


def test_ls_prints_one_line_per_key_for_scripts_and_a_table_for_people(archive: Path) -> None:
    """Piped (not a terminal), `amber ls` prints only its key lines, so `wc -l`, `cut` and
    loops see keys; `--header` adds the header and total, `--no-header` drops them anywhere."""
    piped = run("ls", "--bytes", str(archive)).stdout.decode().splitlines()
    table = run("ls", "--header", "--bytes", str(archive)).stdout.decode().splitlines()
    with Archive(archive) as a:
        assert [line.split()[-1] for line in piped] == list(a)
    assert [line.split() for line in piped] == [line.split() for line in table[1:-2]]
    assert run("ls", "--no-header", "--bytes", str(archive)).stdout.decode().splitlines() == piped
    # On a terminal (a pseudo-terminal here) the header comes by itself.
    import pty

    try:
        pid, fd = pty.fork()
    except OSError as e:  # a root without /dev/pts (the CPython 3.14/3.15 test root)
        pytest.skip(f"no pseudo-terminal here: {e}")
    if pid == 0:  # pragma: no cover - the child
        os.execv(AMBER, [AMBER, "ls", "--bytes", str(archive)])
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    lines = out.decode().splitlines()
    assert lines[0].split()[0] == "STORED" and lines[-1].split()[-1] == "keys"


def test_ls_sizes_are_human_by_default(archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ls", "--header", str(archive)]) == 0
    out = capsys.readouterr().out
    zeros = next(line for line in out.splitlines() if line.endswith(" zeros"))
    assert "7.6 MiB" in zeros and "99%" in zeros
    weights = next(line for line in out.splitlines() if line.endswith(" weights"))
    assert weights.split()[:4] == ["39", "KiB", "39", "KiB"]
    # columns line up: every line's KEY starts at the header's KEY column
    lines = out.splitlines()
    column = lines[0].index("KEY")
    assert all(line[column - 2 : column] == "  " for line in lines[1:-2])


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        (10 * 1024, "10 KiB"),
        (1024**2 - 1, "1.0 MiB"),
        (8_000_128, "7.6 MiB"),
        (5 * 1024**3, "5.0 GiB"),
        (3 * 1024**4, "3.0 TiB"),
        (2000 * 1024**5, "2000 PiB"),
    ],
)
def test_human_sizes(n: int, text: str) -> None:
    assert _human(n) == text


def test_ls_json_is_what_info_says(archive: Path) -> None:
    result = run("ls", "--json", str(archive))
    assert result.returncode == 0 and result.stderr == b""
    rows = json.loads(result.stdout)
    with Archive(archive) as a:
        assert [r["key"] for r in rows] == list(a)
        for row in rows:
            info = a.info(row.pop("key"))
            entries = info["entries"].values()
            assert row.pop("size") == sum(e["size"] for e in entries)
            assert row.pop("compressed_size") == sum(e["compressed_size"] for e in entries)
            assert row == info


def test_ls_lists_npz_and_datazip_files(tmp_path: Path) -> None:
    np.savez_compressed(tmp_path / "x.npz", a=np.zeros(10_000), b=np.arange(3))
    result = run("ls", "--header", "--bytes", str(tmp_path / "x.npz"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    a = lines[1].split()
    assert a[-1] == "a" and a[3:6] == ["deflate", "npy", "numpy.ndarray"]
    assert int(a[0]) < int(a[1]) == 80_128
    assert lines[-1].split()[-2:] == ["2", "keys"]
    result = run("ls", "--header", str(DATAZIP / "plain.zip"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    with Archive(DATAZIP / "plain.zip") as dz:
        assert [line.split()[-1] for line in lines[1:-2]] == list(dz)
    # every key's data is in the one attributes file: no size is any one key's
    assert all(line.split()[:3] == ["-", "-", "-"] for line in lines[1:-2])


def test_ls_of_an_empty_archive(tmp_path: Path) -> None:
    with Archive(tmp_path / "e.zip", "w"):
        pass
    result = run("ls", "--header", str(tmp_path / "e.zip"))
    assert result.returncode == 0
    assert result.stdout.decode().splitlines()[-1].split() == [
        "0",
        "B",
        "0",
        "B",
        "0%",
        "0",
        "keys",
    ]


# --- hostile keys, entry names and types ----------------------------------------------------


def hostile_archive(path: Path) -> None:
    with Archive(path, "w") as a:
        for i, key in enumerate(HOSTILE_KEYS):
            a[key] = {"value": key, "i": i}
        a["frame"] = pd.DataFrame({"cell": HOSTILE_KEYS})


def test_ls_and_show_escape_control_characters_in_keys(tmp_path: Path) -> None:
    path = tmp_path / "h.zip"
    hostile_archive(path)
    result = run("ls", "--header", str(path))
    assert result.returncode == 0 and result.stderr == b""
    assert_clean(result.stdout)
    lines = result.stdout.decode().splitlines()
    assert len(lines) == len(HOSTILE_KEYS) + 4  # header, keys, rule, total: no forged line
    listed = [line.split("  ")[-1] for line in lines[1:-3]]
    assert listed == [repr(k)[1:-1] for k in HOSTILE_KEYS]  # Python's escapes, unambiguous
    for key in HOSTILE_KEYS:
        shown = run("show", str(path), key)
        assert shown.returncode == 0, shown.stderr
        assert_clean(shown.stdout)
        assert repr(key) in shown.stdout.decode()
    shown = run("show", str(path), "frame")
    assert shown.returncode == 0 and shown.stdout.count(b"\n") == len(HOSTILE_KEYS) + 1
    assert_clean(shown.stdout)
    missing = run("show", str(path), HOSTILE_KEYS[0] + "x")
    err = assert_one_line_error(missing, "show")
    assert "did you mean" in err


def crafted_archive(path: Path, keys: dict[str, Any], extra: dict[str, bytes]) -> None:
    """An archive written by hand with `zipfile`, for what `Archive` itself refuses to write:
    key "k" with the given manifest fields, stored in entry "k.json", plus `extra` entries that
    no key lists."""
    content = b"1"
    _, digest = _native.archive_digest(content)
    manifest = {
        "amber_archive": 1,
        "keys": {
            key: {"encoding": "json", "entries": [f"e{i}.json"], **fields}
            for i, (key, fields) in enumerate(keys.items())
        },
        "entries": {
            f"e{i}.json": {"size": 1, "method": "stored", "blake3": digest}
            for i in range(len(keys))
        },
    }
    with zipfile.ZipFile(path, "w") as z:
        for i in range(len(keys)):
            z.writestr(f"e{i}.json", content)
        for name, data in extra.items():
            z.writestr(name, data)
        z.writestr(".amber/manifest.json", json.dumps(manifest, ensure_ascii=True))


def test_hostile_types_and_entry_names_are_escaped_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "crafted.zip"
    keys = {"k": {"type": "\x1b[31mred\nforged\u202e"}, "not a str type": {"type": {"a": "\x1b"}}}
    crafted_archive(path, keys, {"\x1b]0;owned\x07\n.extra": b"x"})
    with Archive(path) as a:
        assert a["k"] == 1
    listing = run("ls", "--header", str(path))
    assert listing.returncode == 0, listing.stderr
    assert_clean(listing.stdout)
    assert len(listing.stdout.splitlines()) == len(keys) + 3
    assert b"\\x1b[31mred\\nforged\\u202e" in listing.stdout
    as_json = run("ls", "--json", str(path))
    assert as_json.returncode == 0
    assert_clean(as_json.stdout)
    assert [r["key"] for r in json.loads(as_json.stdout)] == list(keys)
    verified = run("verify", str(path))  # the extra entry belongs to no key
    err = verified.stderr.decode()
    assert verified.returncode == 1 and verified.stdout == b"" and "Traceback" not in err
    assert err.count("\n") == 1 and "\\x1b]0;owned\\x07\\n.extra" in err
    assert_clean(verified.stderr)


def test_a_key_with_a_lone_surrogate_never_reaches_the_terminal_raw(tmp_path: Path) -> None:
    """JSON can spell a lone surrogate (\\ud800), which no terminal encoding can print."""
    path = tmp_path / "surrogate.zip"
    crafted_archive(path, {"lone\ud800": {"type": "int"}}, {})
    for command in ("ls", "verify"):
        result = run(command, str(path))
        assert b"Traceback" not in result.stderr and result.returncode in (0, 1)
        assert_clean(result.stdout)
        assert_clean(result.stderr)
        assert b"\\ud800" in result.stdout + result.stderr


def test_a_file_named_with_control_characters_is_escaped_in_messages(tmp_path: Path) -> None:
    path = tmp_path / "\x1b[2Jbad\nname.zip"
    path.write_text("not a zip")
    err = assert_one_line_error(run("ls", str(path)), "ls")
    assert "\\x1b[2Jbad\\nname.zip" in err


# --- errors: one line on stderr and exit status 1, never a traceback ------------------------


def not_archives(root: Path, archive: Path) -> dict[str, Path]:
    files = {
        "missing": root / "missing.zip",
        "directory": root / "folder",
        "text": root / "notes.txt",
        "empty": root / "empty.zip",
        "plain zip": root / "plain.zip",
        "truncated": root / "truncated.zip",
        "codec frames": root / "values.amb",
    }
    files["directory"].mkdir(exist_ok=True)
    files["text"].write_text("hello\n")
    files["empty"].write_bytes(b"")
    with zipfile.ZipFile(files["plain zip"], "w") as z:
        z.writestr("readme.txt", "hi")
    data = archive.read_bytes()
    files["truncated"].write_bytes(data[: len(data) // 2])
    with open(files["codec frames"], "wb") as f:
        amber.dump({"a": 1}, f)
        amber.dump([1, 2], f)
    return files


EXPECTED = {
    "missing": "no such file",
    "directory": "is a directory",
    "text": "not an archive",
    "empty": "an empty file",
    "plain zip": "without an amber manifest",
    "truncated": "",
    "codec frames": "an amber codec file",
}


@pytest.mark.parametrize("command", ["ls", "show", "verify"])
@pytest.mark.parametrize("case", list(EXPECTED))
def test_files_that_are_not_archives_give_one_line(
    tmp_path: Path, archive: Path, command: str, case: str
) -> None:
    path = not_archives(tmp_path, archive)[case]
    args = [command, str(path)] + (["config"] if command == "show" else [])
    result = run(*args)
    if case == "codec frames" and command == "show":
        assert result.returncode == 2  # a key named for a file that has none
        assert b"has no keys" in result.stderr and b"Traceback" not in result.stderr
        return
    err = assert_one_line_error(result, command)
    assert err.startswith(f"amber {command}: {path}: "), err
    assert EXPECTED[case] in err


def test_permission_denied(
    tmp_path: Path, archive: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "secret" / "run.zip"
    path.parent.mkdir()
    path.write_bytes(archive.read_bytes())
    if os.geteuid() == 0:  # root reads everything: ask as nobody, for this call only
        path.parent.chmod(0o700)
        os.seteuid(65534)
        try:
            status = main(["ls", str(path)])
        finally:
            os.seteuid(0)
    else:
        path.chmod(0)
        status = main(["ls", str(path)])
    out = capsys.readouterr()
    assert status == 1 and out.out == ""
    assert out.err == f"amber ls: {path}: permission denied\n"


def test_show_reads_files_of_codec_frames(tmp_path: Path) -> None:
    path = tmp_path / "values.amb"
    with open(path, "wb") as f:
        amber.dump({"a": 1, "esc": "\x1b[2J"}, f)
        amber.dump(pd.DataFrame({"c": ["\x1b]0;t\x07"]}), f)
    result = run("show", str(path))
    assert result.returncode == 0, result.stderr
    assert_clean(result.stdout)
    out = result.stdout.decode()
    assert out.startswith("{'a': 1, 'esc': '\\x1b[2J'}\n") and "\\x1b]0;t\\x07" in out
    with open(path, "ab") as f:
        f.write(amber.dumps([1, 2, 3])[:-1])  # a third frame, cut short
    result = run("show", str(path))
    assert result.returncode == 1 and result.stdout.startswith(b"{'a': 1")
    assert result.stderr.decode().startswith(f"amber show: {path}: frame 2: truncated")


def test_show_needs_a_key_for_an_archive(archive: Path) -> None:
    result = run("show", str(archive))
    assert result.returncode == 2 and b"name one" in result.stderr
    assert b"Traceback" not in result.stderr


def test_show_a_missing_key_and_an_entry_that_fails(tmp_path: Path, archive: Path) -> None:
    err = assert_one_line_error(run("show", str(archive), "confg"), "show")
    assert err == f"amber show: {archive}: no key 'confg'; did you mean 'config'?\n"
    path = tmp_path / "tampered.zip"
    with Archive(path, "w") as a:
        a["x"] = np.arange(1000)
        a["ok"] = 1
    data = bytearray(path.read_bytes())
    data[data.find(np.arange(1000).tobytes()[:16]) + 100] ^= 1
    path.write_bytes(bytes(data))
    err = assert_one_line_error(run("show", str(path), "x"), "show")
    assert "key 'x'" in err and "x.npy" in err and "hash" in err
    result = run("verify", str(path))
    assert result.returncode == 1 and b"x.npy" in result.stderr and result.stdout == b""
    assert run("show", str(path), "ok").stdout == b"1\n"


def test_verify_says_what_it_checked(archive: Path) -> None:
    result = run("verify", str(archive))
    assert result.returncode == 0 and result.stderr == b""
    assert result.stdout.decode() == (
        f"{archive}: 12 keys, every entry's size, CRC-32 and BLAKE3 hash checked\n"
    )


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("tampered", [False, True])
def test_verify_npz_and_datazip_files_without_a_traceback(
    tmp_path: Path, compressed: bool, tampered: bool
) -> None:
    path = tmp_path / "x.npz"
    (np.savez_compressed if compressed else np.savez)(path, a=np.arange(1000), b=np.ones(3))
    if tampered:  # a bit flipped in the middle of the last entry's data
        with zipfile.ZipFile(path) as z:
            info = z.infolist()[-1]
        data = bytearray(path.read_bytes())
        data[info.header_offset + 30 + len(info.filename) + info.compress_size // 2] ^= 1
        path.write_bytes(bytes(data))
    for target in (path, DATAZIP / "plain.zip", DATAZIP / "deflated.zip"):
        result = run("verify", str(target))
        err = result.stderr.decode()
        assert "Traceback" not in err
        with Archive(target) as a:
            problems = a.verify()
        # the command says what Archive.verify found, one line each, and fails if it found any
        assert result.returncode == (1 if problems else 0)
        assert err.splitlines() == [f"amber verify: {target}: {p}" for p in problems]
        if tampered and target == path:
            assert result.returncode == 1 and "b.npy" in err
        if not problems:
            assert result.stdout.decode().endswith(
                "size and CRC-32 (an .npz file has no hashes) checked\n"
                if target == path
                else "size and CRC-32 (a DataZip file has no hashes) checked\n"
            )


# --- URLs: a server on loopback that fails ----------------------------------------------------


class Failing(http.server.BaseHTTPRequestHandler):
    """Answers /404, /403 and /500 with that status, /text with a text file, /hang never."""

    asked = threading.Event()  # set once /hang was asked for

    def log_message(self, *args: Any) -> None:
        pass

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        name = self.path.strip("/")
        if name == "hang":
            Failing.asked.set()
            time.sleep(30)
            return
        if name == "text":
            body = b"hello, not a zip\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(body)
            return
        self.send_error(int(name))


@pytest.fixture
def server() -> Iterator[str]:
    pytest.importorskip("aiohttp")
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Failing)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("404", "not found"),
        ("403", "HTTP 403 Forbidden"),
        ("500", "HTTP 500 Internal Server Error"),
        ("text", "no zip end record"),
    ],
)
def test_urls_that_fail_give_one_line(server: str, path: str, said: str) -> None:
    for command in ("ls", "verify"):
        err = assert_one_line_error(run(command, f"{server}/{path}"), command)
        assert err.startswith(f"amber {command}: {server}/{path}: {said}"), err


def test_a_url_nobody_answers(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("aiohttp")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: connections are refused
    assert main(["ls", f"http://127.0.0.1:{port}/x.zip"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"amber ls: http://127.0.0.1:{port}/x.zip: ")
    assert err.count("\n") == 1 and re.search("connect|refused", err, re.IGNORECASE)


# --- Ctrl-C and a reader that goes away -----------------------------------------------------


def test_ctrl_c_exits_quietly(server: str) -> None:
    Failing.asked.clear()
    process = subprocess.Popen(
        [AMBER, "ls", f"{server}/hang"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert Failing.asked.wait(60)  # the command is waiting for the server
    time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130 and out == b"" and err == b""


def test_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    path = tmp_path / "many.zip"
    with Archive(path, "w") as a:
        for i in range(3000):  # a listing far over a pipe's buffer
            a[f"key/number/{i}"] = i
    process = subprocess.Popen(
        [AMBER, "ls", "--header", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().split()[0] == b"STORED"
    process.stdout.close()  # as `amber ls many.zip | head -1` does
    assert process.wait(timeout=60) == 141
    assert process.stderr.read() == b""


def test_output_that_the_terminal_cannot_encode_is_escaped(tmp_path: Path) -> None:
    path = tmp_path / "u.zip"
    with Archive(path, "w") as a:
        a["日本/é"] = "ü"
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    for args in (["ls", str(path)], ["show", str(path), "日本/é"]):
        result = subprocess.run([AMBER, *args], capture_output=True, env=env, timeout=60)
        assert result.returncode == 0, result.stderr
        result.stdout.decode("ascii")
    assert (
        b"\\u65e5\\u672c/\\xe9"
        in subprocess.run(
            [AMBER, "ls", "--header", str(path)], capture_output=True, env=env, timeout=60
        ).stdout
    )


def test_usage_errors_exit_2(archive: Path) -> None:
    for args in (["ls"], ["ls", "--bytes", "--json", str(archive)], ["show"], ["verify", "a", "b"]):
        result = run(*args)
        assert result.returncode == 2 and b"usage: amber" in result.stderr
        assert b"Traceback" not in result.stderr


def test_in_memory_main_matches_the_entry_point(
    archive: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ls", "--bytes", str(archive)]) == 0
    assert capsys.readouterr().out.encode() == run("ls", "--bytes", str(archive)).stdout
