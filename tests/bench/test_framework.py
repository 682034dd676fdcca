"""The benchmark framework in its tiny mode: files written, wrong contenders caught, copies named,
samples taken in turn, and the command line's study names."""

from __future__ import annotations

import dataclasses
import io
import json
import pickle
import random
import re
from pathlib import Path
from typing import Any

import pytest

from amber.bench import BenchConfig, Contender, Workload, run
from amber.bench.engine.exact import exactly_equal
from amber.bench.engine.measure import (
    CANNOT_REPRESENT,
    FAILED,
    NOT_EXACT,
    OK,
    run_contender,
)
from amber.bench.engine.study import POLICIES
from amber.bench.engine.timing import Series, sample_in_turn
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
from tests.bench.support import assert_plots, ints_to_floats


def _pickle5(obj: Any) -> bytes:
    return pickle.dumps(obj, 5)


WRONG = codecs.codec("wrong", _pickle5, lambda buf: ints_to_floats(pickle.loads(buf)), ALL_KINDS)


def _bytes_only(buf: Any) -> Any:
    if not isinstance(buf, bytes):
        raise TypeError("bytes required")
    return pickle.loads(buf)


BYTES_ONLY = codecs.codec("bytes-only", _pickle5, _bytes_only, ALL_KINDS)
TINY = POLICIES["tiny"]


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
    docs = Path(__file__).parents[2] / "docs" / "benchmarks.md"
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
