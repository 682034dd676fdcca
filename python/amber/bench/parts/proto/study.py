"""Study "proto": seed 001's message through each protobuf runtime.

One `bench.Test` message (766 bytes on the wire): the time to serialize it, to parse it, to parse
it and read every field, and to build it from Python values with the keyword constructor, in
Google's protobuf with its upb backend (the baseline), with its pure-Python backend (timed in a
child process, see `child`) and in amber.proto. The report sets amber's ratios beside its targets
and beside Pyrobuf's published ratios.
"""

from __future__ import annotations

import dataclasses

from amber.bench.engine.registry import register_study
from amber.bench.engine.rows import Rows, contender_table
from amber.bench.engine.study import Context, Report, Study, StudyResult, describe_workloads
from amber.bench.engine.tables import MISSING, Table, fmt_ratio
from amber.bench.parts.proto import child
from amber.bench.parts.proto.contenders import AMBER, ENV, GOOGLE_PYTHON, OPS, PROTO
from amber.bench.parts.proto.workloads import seed001_workload

# amber's targets, as ratios to upb's time (lower is faster).
# ProtoJSON: at least 10x faster than json_format.
TARGETS = {
    "serialize": 1.0,
    "parse": 1.5,
    "parse and read": 0.5,
    "build": 0.5,
    "to dict": 0.1,
    "from dict": 0.1,
    "to JSON": 0.1,
    "from JSON": 0.1,
}
# Pyrobuf's published ratios to upb in the anchors (pyrobuf no longer installs, so it is cited,
# not run). Its dict and JSON forms are its own, not ProtoJSON: 19 / 52 / 84 / 118 us against
# json_format on upb's 144 / 414 / 293 / 473 us.
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
    f"{GOOGLE_PYTHON} was timed in a child process started with {ENV}=python (Google's backend "
    "is chosen once per process, when google.protobuf is first imported), with the same checks "
    "(against amber, in that process) and the same timing policy, after the contenders of this "
    "process were timed; its samples were not taken in turn with theirs, and its ratios divide "
    "by upb's medians from this process."
)


@register_study
class ProtoStudy(Study):
    name = "proto"
    part = PROTO.name
    description = (
        "seed 001: serialize, parse, parse and read, build, ProtoJSON both ways, per runtime"
    )
    rerun = "benches/run_proto.py"

    def run(self, ctx: Context) -> StudyResult:
        result = StudyResult(self.name)
        workload = seed001_workload()
        result.params["workloads"] = describe_workloads([workload])
        result.params["ops"] = list(OPS)
        label = f"{self.name} "
        here = [c for c in ctx.contenders if c.name != GOOGLE_PYTHON]
        rows = dataclasses.replace(ctx, contenders=here).measure(workload, label=label)
        if len(here) < len(ctx.contenders):
            ctx.progress.update(f"{label}{workload.name}: {GOOGLE_PYTHON} in a child process")
            try:
                rows.append(child.measure(GOOGLE_PYTHON, workload, ctx.policy))
            except child.Unavailable as e:
                result.notes.append(f"{GOOGLE_PYTHON} was not run: {e}.")
        place = {c.name: i for i, c in enumerate(ctx.contenders)}
        result.rows = sorted(rows, key=lambda r: place.get(r.contender, len(place)))
        return result

    def report(self, result: StudyResult, ctx: Context) -> Report:
        rows = Rows(result.rows, ctx.baseline)
        described = {w["name"]: w["description"] for w in result.params.get("workloads", [])}
        report = Report(
            title="proto: one message through each protobuf runtime (seed 001)",
            intro=(
                "Seed 001's `bench.Test` (protos/test.proto and imported.proto), built from the "
                "same Python values by each runtime: serialize is `SerializeToString()` of the "
                "built message; parse is `FromString(bytes)`; parse and read is `FromString`, "
                "then every scalar read, every repeated field iterated, every nested message's "
                "fields read and the map's `items()`; build is the keyword constructor given "
                "the full contents (dicts for messages, lists of dicts for repeated messages), "
                "already made, so only the constructor is timed; to dict, from dict, to JSON "
                "and from JSON are Google's `json_format` (`MessageToDict`, `ParseDict`, "
                "`MessageToJson`, `Parse`) and amber's `to_dict`, `from_dict`, `to_json`, "
                "`from_json`, JSON indented by 2 as `MessageToJson` writes it. Both libraries' classes come "
                "from the same schema at run time: amber compiles the .proto files, and Google's "
                "are made from the descriptor set amber compiled, in a fresh pool. Median time "
                f"per call; ratios divide by {ctx.baseline} in the same run (below 1 is faster). "
                "Before timing, each runtime's reading of its own bytes was checked against the "
                "values built, and against the other library: deterministic serializations "
                "equal byte for byte, and each parses the other's bytes into the message it "
                "built."
            ),
        )
        if GOOGLE_PYTHON in rows.contenders():
            report.notes.append(CHILD_NOTE)
        for name in rows.workloads():
            title = f"{name}: {described.get(name, '')}"
            report.tables.append(contender_table(rows, name, OPS, title, label="runtime"))
            report.tables.append(self._targets(rows, name))
        pyrobuf = ", ".join(f"{op} {fmt_ratio(r)}" for op, r in PYROBUF.items())
        targets = ", ".join(f"{op} at most {r:.1f}x" for op, r in TARGETS.items())
        report.notes += [
            f"Pyrobuf's ratios are cited from the anchors' published figures, not run here "
            f"(pyrobuf no longer installs): {pyrobuf}.",
            f"amber's targets against upb: {targets}.",
            "Google's json_format is pure Python on every backend; Pyrobuf's dict and JSON "
            "forms were its own, not ProtoJSON.",
        ]
        return report

    @staticmethod
    def _targets(rows: Rows, workload: str) -> Table:
        """Per operation: amber's ratio in this run, its target, whether it is met, and
        Pyrobuf's published ratio."""
        base = rows.baseline
        table = Table(
            title=f"{workload}: {AMBER} against its targets (ratios to {base})",
            headers=["operation", f"{AMBER} vs {base}", "target", "met", "Pyrobuf (published)"],
            align="lrrlr",
        )
        for op in OPS:
            r = rows.ratio(workload, AMBER, op)
            met = MISSING if r is None else "yes" if r <= TARGETS[op] else "no"
            table.add(op, fmt_ratio(r), f"<= {fmt_ratio(TARGETS[op])}", met, fmt_ratio(PYROBUF[op]))
        return table
