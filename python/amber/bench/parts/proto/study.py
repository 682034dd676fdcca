"""Study "proto": a family of message shapes through each protobuf runtime.

Each shape of `workloads.SHAPES` is its own message type and workload: the benchmark's
`bench.Test` (766 bytes on the wire), maps of messages and of scalars and bytes, many strings,
packed numbers, a deep chain of sub-messages, many scalar fields, records in a repeated message
field and a map, a tiny message. On each, the time to serialize the message, to parse it, and
to parse it and read every field, in Google's protobuf with its upb backend (the baseline), in
amber.proto and in bufbuild's protobuf-py; on `bench.Test` also the time to build it from Python
values and ProtoJSON both ways, and Google's pure-Python backend (timed in a child process, see
`child`). The report sets amber's ratios beside its targets for every shape and operation.
"""

from __future__ import annotations

import dataclasses

from amber.bench.engine.measure import OK, Row
from amber.bench.engine.registry import register_study
from amber.bench.engine.rows import NOISY, Rows, contender_table, ratio_figure
from amber.bench.engine.study import Context, Mode, Report, Study, StudyResult, describe_workloads
from amber.bench.engine.tables import MISSING, Table, fmt_ratio, fmt_size, fmt_time
from amber.bench.parts.proto import child
from amber.bench.parts.proto.contenders import AMBER, ENV, GOOGLE_PYTHON, OPS, PROTO
from amber.bench.parts.proto.workloads import BENCH_TEST, SHAPE_OPS, SHAPES, SHAPES_BY_NAME

# amber's targets, as ratios to upb's time (lower is faster), on every shape.
TARGETS = {"serialize": 1.0, "parse": 1.0, "parse and read": 0.8}
# On bench.Test, where they are stricter, and for the operations only it runs.
# ProtoJSON: at least 10x faster than json_format.
BENCH_TEST_TARGETS = {
    "serialize": 1.0,
    "parse": 1.0,
    "parse and read": 0.5,
    "build": 0.5,
    "to dict": 0.1,
    "from dict": 0.1,
    "to JSON": 0.1,
    "from JSON": 0.1,
}
# Pyrobuf's published ratios to upb on bench.Test in the anchors (pyrobuf no longer installs,
# so it is cited, not run). Its dict and JSON forms are its own, not ProtoJSON: 19 / 52 / 84 /
# 118 us against json_format on upb's 144 / 414 / 293 / 473 us.
PYROBUF = {
    "serialize": 8.0,
    "parse": 4.9,
    "parse and read": 1.06,
    "build": 0.9,
    "to dict": 19 / 144,
    "from dict": 52 / 414,
    "to JSON": 84 / 293,
    "from JSON": 118 / 473,
}

CHILD_NOTE = (
    f"{GOOGLE_PYTHON} was timed on {BENCH_TEST.name} only, in a child process started with "
    f"{ENV}=python (Google's backend is chosen once per process, when google.protobuf is first "
    "imported), with the same checks (against amber and protobuf-py, in that process) and the "
    "same timing policy, after the contenders of this process were timed; its samples were not "
    "taken in turn with theirs, and its ratios divide by upb's medians from this process."
)


def target(shape: str, op: str) -> float:
    """amber's target for `op` on `shape`, as a ratio to upb's time."""
    return (BENCH_TEST_TARGETS if shape == BENCH_TEST.name else TARGETS)[op]


def met(ratio: float | None, goal: float) -> str:
    """ "yes" when the ratio is at or under the target, "no" when over, a dash when not run."""
    return MISSING if ratio is None else "yes" if ratio <= goal else "no"


@register_study
class ProtoStudy(Study):
    name = "proto"
    part = PROTO.name
    description = (
        "message shapes: serialize, parse, parse and read per runtime; on bench.Test also "
        "build and ProtoJSON both ways"
    )
    rerun = "benches/run_proto.py"

    def workload_count(self, mode: Mode) -> int:
        return len(SHAPES)

    def run(self, ctx: Context) -> StudyResult:
        result = StudyResult(self.name)
        workloads = [shape.workload() for shape in SHAPES]
        result.params["workloads"] = describe_workloads(workloads)
        result.params["ops"] = {shape.name: list(shape.ops) for shape in SHAPES}
        here = [c for c in ctx.contenders if c.name != GOOGLE_PYTHON]
        in_child = len(here) < len(ctx.contenders)
        rows: list[Row] = []
        for workload in workloads:
            rows += dataclasses.replace(ctx, contenders=here).measure(workload)
            if in_child and workload.name == BENCH_TEST.name:
                ctx.progress.update(f"{GOOGLE_PYTHON} in a child process")
                try:
                    rows.append(child.measure(GOOGLE_PYTHON, workload, ctx.policy))
                except child.Unavailable as e:
                    result.notes.append(f"{GOOGLE_PYTHON} was not run: {e}.")
        place = {c.name: i for i, c in enumerate(ctx.contenders)}
        shape_place = {w.name: i for i, w in enumerate(workloads)}
        result.rows = sorted(
            rows,
            key=lambda r: (
                shape_place.get(r.workload, len(shape_place)),
                place.get(r.contender, len(place)),
            ),
        )
        return result

    def report(self, result: StudyResult, ctx: Context) -> Report:
        rows = Rows(result.rows, ctx.baseline)
        described = {w["name"]: w["description"] for w in result.params.get("workloads", [])}
        shapes = rows.workloads()
        report = Report(
            title="proto: message shapes through each protobuf runtime",
            intro=(
                "Each shape is its own message type (protos/test.proto with imported.proto for "
                "`bench.Test`, protos/shapes.proto for the others), filled by code with the "
                "same values for every runtime: serialize is `SerializeToString()` of the "
                "built message (protobuf-py: `to_binary()`); parse is `FromString(bytes)` "
                "(protobuf-py: `from_binary`); parse and read is the parse, then every scalar "
                "read, every repeated field iterated, every sub-message's fields read and "
                "every map entry walked. On `bench.Test` also: build is the keyword "
                "constructor given the full contents (dicts for messages, lists of dicts for "
                "repeated messages; protobuf-py, whose constructor takes message instances and "
                "a oneof as one `Oneof`, builds its sub-messages first), already made, so only "
                "the building is timed; to dict, from dict, to JSON and from JSON are Google's "
                "`json_format` (`MessageToDict`, `ParseDict`, `MessageToJson`, `Parse`), "
                "amber's `to_dict`, `from_dict`, `to_json`, `from_json` (JSON indented by 2 "
                "as `MessageToJson` writes it) and protobuf-py's `message_to_json_value`, "
                "`message_from_json_value`, `to_json`, `from_json` (compact JSON: it has no "
                "indent option). Every library's classes come from the same schema at run "
                "time: amber compiles the .proto files; Google's are made from the descriptor "
                "set amber compiled, in a fresh pool, and protobuf-py's from the same set "
                "through its registry. Median time per call; ratios divide by "
                f"{ctx.baseline} in the same run (below 1 is faster). Before timing, each "
                "runtime's reading of its own bytes was checked against the values built, "
                "and against every other library: deterministic serializations equal byte "
                "for byte, and each parses the others' bytes into the message it built."
            ),
        )
        if GOOGLE_PYTHON in rows.contenders():
            report.notes.append(CHILD_NOTE)
        for op in SHAPE_OPS:
            report.tables.append(self._op_table(rows, shapes, op))
        report.tables.append(self._ratios(rows, shapes))
        if BENCH_TEST.name in shapes:
            report.tables.append(
                contender_table(
                    rows,
                    BENCH_TEST.name,
                    OPS,
                    f"{BENCH_TEST.name}, every operation: {described.get(BENCH_TEST.name, '')}",
                    label="runtime",
                )
            )
        report.tables.append(self._targets(rows, shapes))
        report.plots += ratio_figure(
            rows,
            SHAPE_OPS,
            ctx,
            "proto_ratio",
            f"proto: each runtime's time relative to {ctx.baseline}, by message shape",
        )
        report.notes += self._row_notes(rows)
        report.notes += [
            "The shapes: "
            + "; ".join(f"{name}: {described.get(name, '')}" for name in shapes)
            + ".",
            f"amber's targets against {ctx.baseline} on every shape: "
            + ", ".join(f"{op} at most {r:.1f}x" for op, r in TARGETS.items())
            + f"; on {BENCH_TEST.name}: "
            + ", ".join(f"{op} at most {r:.1f}x" for op, r in BENCH_TEST_TARGETS.items())
            + ".",
            f"Pyrobuf's ratios on {BENCH_TEST.name} are cited from the anchors' published "
            "figures, not run here (pyrobuf no longer installs): "
            + ", ".join(f"{op} {fmt_ratio(r)}" for op, r in PYROBUF.items())
            + ". Google's json_format is pure Python on every backend; Pyrobuf's dict and "
            "JSON forms were its own, not ProtoJSON.",
        ]
        return report

    @staticmethod
    def _op_table(rows: Rows, shapes: list[str], op: str) -> Table:
        """One operation: per shape, its size on the wire, each runtime's median time and its
        ratio to the baseline."""
        base = rows.baseline
        names = [c for c in rows.contenders() if any(rows.median(w, c, op) for w in shapes)]
        others = [c for c in names if c != base]
        table = Table(
            title=f"{op}: time per call, every shape",
            headers=["shape", "size", *names, *(f"{c} vs {base}" for c in others)],
        )
        for shape in shapes:
            row = rows.get(shape, base) or next(
                (r for c in names if (r := rows.get(shape, c)) is not None), None
            )
            table.add(
                shape,
                fmt_size(None if row is None else row.size),
                *(fmt_time(rows.median(shape, c, op)) for c in names),
                *(fmt_ratio(rows.ratio(shape, c, op)) for c in others),
            )
        return table

    @staticmethod
    def _ratios(rows: Rows, shapes: list[str]) -> Table:
        """Per shape, every runtime's ratios to the baseline on the three operations every
        shape runs."""
        base = rows.baseline
        others = [
            c
            for c in rows.contenders()
            if c not in (base, GOOGLE_PYTHON)
            and any(rows.median(w, c, op) for w in shapes for op in SHAPE_OPS)
        ]
        table = Table(
            title=f"ratios to {base}, every shape (below 1 is faster)",
            headers=["shape", *(f"{c} {op}" for c in others for op in SHAPE_OPS)],
        )
        for shape in shapes:
            table.add(
                shape, *(fmt_ratio(rows.ratio(shape, c, op)) for c in others for op in SHAPE_OPS)
            )
        return table

    @staticmethod
    def _targets(rows: Rows, shapes: list[str]) -> Table:
        """Per shape and operation: amber's ratio in this run, its target, whether it is met."""
        base = rows.baseline
        table = Table(
            title=f"{AMBER} against its targets (ratios to {base})",
            headers=["shape", "operation", f"{AMBER} vs {base}", "target", "met"],
            align="llrrl",
        )
        for shape in shapes:
            known = SHAPES_BY_NAME.get(shape)
            for op in SHAPE_OPS if known is None else known.ops:
                r = rows.ratio(shape, AMBER, op)
                goal = target(shape, op)
                table.add(shape, op, fmt_ratio(r), f"<= {fmt_ratio(goal)}", met(r, goal))
        return table

    @staticmethod
    def _row_notes(rows: Rows) -> list[str]:
        """What the tables cannot say: rows that were not timed and why, what a row's check
        left unchecked (said once per runtime), and the series whose samples disagree."""
        notes: list[str] = []
        noisy: list[str] = []
        for row in rows.rows:
            if row.status != OK:
                notes.append(f"{row.contender} on {row.workload}: {row.status} ({row.note}).")
            elif row.note and row.workload == BENCH_TEST.name:
                notes.append(f"{row.contender}: {row.note}.")
            noisy += [
                f"{row.workload} {row.contender} {op} {t.spread:.0%}"
                for op, t in row.ops.items()
                if op in SHAPE_OPS and t.spread > NOISY
            ]
        if noisy:
            notes.append(
                f"Series whose samples spread more than {NOISY:.0%} of their median (the "
                "median is less certain): " + ", ".join(noisy) + "."
            )
        return notes
