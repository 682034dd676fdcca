"""The benchmark framework in its tiny mode: files written, wrong contenders caught, copies named,
and a new part registering contenders whose operations are not dumps/loads."""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import json
import pickle
import random
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from amber import bench
from amber.bench import BenchConfig, Contender, Trial, Workload, run
from amber.bench.engine import registry
from amber.bench.engine.exact import exactly_equal
from amber.bench.engine.measure import (
    CANNOT_REPRESENT,
    FAILED,
    NOT_EXACT,
    OK,
    Row,
    run_contender,
)
from amber.bench.engine.rows import Rows, busy_warning, contender_table
from amber.bench.engine.study import POLICIES
from amber.bench.engine.timing import Series, Timing, sample_in_turn
from amber.bench.parts.codec import contenders as codecs
from amber.bench.parts.codec.workloads import (
    ALL_KINDS,
    TUPLE,
    w1,
    w1_records,
    w2_nested,
    w3,
    w3_table,
)
from amber.cli import main


def _ints_to_floats(obj: Any) -> Any:
    """Equal under `==` (1 == 1.0) but not the same values: what the exact check must catch."""
    if isinstance(obj, dict):
        return {k: _ints_to_floats(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_ints_to_floats(v) for v in obj]
    if type(obj) is int:
        return float(obj)
    return obj


def _pickle5(obj: Any) -> bytes:
    return pickle.dumps(obj, 5)


WRONG = codecs.codec("wrong", _pickle5, lambda buf: _ints_to_floats(pickle.loads(buf)), ALL_KINDS)


def _bytes_only(buf: Any) -> Any:
    if not isinstance(buf, bytes):
        raise TypeError("bytes required")
    return pickle.loads(buf)


BYTES_ONLY = codecs.codec("bytes-only", _pickle5, _bytes_only, ALL_KINDS)
TINY = POLICIES["tiny"]
PLOTTING = importlib.util.find_spec("matplotlib") is not None


def assert_plots(report: Path, *stems: str) -> None:
    """Each named PNG was written beside the report and is shown in it (when matplotlib is
    installed; without it the report says plots were skipped)."""
    text = report.read_text()
    if not PLOTTING:
        assert "matplotlib is not installed" in text
        return
    for stem in stems:
        png = report.parent / f"{stem}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
        assert f"({stem}.png)" in text


def test_exactly_equal_sees_types_that_eq_ignores() -> None:
    assert exactly_equal({"a": [1, 2.5, None]}, {"a": [1, 2.5, None]})
    assert not exactly_equal([1], [1.0])
    assert not exactly_equal([1], [True])
    assert not exactly_equal((1, 2), [1, 2])
    assert not exactly_equal({"a": 1, "b": 2}, {"b": 2, "a": 1})  # order is part of the value
    assert not exactly_equal(0.0, -0.0)


def test_workloads_are_seeded_and_shaped_as_documented() -> None:
    assert w1_records(3) == w1_records(3)
    first = w1_records(1)[0]
    assert list(first) == [
        *("id", "score", "name", "active", "parent", "tags", "count", "ratio", "code", "values")
    ]
    assert first["id"] == 1000 and first["name"] == "user000000" and first["code"] == "C0"
    assert len(pickle.dumps(w1_records(1_000), 5)) == pytest.approx(99_600, rel=0.01)
    table = w3_table(2)
    assert list(table) == ["key0000000", "key0000001"]
    assert table["key0000001"]["name"] == "n1"


def test_generators_printed_in_the_docs_are_the_workloads() -> None:
    docs = Path(__file__).parent.parent / "docs" / "benchmarks.md"
    printed: dict[str, Any] = {"random": random}
    for block in re.findall(r"```python\n(.*?)```", docs.read_text(), re.S):
        exec(block, printed)
    assert exactly_equal(w1_records(1_000), printed["w1_records"](1_000))
    assert exactly_equal(w2_nested(), printed["w2_nested"]())
    assert exactly_equal(w3_table(1_000), printed["w3_table"](1_000))


def test_wrong_codec_is_reported_not_exact_and_not_timed() -> None:
    rows = [run_contender(c, w1("S"), w1_records(10), TINY) for c in (WRONG, BYTES_ONLY)]
    assert rows[0].status == NOT_EXACT and not rows[0].ops
    assert rows[0].note == "loads(dumps(x)) differs from x"
    assert rows[1].status == OK and list(rows[1].ops) == ["dumps", "loads"]
    assert rows[1].input == codecs.INPUT_BYTES and rows[1].size == len(_pickle5(w1_records(10)))


def test_memoryview_refused_means_copy_counted_and_said() -> None:
    workload = dataclasses.replace(w3(100), options={codecs.LOADS_INPUT: codecs.INPUT_MEMORYVIEW})
    obj = w3_table(100)
    copied = run_contender(BYTES_ONLY, workload, obj, TINY)
    assert copied.status == OK and copied.input == codecs.INPUT_COPY
    assert "TypeError" in copied.note
    direct = run_contender(WRONG, workload, obj, TINY)
    assert direct.input == codecs.INPUT_MEMORYVIEW and direct.status == NOT_EXACT


def test_codec_lacking_a_kind_is_not_run() -> None:
    needs_tuples = Workload("T", "tuples", lambda: (1, 2), frozenset({TUPLE}))
    json_only = codecs.codec("json-only", _pickle5, pickle.loads, frozenset({"json"}))
    row = run_contender(json_only, needs_tuples, (1, 2), TINY)
    assert row.status == CANNOT_REPRESENT and row.note == "needs tuple" and not row.ops


def test_contender_that_raises_is_reported_failed() -> None:
    def broken(obj: Any) -> bytes:
        raise ValueError("no\nsecond line")

    row = run_contender(codecs.codec("broken", broken, pickle.loads), w1("S"), w1_records(10), TINY)
    assert row.status == FAILED and row.note == "ValueError: no" and not row.ops


def test_missing_library_is_skipped_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    def factory() -> Contender:
        raise ImportError("No module named 'nothing_here'")

    monkeypatch.setitem(codecs.CODEC._factories, "nothing", factory)
    found, skipped = codecs.CODEC.resolve(["pickle-5", "nothing"])
    assert [c.name for c in found] == ["pickle-5"]
    assert skipped[0].name == "nothing" and skipped[0].reason.startswith("not installed")


def test_samples_are_taken_in_rounds_with_the_first_series_rotating() -> None:
    calls: list[str] = []
    series = [Series(calls.append, name, loops=1, repeats=3) for name in "abc"]
    sample_in_turn(series)
    assert calls == [*"abc", *"bca", *"cab"]
    assert all(len(s.samples) == 3 for s in series)


def test_tiny_run_writes_report_and_results(tmp_path: Path) -> None:
    found, _ = codecs.CODEC.resolve(["pickle-5", "pickle-5-fast"])
    out = io.StringIO()
    result = run(
        BenchConfig(out_dir=tmp_path, mode="tiny", progress=False, studies=["objects", "scaling"]),
        contenders={"codec": [*found, WRONG]},
        stdout=out,
    )
    assert result.report.exists() and result.results.exists()
    data = json.loads(result.results.read_text())
    assert set(data["studies"]) == {"objects", "scaling"}
    for study in data["studies"].values():
        assert study["part"] == "codec"
        by_codec: dict[str, set[str]] = {}
        for row in study["rows"]:
            by_codec.setdefault(row["contender"], set()).add(row["status"])
        assert by_codec == {"pickle-5": {OK}, "pickle-5-fast": {OK}, "wrong": {NOT_EXACT}}
    assert data["config"]["baselines"] == {"codec": "pickle-5"}
    report = result.report.read_text()
    assert "logical CPUs" in report and "not exact" in report
    assert_plots(result.report, "objects_ratio", "scaling", "scaling_ratio")
    assert "W1-L" in out.getvalue()


def test_cli_runs_one_study_and_rejects_unknown_names(tmp_path: Path) -> None:
    pytest.importorskip("orjson")
    args = ["bench", "--tiny", "--studies", "objects", "--no-progress", "--out", str(tmp_path)]
    assert main([*args, "--contenders", "orjson"]) == 0
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["config"]["contenders"] == {"codec": ["pickle-5", "orjson"]}  # baseline added
    assert "- Codecs: pickle-5 (protocol 5), orjson." in (tmp_path / "report.md").read_text()
    assert main([*args, "--codecs", "orjson,amber"]) == 0  # the older spelling of the option
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["config"]["contenders"] == {"codec": ["pickle-5", "orjson", "amber"]}
    assert main([*args, "--contenders", "no-such-codec"]) == 2
    assert main(["bench", "--studies", "no-such-study", "--out", str(tmp_path)]) == 2


# --- a new part: contenders that write and read files, with a scratch directory per study ---------


@pytest.fixture
def fresh_registries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts and studies registered by a test vanish after it."""
    registry.discover()
    monkeypatch.setattr(registry, "_PARTS", dict(registry._PARTS))
    monkeypatch.setattr(registry, "_STUDIES", dict(registry._STUDIES))


Events = list[tuple[str, ...]]


def _file_contender(name: str, events: Events, tmp: Path, lossy: bool = False) -> Contender:
    """Writes the workload to a file in a directory its setup makes once per study, reads it back."""

    @contextmanager
    def scratch() -> Iterator[Path]:
        events.append(("setup", name))
        (tmp / name).mkdir()
        yield tmp / name
        (tmp / name).rmdir()  # fails unless every workload's cleanup removed its file
        events.append(("teardown", name))

    def prepare(t: Trial) -> None:
        events.append(("session", name, str(t.session)))
        path = t.session / f"{t.workload.name}.bin"

        def write(value: Any) -> Path:
            path.write_bytes(pickle.dumps(value, 5))
            return path

        def read(where: Path) -> Any:
            value = pickle.loads(where.read_bytes())
            return _ints_to_floats(value) if lossy else value

        t.cleanup.callback(events.append, ("cleanup", name, t.workload.name))
        t.cleanup.callback(path.unlink)
        written = t.run("write", write, t.value)
        t.size, t.input = written.stat().st_size, "file"
        t.expect_exact(t.run("read", read, written), "read(write(x)) differs from x")

    return Contender(name, prepare, setup=scratch, note="one file")


@contextmanager
def _refused() -> Iterator[None]:
    raise ConnectionRefusedError("no server on port 5432")
    yield


def _never(t: Trial) -> None:
    raise AssertionError("a contender whose setup failed is not prepared")


def _register_files_part(events: Events, tmp: Path) -> None:
    part = bench.register_part(bench.Part("files", baseline="files-pickle", label="File formats"))
    part.contender("files-pickle")(lambda: _file_contender("files-pickle", events, tmp))
    part.contender("files-lossy")(lambda: _file_contender("files-lossy", events, tmp, lossy=True))
    part.contender("files-down")(lambda: Contender("files-down", _never, setup=_refused))

    @part.contender("files-missing")
    def _missing() -> Contender:
        raise ImportError("No module named 'nothing_here'")

    @bench.register_study
    class FilesStudy(bench.Study):
        name = part = "files"
        description = "write and read a list of ints as one file"

        def run(self, ctx: bench.Context) -> bench.StudyResult:
            result = bench.StudyResult(self.name)
            for n in (10, 1_000):
                workload = Workload(f"F-{n}", f"{n} ints", lambda n=n: list(range(n)), size=n)
                result.rows += ctx.measure(workload)
            return result

        def report(self, result: bench.StudyResult, ctx: bench.Context) -> bench.Report:
            rows = Rows(result.rows, ctx.baseline)
            tables = [contender_table(rows, w, ("write", "read"), w) for w in rows.workloads()]
            return bench.Report("files: one file per workload", tables=tables)


@pytest.mark.usefixtures("fresh_registries")
def test_a_new_part_registers_contenders_with_setup_teardown_and_its_own_ops(
    tmp_path: Path,
) -> None:
    events: Events = []
    _register_files_part(events, tmp_path)
    config = BenchConfig(out_dir=tmp_path / "out", mode="tiny", studies=["files"], progress=False)
    result = run(config, stdout=io.StringIO())
    data = json.loads(result.results.read_text())
    study = data["studies"]["files"]
    assert study["part"] == "files" and data["config"]["baselines"] == {"files": "files-pickle"}
    workloads, names = ("F-10", "F-1000"), ("files-pickle", "files-lossy")
    rows = {(r["workload"], r["contender"]): r for r in study["rows"]}
    assert set(rows) == {(w, c) for w in workloads for c in names}
    for w in workloads:
        good, lossy = rows[(w, "files-pickle")], rows[(w, "files-lossy")]
        assert good["status"] == OK and list(good["ops"]) == ["write", "read"]
        assert good["input"] == "file" and good["size_bytes"] > 0
        assert lossy["status"] == NOT_EXACT and not lossy["ops"]
        assert lossy["note"] == "read(write(x)) differs from x"
    refused = "setup failed (ConnectionRefusedError: no server on port 5432)"
    assert study["notes"] == [f"files-down was not run: {refused}."]
    missing = "not installed (No module named 'nothing_here')"
    assert data["skipped"] == [{"part": "files", "name": "files-missing", "reason": missing}]
    # each setup once for the study, teardowns in reverse order after the last workload; what a
    # workload left is cleaned up once it is timed, the last contender's first
    assert [e for e in events if e[0] != "session"] == [
        *(("setup", c) for c in names),
        *(("cleanup", c, w) for w in workloads for c in reversed(names)),
        *(("teardown", c) for c in reversed(names)),
    ]
    sessions = {e[2] for e in events if e[0] == "session" and e[1] == "files-pickle"}
    assert sessions == {str(tmp_path / "files-pickle")}
    report = result.report.read_text()
    assert "- File formats: files-pickle (one file), files-lossy (one file), files-down." in report
    assert "| contender | write | read | write vs files-pickle | read vs files-pickle |" in report


@pytest.mark.usefixtures("fresh_registries")
def test_contenders_are_chosen_by_name_across_parts(tmp_path: Path) -> None:
    _register_files_part([], tmp_path)
    config = BenchConfig(
        out_dir=tmp_path / "out",
        mode="tiny",
        studies=["files"],
        contenders=["files-lossy", "orjson"],  # orjson belongs to another part: ignored here
        progress=False,
    )
    data = json.loads(run(config, stdout=io.StringIO()).results.read_text())
    assert data["config"]["contenders"] == {"files": ["files-pickle", "files-lossy"]}
    with pytest.raises(bench.UnknownNameError):
        run(dataclasses.replace(config, contenders=["no-such-contender"]), stdout=io.StringIO())


def test_the_archive_study_checks_and_times_each_archive(tmp_path: Path) -> None:
    from amber.bench.parts.archive.contenders import ARCHIVE

    found, _ = ARCHIVE.resolve(["pickle-5", "amber", "amber-zstd"])
    result = run(
        BenchConfig(out_dir=tmp_path, mode="tiny", progress=False, studies=["archive"]),
        contenders={"archive": found},
        stdout=io.StringIO(),
    )
    study = json.loads(result.results.read_text())["studies"]["archive"]
    assert study["part"] == "archive"
    rows = {(r["workload"], r["contender"]): r for r in study["rows"]}
    assert {w for w, _ in rows} == {"W2", "mixed-5k"}
    for (workload, _), row in rows.items():
        assert row["status"] == OK and row["size_bytes"] > 0
        ops = {"write", "read", "read key"} | ({"read frame"} if workload != "W2" else set())
        assert set(row["ops"]) == ops
    assert "archive: a whole result in one file" in result.report.read_text()
    assert_plots(result.report, "archive_ratio")


@pytest.mark.parametrize(
    ("study", "ops", "ways"),
    [
        ("dask", {"move", "gather"}, {"list", "pickle frame", "amber"}),
        ("pool", {"return"}, {"list", "pickle bytes", "amber"}),
    ],
)
def test_the_dask_and_pool_studies_check_and_time_each_way(
    tmp_path: Path, study: str, ops: set[str], ways: set[str]
) -> None:
    if study == "dask":
        pytest.importorskip("distributed")
    result = run(
        BenchConfig(out_dir=tmp_path, mode="tiny", progress=False, studies=[study]),
        stdout=io.StringIO(),
    )
    data = json.loads(result.results.read_text())["studies"][study]
    assert {r["contender"] for r in data["rows"]} == ways
    for row in data["rows"]:
        assert row["status"] == OK, row
        assert set(row["ops"]) == ops
    assert f"{study}: records" in result.report.read_text()
    assert_plots(result.report, f"{study}_ratio")


# --- the pg part: drivers against a throwaway PostgreSQL, by client CPU ----------------------------


def test_pg_checks_take_each_drivers_containers_and_refuse_other_values() -> None:
    from datetime import timezone

    from amber.bench.parts.pg.check import differs
    from amber.bench.parts.pg.workloads import COLUMNS, table_rows

    rows = table_rows(50)
    assert differs(rows, rows) is None
    assert differs(rows, [(*r[:4], memoryview(r[4])) for r in rows]) is None  # psycopg2's bytea
    numpy_like = {  # a dict of columns, timestamps naive in UTC as NumPy gives them
        name: [v.astimezone(timezone.utc).replace(tzinfo=None) if j == 3 else v for v in col]
        for j, (name, col) in enumerate(zip(COLUMNS, zip(*rows, strict=True), strict=True))
    }
    assert differs(rows, numpy_like) is None
    assert differs(rows, rows[::-1]) is not None
    assert differs(rows, rows[::-1], any_order=True) is None  # a parallel scan's interleaving
    why = differs(rows, [(float(r[0]), *r[1:]) for r in rows], COLUMNS)
    assert why is not None and why.startswith("id row 0: 0.0 (float)")
    why = differs(rows, [(r[0], round(r[1], 3), *r[2:]) for r in rows], COLUMNS)
    assert why is not None and why.startswith("x row 0")


def test_an_amber_pg_function_this_build_lacks_makes_its_contender_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("psycopg")
    import amber.pg
    from amber.bench.parts.pg.contenders import PG

    monkeypatch.delattr(amber.pg, "copy_in", raising=False)
    found, skipped = PG.resolve(["amber-copy-in"])
    assert not found
    assert skipped[0].reason == (
        "unavailable (AttributeError: amber.pg has no copy_in() in this build)"
    )


def test_the_pg_studies_check_and_time_each_driver_on_one_server(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    from decimal import Decimal

    from amber.bench.parts.pg.contenders import PG
    from amber.bench.parts.pg.jobs import pg_contender, psycopg_conn, read_job
    from amber.bench.parts.pg.workloads import READ, READ_QUERY, query_params

    def rounded(conn: Any) -> list[tuple[Any, ...]]:
        return [(r[0], round(r[1], 2), *r[2:]) for r in conn.execute(READ_QUERY).fetchall()]

    wrong = pg_contender("pg-wrong", psycopg_conn, {READ: read_job(rounded, "x rounded")}, None)
    names = ["psycopg-binary", "psycopg2", "asyncpg", "amber-register", "amber-store"]
    names += ["amber-copy-in", "amber-copy-out", "amber-fetch"]  # when this build has them
    found, _ = PG.resolve(names)
    result = run(
        BenchConfig(out_dir=tmp_path, mode="tiny", progress=False, studies=["pg", "bytea"]),
        contenders={"pg": [*found, wrong]},
        stdout=io.StringIO(),
    )
    data = json.loads(result.results.read_text())
    if "server" not in data["studies"]["pg"]["params"]:
        pytest.skip("no PostgreSQL server: " + "; ".join(data["studies"]["pg"]["notes"]))
    kinds = {c.name: c.kinds or frozenset() for c in found}
    seen = set()
    expected = {"pg": {"load-1k", "read-1k", "query-27col-x3"}, "bytea": {"bytea-1", "bytea-10"}}
    for name, workloads in expected.items():
        study = data["studies"][name]
        assert study["part"] == "pg" and study["params"]["server"]["version"]
        assert {r["workload"] for r in study["rows"]} == workloads
        for row in study["rows"]:
            seen.add(row["contender"])
            if row["contender"] == "pg-wrong":
                assert row["status"] == NOT_EXACT
                assert row["note"].startswith("what was read differs: x row")
                continue
            assert row["status"] == OK, row["note"]
            (op,) = (op for op in row["ops"] if " " not in op)  # the job: load, read, ...
            assert op in kinds[row["contender"]]
            assert set(row["ops"]) == {op, f"{op} wall", f"{op} user", f"{op} sys"}
    assert seen == {*kinds, "pg-wrong"}  # every driver ran in one study or the other
    report = result.report.read_text()
    assert "pg: PostgreSQL drivers, client CPU" in report and "Server: PostgreSQL" in report
    first = (
        1,
        Decimal("0.4"),
        query_params()[2],
        2,
        Decimal("0.8"),
    )  # psycopg2 types the literals numeric
    assert f"got 3,000 x {first!r} ..." in report
    assert_plots(result.report, "pg_ratio", "bytea")


# --- what a person sees of a long run: progress, a busy machine ---------------------------------


def test_progress_names_the_study_and_workload_what_remains_and_the_time_left(
    tmp_path: Path,
) -> None:
    found, _ = codecs.CODEC.resolve(["pickle-5"])
    err = io.StringIO()  # not a terminal: one line per step
    run(
        BenchConfig(out_dir=tmp_path, mode="tiny", studies=["objects", "scaling"]),
        contenders={"codec": found},
        stdout=io.StringIO(),
        stderr=err,
    )
    lines = err.getvalue().splitlines()
    assert "\r" not in err.getvalue() and all(line.startswith("[") for line in lines)
    text = "\n".join(lines)
    assert "study 1/2 objects · workload 1/4 W1-S · building" in text
    assert "study 1/2 objects · workload 4/4 W2 · timing, round 2/2" in text
    assert "study 2/2 scaling · workload 2/2 W3-1k" in text
    left = r" · (\d+ workloads? and )?\d+ study remains?, about \d+ (s|min)( \d+ s)? left$"
    assert any(re.search(r"workload 1/4 W1-S · .*" + left, line) for line in lines)
    assert re.search(r"3 workloads and 1 study remain, about \d+ (s|min)", text)
    assert re.search(r"workload 2/2 W3-1k · .* · last workload, about \d+ s left", text)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_beats_while_a_step_is_long_and_rewrites_one_line_on_a_terminal() -> None:
    from amber.bench.engine.measure import Progress

    log = io.StringIO()
    progress = Progress(log, heartbeat=0.2)
    progress.plan([("objects", 2, 1.0), ("scaling", 5, 1.0)])
    progress.start_study("objects")
    progress.start_workload("W1-L")
    progress.update("timing, round 1/5")
    time.sleep(0.9)  # one long sample
    progress.close()
    beats = [line for line in log.getvalue().splitlines() if "round 1/5" in line]
    assert len(beats) >= 2, log.getvalue()  # the step, then at least one heartbeat
    # 1 workload after this one, this one, 5 later: 1 s each, less what this one has run
    assert re.search(r"1 workload and 1 study remain, about [67] s left$", beats[0]), beats[0]

    tty = _Terminal()
    progress = Progress(tty, heartbeat=0)
    progress.plan([("objects", 1, 1.0)])
    progress.start_study("objects")
    progress.update("a long message about checking")
    progress.update("short")
    progress.close()
    assert "\n" not in tty.getvalue() and tty.getvalue().count("\r") >= 3


def _noisy(workload: str, contender: str, op: str, samples: tuple[float, ...]) -> Row:
    median = sorted(samples)[len(samples) // 2]
    return Row(workload, contender, OK, ops={op: Timing(median, samples, 1)})


def test_a_study_whose_samples_spread_warns_that_the_machine_was_busy(tmp_path: Path) -> None:
    from amber.bench.engine.output import Console, Done, describe, write_report
    from amber.bench.engine.registry import get_study
    from amber.bench.engine.study import Report, StudyResult

    rows = [
        _noisy("W1-L", "orjson", "loads", (50.0, 100.0, 300.0)),  # spread 250%
        _noisy("W1-L", "pickle-5", "loads", (99.0, 100.0, 101.0)),
        _noisy("read-1k", "psycopg2", "read user", (1.0, 10.0, 30.0)),  # clock ticks: not judged
    ]
    assert busy_warning("objects", rows[1:2]) == ""
    pg = get_study("pg")
    warning = busy_warning("pg", rows, pg.judged)
    assert "the samples of 1 series spread more than 25% of their median" in warning
    assert "W1-L: orjson loads (250%)" in warning and "pickle-5" not in warning
    assert "psycopg2" not in warning and "quiet machine" in warning
    assert "`amber bench --studies pg --repeat 9`" in warning

    report = Report("objects: Python objects through each codec", warnings=[warning])
    done = [Done(get_study("objects"), StudyResult("objects", rows=rows), report)]
    text = write_report(tmp_path / "report.md", done, describe([]), [], []).read_text()
    assert f"> **Warning:** {warning}" in text
    out = io.StringIO()
    Console(out).report(report)
    assert f"warning: {warning}" in out.getvalue()
