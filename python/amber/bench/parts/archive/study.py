"""Study "archive": the DataZip study's workloads through each way of keeping a result in a file.

For the nested dict W2 and the mixed analysis result (a large float DataFrame, two medium ones,
a config dict, labels, a description): the time to write the whole result, to read all of it,
to read only its small key (the config), and to read only its big frame; and the file's size.
Ratios divide by one pickle file (protocol 5) timed in the same run.
"""

from __future__ import annotations

from amber.bench.engine.contender import Workload
from amber.bench.engine.registry import register_study
from amber.bench.engine.rows import Rows, contender_table, ratio_pairs
from amber.bench.engine.study import Context, Report, Study, StudyResult, describe_workloads
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
        result.notes.append(
            "DataZip is not in this run: it installs only on Python 3.12 or newer, and its series "
            "in a child interpreter is not built yet."
        )
        for workload in chosen:
            result.rows += ctx.measure(workload, label=f"{self.name} ")
        return result

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
        return report
