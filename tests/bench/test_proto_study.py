"""The proto study: its message shapes built, serialized and parsed by every runtime (Google's
protobuf, amber.proto, bufbuild's protobuf-py) and checked against each other; the report's row
per shape and operation; the targets table's verdicts from the ratios."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import pytest

from amber.bench import BenchConfig, run
from amber.bench.engine.measure import NOT_EXACT, OK, Row, check_contender
from amber.bench.engine.rows import Rows
from amber.bench.engine.tables import MISSING
from amber.bench.engine.timing import Timing
from amber.bench.parts.proto import contenders as proto
from amber.bench.parts.proto.study import ProtoStudy, met, target
from amber.bench.parts.proto.workloads import (
    ALL_OPS,
    BENCH_TEST,
    SHAPE_OPS,
    SHAPES,
    SHAPES_BY_NAME,
    comparable,
)

pytest.importorskip("google.protobuf")
# bufbuild's protobuf-py (Python 3.11 and newer): its checks run wherever it is installed
HAS_PROTOBUF_PY = importlib.util.find_spec("protobuf") is not None
needs_protobuf_py = pytest.mark.skipif(not HAS_PROTOBUF_PY, reason="protobuf-py not installed")
RUNTIMES = ["upb", "amber", *(["protobuf-py"] if HAS_PROTOBUF_PY else [])]
LIBRARIES = {
    "upb": lambda: proto.google_library("upb"),
    "amber": proto.amber_library,
    "protobuf-py": proto.protobuf_py_library,
}


def test_the_family_has_every_shape_the_study_promises() -> None:
    names = [s.name for s in SHAPES]
    assert names == [
        "bench.Test",
        "map of messages",
        "many strings",
        "packed numbers",
        "deep chain",
        "scalar fields",
        "records",
        "tiny message",
    ]
    assert len({s.message for s in SHAPES}) == len(SHAPES)  # each its own message type
    assert BENCH_TEST.ops == ALL_OPS
    assert all(s.ops == SHAPE_OPS for s in SHAPES if s is not BENCH_TEST)
    # contents are made by code, the same on every call
    for shape in SHAPES:
        assert shape.contents() == shape.contents()


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_each_shape_round_trips_across_every_runtime(shape: Any) -> None:
    kw = shape.contents()
    libs = {name: LIBRARIES[name]() for name in RUNTIMES}
    built = {n: lib.build(lib.classes(shape.message), kw) for n, lib in libs.items()}
    data = {n: libs[n].serialize(m) for n, m in built.items()}
    assert len(set(map(len, data.values()))) == 1  # the same size in every runtime
    for name, lib in libs.items():
        cls = lib.classes(shape.message)
        parse = lib.parser(cls)
        reading = lib.reader(shape)(parse(data[name]))
        assert comparable(reading) == comparable(shape.expect(kw)), name
        for other, other_lib in libs.items():
            assert parse(data[other]) == built[name], f"{name} parsing {other}'s bytes"
            if other != name:  # protobuf-py has no deterministic mode to compare with itself
                other_cls = other_lib.classes(shape.message)
                assert proto.same_bytes(
                    lib, cls, built[name], other_lib, other_cls, built[other]
                ), f"{name}'s bytes and {other}'s"
    assert kw == shape.contents()  # no runtime changed the values it was given


def test_shape_sizes_are_those_the_study_describes() -> None:
    lib = proto.google_library("upb")
    size = {
        s.name: len(lib.serialize(lib.build(lib.classes(s.message), s.contents()))) for s in SHAPES
    }
    assert size["bench.Test"] == 766
    assert 3_000 <= size["map of messages"] <= 5_000  # "about 4 KB"
    assert size["tiny message"] < 20
    kw = SHAPES_BY_NAME["many strings"].contents()
    assert len(kw["words"]) == 120 and len(kw["attributes"]) == 40
    kw = SHAPES_BY_NAME["records"].contents()
    assert len(kw["records"]) == 150 and len(kw["by_id"]) == 60
    assert len(SHAPES_BY_NAME["scalar fields"].contents()) == 45
    chain = SHAPES_BY_NAME["deep chain"]
    assert len(chain.expect(chain.contents())) == 40
    assert sum(map(len, SHAPES_BY_NAME["packed numbers"].contents().values())) >= 3_000


@needs_protobuf_py
def test_protobuf_py_is_checked_on_the_oneof_and_the_json_of_bench_test() -> None:
    contender = proto.PROTO.resolve(["protobuf-py"])[0][0]
    checked = check_contender(contender, BENCH_TEST.workload(), BENCH_TEST.build())
    assert checked.row.status == OK, checked.row.note
    assert set(checked.trial.pending) == set(ALL_OPS)  # type: ignore[union-attr]


def test_a_runtime_that_loses_a_field_is_not_timed() -> None:
    shape = SHAPES_BY_NAME["records"]
    amber = proto.amber_library()

    def drops_the_map(cls: Any, kw: dict[str, Any]) -> Any:
        return cls(**{k: v for k, v in kw.items() if k != "by_id"})

    wrong = proto.Library(
        "drops-the-map",
        amber.classes,
        drops_the_map,
        amber.serialize,
        amber.deterministic,
        amber.parser,
        amber.json,
    )
    peers, missing = proto.peers_of("amber")
    contender = proto.runtime(wrong, peers, missing, "amber", "")
    checked = check_contender(contender, shape.workload(), shape.build())
    assert checked.row.status == NOT_EXACT
    assert checked.row.note.startswith("reading every field of the parsed message")
    assert not checked.pending


def test_the_proto_study_reports_every_shape_and_operation(tmp_path: Path) -> None:
    found, skipped = proto.PROTO.resolve(["upb", "google-python", *RUNTIMES[1:]])
    assert not skipped, skipped
    result = run(
        BenchConfig(out_dir=tmp_path, mode="tiny", progress=False, studies=["proto"]),
        contenders={"proto": found},
        stdout=io.StringIO(),
    )
    study = json.loads(result.results.read_text())["studies"]["proto"]
    assert study["part"] == "proto"
    rows = {(r["workload"], r["contender"]): r for r in study["rows"]}
    for shape in SHAPES:
        here = list(RUNTIMES)
        if shape is BENCH_TEST:
            here.insert(1, "google-python")
        assert [c for w, c in rows if w == shape.name] == here
        for name in here:
            row = rows[shape.name, name]
            assert row["status"] == OK, (shape.name, name, row["note"])
            order = ["build", *SHAPE_OPS, "to dict", "from dict", "to JSON", "from JSON"]
            assert list(row["ops"]) == (order if shape is BENCH_TEST else list(SHAPE_OPS))
    assert rows["bench.Test", "upb"]["size_bytes"] == 766
    report = result.report.read_text()
    assert "proto: message shapes through each protobuf runtime" in report
    assert "in a child process started with PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION" in report
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "proto_ratio.png").exists() and "(proto_ratio.png)" in report
    for op in SHAPE_OPS:
        table = _table(report, f"### {op}: time per call, every shape")
        assert [r[0] for r in table] == [s.name for s in SHAPES]
    targets = _table(report, "### amber against its targets (ratios to upb)")
    assert [(r[0], r[1]) for r in targets] == [(s.name, op) for s in SHAPES for op in s.ops]
    for shape_name, op, ratio, goal, verdict in targets:
        # the verdict follows the unrounded ratio of the medians in results.json
        r = (
            rows[shape_name, "amber"]["ops"][op]["median_ns"]
            / rows[shape_name, "upb"]["ops"][op]["median_ns"]
        )
        assert ratio == f"{r:.2f}x" or r >= 100 or r < 0.01
        assert goal == f"<= {target(shape_name, op):.2f}x"
        assert verdict == ("yes" if r <= target(shape_name, op) else "no")
    ratios = _table(report, "### ratios to upb, every shape (below 1 is faster)")
    assert len(ratios) == len(SHAPES) and all(len(r) == 1 + 3 * (len(RUNTIMES) - 1) for r in ratios)


def _table(report: str, title: str) -> list[list[str]]:
    """The body rows of the markdown table under `title`."""
    lines = report[report.index(title) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|---"))
    out = []
    for line in lines[start + 1 :]:
        if not line.startswith("|"):
            break
        out.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return out


def _row(workload: str, contender: str, times: dict[str, float]) -> Row:
    ops = {op: Timing(ns, (ns,), 1) for op, ns in times.items()}
    return Row(workload, contender, OK, 10, ops)


def test_the_targets_table_says_met_from_the_ratios() -> None:
    rows = Rows(
        [
            _row("tiny message", "upb", {"serialize": 100, "parse": 100, "parse and read": 100}),
            _row("tiny message", "amber", {"serialize": 100, "parse": 101, "parse and read": 80}),
            _row("bench.Test", "upb", {"serialize": 100, "parse": 100, "parse and read": 100}),
            _row("bench.Test", "amber", {"serialize": 90, "parse": 140, "parse and read": 60}),
        ],
        "upb",
    )
    table = ProtoStudy._targets(rows, ["tiny message", "bench.Test"])
    verdicts = {(r[0], r[1]): (r[2], r[4]) for r in table.rows}
    assert verdicts["tiny message", "serialize"] == ("1.00x", "yes")  # at the target is met
    assert verdicts["tiny message", "parse"] == ("1.01x", "no")
    assert verdicts["tiny message", "parse and read"] == ("0.80x", "yes")
    assert verdicts["bench.Test", "serialize"] == ("0.90x", "yes")
    assert verdicts["bench.Test", "parse"] == ("1.40x", "no")  # tightened from 1.5x to 1.0x
    # 0.6x would meet the other shapes' 0.8x; bench.Test keeps its stricter 0.5x
    assert verdicts["bench.Test", "parse and read"] == ("0.60x", "no")
    assert verdicts["bench.Test", "build"] == (MISSING, MISSING)  # not run: no verdict
    assert met(None, 1.0) == MISSING and met(0.5, 0.5) == "yes" and met(0.51, 0.5) == "no"
