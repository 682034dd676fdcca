"""amber.Archive's writers: the lock, the append journal in each of its states, faults (kills at
random points, files that cannot grow), concurrent writers, and the files a write leaves (modes,
symlinks, archives dropped without close()). After every fault the archive holds exactly what
the writers reported committed."""

from __future__ import annotations

import gc
import io
import json
import os
import random
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import amber
from amber.archive import _journal

HERE = Path(__file__).parent
FAULT_ROUNDS = int(os.environ.get("AMBER_FAULT_ROUNDS", "1500"))


def write(path: Path, **values: Any) -> None:
    with amber.Archive(path, "w") as a:
        for k, v in values.items():
            a[k] = v


def contents(path: Path) -> dict[str, Any]:
    with amber.Archive(path) as a:
        assert a.verify() == []
        return {k: a[k] for k in a}


def run_python(code: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, **kwargs
    )


def killed_append(path: Path, key: str = "big") -> None:
    """An append killed after its journal and part of its data were written."""
    code = f"""
        import os, signal, numpy as np, amber
        a = amber.Archive({str(path)!r}, "a")
        a[{key!r}] = np.ones(200_000)
        os.kill(os.getpid(), signal.SIGKILL)
    """
    assert run_python(code).returncode == -signal.SIGKILL
    assert _journal.peek(os.path.realpath(path)) is not None


class Holder:
    """A child process holding `path` open for appending (its lock held, its journal written,
    one key put) until told to commit or to die."""

    def __init__(self, path: Path) -> None:
        code = f"""
            import sys, amber
            a = amber.Archive({str(path)!r}, "a")
            a["held"] = list(range(1000))
            print("ready", flush=True)
            if sys.stdin.readline().strip() == "commit":
                a.close()
                print("committed", flush=True)
        """
        self.proc = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "ready"

    def commit(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("commit\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "committed"
        self.proc.wait(30)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(30)


# --- the fault campaign -------------------------------------------------------------------------


def test_writers_killed_at_random_points_never_lose_a_committed_session(tmp_path: Path) -> None:
    """`AMBER_FAULT_ROUNDS` (1,500 by default, about 15 s) sessions of "w", "x", "a" and
    compact(), about half killed at a random moment and a tenth run out of file size: after each,
    the archive is exactly the state before or after it, and after it when it reported success."""
    seed = int(os.environ.get("AMBER_FAULT_SEED", random.randrange(1 << 30)))
    r = subprocess.run(
        [
            sys.executable,
            str(HERE / "archive_faults.py"),
            str(tmp_path),
            str(FAULT_ROUNDS),
            str(seed),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}\n(rerun with AMBER_FAULT_SEED={seed})"
    tally = json.loads(r.stdout)
    assert tally["rounds"] == FAULT_ROUNDS
    assert tally["killed"] > FAULT_ROUNDS // 4 and tally["completed"] > FAULT_ROUNDS // 4
    assert tally["failed"] > 0  # the file-size limit was hit


# --- concurrent writers ---------------------------------------------------------------------------

APPENDER = """
import json, sys, numpy as np, amber
path, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    with amber.Archive(path, "a", lock_timeout=120) as a:
        a[f"{tag}{i}"] = np.full(20_000 + i, i)
        if i % 7 == 3:
            a.compact()
    print(json.dumps(f"{tag}{i}"), flush=True)
"""


def test_concurrent_appenders_wait_for_each_other_and_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, seed="before")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(path), tag, "25"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in "ABCD"
    ]
    reported = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        reported += [json.loads(line) for line in out.splitlines()]
    assert len(reported) == 100
    got = contents(path)
    assert set(got) == {"seed", *reported}
    for key in reported:
        i = int(key[1:])
        assert np.array_equal(got[key], np.full(20_000 + i, i))
    assert not os.path.exists(_journal.path_of(str(path)))


def test_concurrent_appenders_killed_at_random_keep_every_reported_append(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, seed="before")
    rng = random.Random(7)
    reported: set[str] = set()
    started: set[str] = set()
    for wave in range(6):
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", APPENDER, str(path), f"{tag}{wave}_", "40"],
                stdout=subprocess.PIPE,
                text=True,
            )
            for tag in "ABC"
        ]
        time.sleep(rng.uniform(0.3, 1.5))
        for p in procs:
            if rng.random() < 0.7:
                p.send_signal(signal.SIGKILL)
        for p, tag in zip(procs, "ABC", strict=True):
            out, _ = p.communicate(timeout=600)
            keys = [json.loads(line) for line in out.splitlines()]
            reported.update(keys)
            # The append after the last reported one may have committed before the kill.
            started.update([*keys, f"{tag}{wave}_{len(keys)}"])
    got = contents(path)
    assert reported <= set(got) <= {"seed", *started}
    # The next writer cuts off whatever a killed one left, and commits.
    with amber.Archive(path, "a") as a:
        a["after"] = 1
    assert set(contents(path)) == set(got) | {"after"}


def test_a_second_writer_waits_for_the_lock_or_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, seed=0)
    holder = Holder(path)
    try:
        for mode in ("a", "w"):
            start = time.monotonic()
            with pytest.raises(amber.ArchiveError) as e:
                amber.Archive(path, mode, lock_timeout=0.3)
            assert e.value.kind == "locked"
            assert "another process" in str(e.value) and str(path) in str(e.value)
            assert 0.25 < time.monotonic() - start < 5
        # Readers take no lock: they read the archive as committed, without the held append.
        assert contents(path) == {"seed": 0}
    finally:
        holder.commit()
    assert contents(path) == {"seed": 0, "held": list(range(1000))}


def test_a_writer_waiting_for_the_lock_goes_on_once_it_is_free(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, seed=0)
    holder = Holder(path)
    waiter = subprocess.Popen(
        [sys.executable, "-c", APPENDER, str(path), "W", "1"], stdout=subprocess.PIPE, text=True
    )
    time.sleep(1.0)
    assert waiter.poll() is None  # still waiting
    holder.commit()
    out, _ = waiter.communicate(timeout=60)
    assert waiter.returncode == 0 and json.loads(out) == "W0"
    assert set(contents(path)) == {"seed", "held", "W0"}


def test_a_w_writer_that_replaces_the_archive_sends_a_waiting_appender_to_the_new_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, old=1)
    with amber.Archive(path, "w") as w:
        w["new"] = 2
        appender = subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(path), "A", "1"], stdout=subprocess.PIPE, text=True
        )
        time.sleep(1.0)
        assert appender.poll() is None
    appender.communicate(timeout=60)
    assert appender.returncode == 0
    assert set(contents(path)) == {"new", "A0"}


def test_a_second_writer_in_the_same_process_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, seed=0)
    with amber.Archive(path, "a") as a:
        a["x"] = 1
        for mode in ("a", "w"):
            start = time.monotonic()
            with pytest.raises(amber.ArchiveError, match="in this process") as e:
                amber.Archive(path, mode)
            assert e.value.kind == "locked" and time.monotonic() - start < 1
    assert contents(path) == {"seed": 0, "x": 1}
    with amber.Archive(path, "a") as a:  # released at close
        a["y"] = 2


# --- the journal, state by state ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        b"",
        b"amber-append",
        b"amber-append 2 100",
        b"amber-app",
        b"\xff\xfe garbage",
        b"not a journal\n",
        b"amber-append x\n",
        b"amber-append 2 10 1 2 3 abcd 99\n",  # its CRC does not match
        b"amber-append 2 10 1 2 3 abcd\n",  # a field short
    ],
)
@pytest.mark.parametrize("mode", ["r", "a", "w"])
def test_a_torn_journal_is_ignored_by_readers_and_removed_by_writers(
    tmp_path: Path, text: bytes, mode: str
) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, config={"lr": 0.1})
    Path(_journal.path_of(str(path))).write_bytes(text)
    assert _journal.read(str(path), None).state in (_journal.State.TORN, _journal.State.STALE)
    with amber.Archive(path, mode) as a:
        assert a.mode == "r" or a.mode in "aw"
        if mode == "r":
            assert a["config"] == {"lr": 0.1}
        else:
            a["more"] = 1
    expected = {"config": {"lr": 0.1}} if mode != "w" else {}
    if mode != "r":
        expected["more"] = 1
        assert not os.path.exists(_journal.path_of(str(path)))
    assert contents(path) == expected


def test_a_journal_that_could_not_be_written_leaves_the_archive_usable(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, config={"lr": 0.1})
    code = f"""
        import amber
        with amber.Archive({str(path)!r}, "a") as a:
            a["k"] = 1
    """
    for limit in (0, 10, 60):  # nothing, part of the journal, the journal but no entry
        r = run_python(
            code,
            preexec_fn=lambda limit=limit: (
                resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path) + limit,) * 2)
                if limit
                else resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
            ),
        )
        assert r.returncode == 1 and "File too large" in r.stderr
        assert contents(path) == {"config": {"lr": 0.1}}
        assert not os.path.exists(_journal.path_of(str(path)))
        assert not os.path.exists(_journal.path_of(str(path)) + ".tmp")
    with amber.Archive(path, "a") as a:
        a["k"] = 1
    assert contents(path) == {"config": {"lr": 0.1}, "k": 1}


@pytest.mark.parametrize("then", ["r", "a", "w", "x-after-rm"])
def test_a_dead_appenders_journal_is_honoured_then_cleared(tmp_path: Path, then: str) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, config={"lr": 0.1})
    committed = os.path.getsize(path)
    killed_append(path)
    assert os.path.getsize(path) > committed
    assert _journal.read(str(path), os.open(path, os.O_RDONLY)).state is _journal.State.PENDING
    if then == "r":
        assert contents(path) == {"config": {"lr": 0.1}}
        return
    if then == "x-after-rm":
        os.unlink(path)  # the user removes the archive; the journal stays
        with amber.Archive(path, "x") as a:
            a["fresh"] = 1
        assert contents(path) == {"fresh": 1}
        assert not os.path.exists(_journal.path_of(str(path)))
        return
    with amber.Archive(path, then) as a:
        a["next"] = np.arange(10.0)
    expected: dict[str, Any] = {"config": {"lr": 0.1}} if then == "a" else {}
    got = contents(path)
    assert set(got) == {*expected, "next"}
    assert not os.path.exists(_journal.path_of(str(path)))
    if then == "a":
        assert os.path.getsize(path) < committed + 4096  # the dead append was cut off


def test_a_killed_append_then_w_then_a_keeps_what_w_committed(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, config={"lr": 0.1})
    killed_append(path)
    write(path, config={"lr": 0.2}, weights=np.arange(100_000.0))
    size = os.path.getsize(path)
    assert not os.path.exists(_journal.path_of(str(path)))
    with amber.Archive(path, "a") as a:
        a["more"] = 1
    assert os.path.getsize(path) > size
    got = contents(path)
    assert got["config"] == {"lr": 0.2} and got["more"] == 1
    assert np.array_equal(got["weights"], np.arange(100_000.0))


def test_stale_journals_say_nothing_about_the_archive(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"
    other = tmp_path / "other.amber.zip"
    write(path, config=1)
    write(other, config=2)
    # A journal written for another file (as after the archive was replaced).
    fd = os.open(other, os.O_RDONLY)
    _journal.write(str(path), fd, durable=False)
    os.close(fd)
    assert _journal.read(str(path), os.open(path, os.O_RDONLY)).state is _journal.State.STALE
    assert contents(path) == {"config": 1}
    # A journal for this file whose bytes before the append have changed since.
    fd = os.open(path, os.O_RDWR)
    _journal.write(str(path), fd, durable=False)
    os.pwrite(fd, b"\0", os.path.getsize(path) - 30)
    assert _journal.read(str(path), fd).state is _journal.State.STALE
    os.close(fd)
    # One that claims more bytes than there are.
    Path(_journal.path_of(str(path))).write_bytes(b"amber-append 99999999\n")
    assert _journal.read(str(path), os.open(path, os.O_RDONLY)).state is _journal.State.STALE


def test_journals_of_amber_0_1_are_read(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, config=1)
    size = os.path.getsize(path)
    with open(path, "ab") as f:  # an unfinished append's first bytes
        f.write(b"PK\x03\x04" + os.urandom(5000))
    Path(_journal.path_of(str(path))).write_bytes(f"amber-append {size}\n".encode())
    assert contents(path) == {"config": 1}
    with amber.Archive(path, "a") as a:
        a["more"] = 2
    assert contents(path) == {"config": 1, "more": 2}
    # One whose size is not where an archive ends is stale.
    Path(_journal.path_of(str(path))).write_bytes(f"amber-append {size - 7}\n".encode())
    assert contents(path) == {"config": 1, "more": 2}


def test_readers_never_see_an_append_half_done(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, n=0)
    code = f"""
        import numpy as np, amber
        for i in range(1, 80):
            with amber.Archive({str(path)!r}, "a") as a:
                a["n"] = i
                a[f"a{{i}}"] = np.full(50_000, i)
    """
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)])
    seen = set()
    try:
        while writer.poll() is None:
            with amber.Archive(path) as a:
                n = a["n"]
                assert set(a) == {"n", *(f"a{i}" for i in range(1, n + 1))}
                if n:
                    assert np.array_equal(a[f"a{n}"], np.full(50_000, n))
                seen.add(n)
    finally:
        writer.wait(120)
    assert writer.returncode == 0 and len(seen) > 3


# --- what a write leaves ----------------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002, 0o077])
@pytest.mark.parametrize("mode", ["w", "x", "a"])
def test_new_archives_get_the_permissions_open_would_give(
    tmp_path: Path, umask: int, mode: str
) -> None:
    path = tmp_path / "run.amber.zip"
    old = os.umask(umask)
    try:
        with amber.Archive(path, mode) as a:
            a["x"] = 1
        with open(tmp_path / "plain", "w"):
            pass
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~umask
    assert stat.S_IMODE(os.stat(path).st_mode) == stat.S_IMODE(os.stat(tmp_path / "plain").st_mode)


@pytest.mark.parametrize("perm", [0o644, 0o640, 0o604, 0o664, 0o600])
def test_a_replaced_or_compacted_archive_keeps_its_permissions(tmp_path: Path, perm: int) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, x=1)
    os.chmod(path, perm)
    write(path, x=2)
    assert stat.S_IMODE(os.stat(path).st_mode) == perm
    with amber.Archive(path, "a") as a:
        a["x"] = 3
        a.compact()
    assert stat.S_IMODE(os.stat(path).st_mode) == perm
    assert contents(path) == {"x": 3}


@pytest.mark.parametrize("mode", ["w", "a"])
def test_writes_through_a_symlink_write_the_file_and_keep_the_link(
    tmp_path: Path, mode: str
) -> None:
    real = tmp_path / "data" / "run.amber.zip"
    real.parent.mkdir()
    write(real, x=1)
    link = tmp_path / "link.zip"
    link.symlink_to(real)
    with amber.Archive(link, mode) as a:
        a["y"] = 2
        a.compact()
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert contents(real) == ({"y": 2} if mode == "w" else {"x": 1, "y": 2})
    # A reader through the link finds the journal beside the file it leads to.
    killed_append(link)
    assert os.path.exists(_journal.path_of(str(real)))
    assert contents(link) == contents(real)


def test_x_refuses_a_dangling_symlink(tmp_path: Path) -> None:
    link = tmp_path / "link.zip"
    link.symlink_to(tmp_path / "missing.zip")
    with pytest.raises(FileExistsError):
        amber.Archive(link, "x")


def test_an_archive_dropped_without_close_is_finished_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"

    def forget() -> None:
        a = amber.Archive(path, "w")
        a["x"] = np.arange(5)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        forget()
        gc.collect()
    assert any(
        issubclass(w.category, ResourceWarning) and "was not closed" in str(w.message)
        for w in caught
    )
    assert np.array_equal(contents(path)["x"], np.arange(5))
    assert [p.name for p in tmp_path.iterdir()] == ["run.amber.zip"]
    with amber.Archive(path, "a") as a:  # its lock went with it
        a["y"] = 1


def test_an_archive_left_open_at_exit_is_finished(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"
    code = f"""
        import amber
        keep = amber.Archive({str(path)!r}, "w")
        keep["x"] = {{"a": 1}}
        appended = amber.Archive({str(tmp_path / "other.zip")!r}, "a")
        appended["y"] = 2
    """
    write(path, old="replaced at exit")
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert contents(path) == {"x": {"a": 1}}
    assert contents(tmp_path / "other.zip") == {"y": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.zip", "run.amber.zip"]


def test_a_dropped_archive_after_a_failed_write_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"
    write(path, x=1)
    a = amber.Archive(path, "a")
    with pytest.raises(amber.EncodeError):
        a["bad"] = {"f": lambda: 0}  # refused before a byte is written: the archive stays usable
    a["ok"] = 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        del a
        gc.collect()
    assert contents(path) == {"x": 1, "ok": 2}


def test_an_append_that_fails_removes_the_archive_it_created(tmp_path: Path) -> None:
    path = tmp_path / "run.amber.zip"
    with pytest.raises(RuntimeError), amber.Archive(path, "a") as a:
        a["x"] = 1
        raise RuntimeError("the user's code failed")
    assert list(tmp_path.iterdir()) == []


def test_w_keeps_one_entry_for_a_key_written_twice(tmp_path: Path) -> None:
    once, twice = tmp_path / "once.zip", tmp_path / "twice.zip"
    with amber.Archive(once, "w") as a:
        a["y"] = 2
        a["x"] = 1
    with amber.Archive(twice, "w") as a:
        a["x"] = np.zeros(100_000)
        a["y"] = 2
        a["x"] = 1
        a["gone"] = np.ones(50_000)
        del a["gone"]
    assert twice.read_bytes() == once.read_bytes()
    assert contents(twice) == {"x": 1, "y": 2}


def test_deflate_entries_are_plain_npy_files_by_default(tmp_path: Path) -> None:
    path = tmp_path / "run.zip"
    arr = np.arange(10_000, dtype=np.float64)
    with amber.Archive(path, "w", compression="deflate") as a:
        a["d"] = arr
        a.put("s", arr, shuffle=True)
    with zipfile.ZipFile(path) as z:
        assert np.array_equal(np.lib.format.read_array(io.BytesIO(z.read("d.npy"))), arr)
    with amber.Archive(path) as a:
        assert "shuffle" not in a.info("d")["entries"]["d.npy"]
        assert a.info("s")["entries"]["s.npy"]["shuffle"] == 8
        assert np.array_equal(a["s"], arr)
    with amber.Archive(tmp_path / "z.zip", "w", compression="zstd") as a:
        a["z"] = arr
        assert a.info("z")["entries"]["z.npy"]["shuffle"] == 8


def _access(path: Path) -> str:
    """Who this process is and what it may open, for a failing permission test."""
    modes = {str(p): oct(stat.S_IMODE(os.stat(p).st_mode)) for p in (*reversed(path.parents), path)}
    opens = {}
    for name, flags in (("O_RDONLY", os.O_RDONLY), ("O_RDWR", os.O_RDWR)):
        try:
            os.close(os.open(path, flags))
            opens[name] = "ok"
        except OSError as e:
            opens[name] = repr(e)
    return f"resuid {os.getresuid()}, groups {os.getgroups()}, modes {modes}, opens {opens}"


def test_a_read_only_archive_is_replaced_by_w_and_refused_by_a() -> None:
    """A file the writer may not write (its folder writable): "a" is refused with
    PermissionError, nothing changed; "w" replaces it, keeping its mode, after a dead append."""
    folder = Path(tempfile.mkdtemp(prefix="amber-shared-"))  # pytest's folders are private
    try:
        folder.chmod(0o777)
        path = folder / "run.amber.zip"
        write(path, x=1)
        killed_append(path)
        path.chmod(0o444)
        root = os.geteuid() == 0
        if root:  # root may write anything: write as nobody, for these calls only
            os.seteuid(65534)
        try:
            try:
                amber.Archive(path, "a")
            except PermissionError as e:
                # amber's own refusal, not the OS's: the file opens read-only to be locked.
                if "permission denied (appending writes to it)" not in str(e):
                    raise AssertionError(f"not amber's refusal; as seen: {_access(path)}") from e
            else:
                pytest.fail('mode "a" opened a read-only archive')
            assert contents(path) == {"x": 1}
            with amber.Archive(path, "w") as a:
                a["y"] = 2
        finally:
            if root:
                os.seteuid(0)
        assert contents(path) == {"y": 2}
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o444
        assert not os.path.exists(_journal.path_of(str(path)))
    finally:
        shutil.rmtree(folder)
