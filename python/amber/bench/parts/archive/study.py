"""Study "archive": the DataZip study's workloads through each way of keeping a result in a file.

For the nested dict W2 and the mixed analysis result (a large float DataFrame, two medium ones,
a config dict, labels, a description): the time to write the whole result, to read all of it,
to read only its small key (the config), and to read only its big frame; and the file's size.
Ratios divide by one pickle file (protocol 5) timed in the same run.
"""

from __future__ import annotations

from typing import Any

from amber.bench.engine.contender import Workload
from amber.bench.engine.measure import Row
from amber.bench.engine.registry import register_study
from amber.bench.engine.rows import Rows, contender_table, ratio_pairs
from amber.bench.engine.study import Context, Report, Study, StudyResult, describe_workloads
from amber.bench.engine.timing import Timing
from amber.bench.parts.archive import datazip
from amber.bench.parts.archive.contenders import ARCHIVE
from amber.bench.parts.archive.workloads import mixed_workload, w2_workload

OPS = ("write", "read", "read key", "read frame")


def workloads(mode: str) -> list[Workload]:
    return [w2_workload(), mixed_workload(mode)]


@register_study
class ArchiveStudy(Study):
    name = "archive"
    part = ARCHIVE.name
    description = "write, read all, read one key and read the big frame: W2 and a mixed result"
    rerun = "benches/run_archive.py"

    def run(self, ctx: Context) -> StudyResult:
        result = StudyResult(self.name)
        chosen = workloads(ctx.mode)
        result.params["workloads"] = describe_workloads(chosen)
        child: list[dict[str, Any]] = []
        for workload in chosen:
            result.rows += ctx.measure(workload, label=f"{self.name} ")
            if ctx.mode != "tiny":
                child += self._datazip(workload, ctx, result)
        result.params["datazip"] = child
        return result

    @staticmethod
    def _datazip(workload: Workload, ctx: Context, result: StudyResult) -> list[dict[str, Any]]:
        """DataZip's rows, timed in a Python 3.12+ child (see `datazip`); a note if it cannot."""
        ctx.progress.update(f"archive {workload.name}: DataZip in a child interpreter")
        try:
            rows, version = datazip.measure(
                workload.name, workload.build(), dict(workload.options), ctx.policy
            )
        except datazip.Unavailable as e:
            if not any("DataZip" in n for n in result.notes):
                result.notes.append(f"DataZip is not in this run: {e}.")
            return []
        note = (
            "DataZip installs only on Python 3.12 or newer: its rows were timed in a CPython "
            f"{version} child interpreter, beside pickle-5 timed in that same child, and their "
            "ratios divide by that pickle."
        )
        if note not in result.notes:
            result.notes.append(note)
        return [r.to_json() for r in rows]

    def report(self, result: StudyResult, ctx: Context) -> Report:
        rows = Rows(result.rows, ctx.baseline)
        names = rows.workloads()
        described = {w["name"]: w["description"] for w in result.params.get("workloads", [])}
        report = Report(
            title="archive: a whole result in one file",
            intro=(
                "Each contender writes the workload's dict to a file (amber: one key per item), "
                "then reads every key back, only the small key (`config`, or W2's first child), "
                "and only the big frame. Median time per call; ratios divide by "
                f"{ctx.baseline} in the same run (below 1 is faster). Every read was checked "
                "against the written value before timing. Reads follow the write, so the file is "
                "in the page cache: these are CPU and memory costs, not disk speed."
            ),
            notes=list(result.notes),
        )
        report.tables.append(
            ratio_pairs(
                rows,
                names,
                OPS[:3],
                title=f"Time ratio vs {ctx.baseline}, write / read / read key",
                label="archive",
            )
        )
        for name in names:
            ops = (
                OPS
                if any("read frame" in r.ops for r in rows.rows if r.workload == name)
                else OPS[:3]
            )
            title = f"{name}: {described.get(name, '')}"
            report.tables.append(contender_table(rows, name, ops, title, label="archive"))
        child = Rows([_row(r) for r in result.params.get("datazip", [])], "pickle-5")
        for name in child.workloads():
            ops = OPS if name != "W2" else OPS[:3]
            title = f"{name}, in the Python 3.12+ child: DataZip and pickle-5 timed there"
            report.tables.append(contender_table(child, name, ops, title, label="archive"))
        return report


def _row(data: dict[str, Any]) -> Row:
    """A row from its results.json form (DataZip's, from the child)."""
    ops = {
        op: Timing(t["median_ns"], tuple(t["samples_ns"]), t["loops"])
        for op, t in data["ops"].items()
    }
    return Row(
        data["workload"],
        data["contender"],
        data["status"],
        data["size_bytes"],
        ops,
        note=data["note"],
    )
