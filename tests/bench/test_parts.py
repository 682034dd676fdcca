"""Parts of the benchmark: a new part registering contenders whose operations are not
dumps/loads, with a scratch directory per study; contenders chosen by name across parts; the
archive, dask and pool studies checking and timing each way."""

from __future__ import annotations

import dataclasses
import io
import json
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from amber import bench
from amber.bench import BenchConfig, Contender, Trial, Workload, run
from amber.bench.engine import registry
from amber.bench.engine.measure import (
    NOT_EXACT,
    OK,
)
from amber.bench.engine.rows import Rows, contender_table
from tests.bench.support import assert_plots, ints_to_floats

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
            return ints_to_floats(value) if lossy else value

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
