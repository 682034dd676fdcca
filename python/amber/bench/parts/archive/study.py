"""Study "archive": the DataZip study's workloads through each way of keeping a result in a file.

For the nested dict W2 and the mixed analysis result (a large float DataFrame, two medium ones,
a config dict, labels, a description): the time to write the whole result, to read all of it,
to read only its small key (the config), and to read only its big frame; and the file's size.
Ratios divide by one pickle file (protocol 5) timed in the same run.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from amber.bench.engine.contender import Workload
from amber.bench.engine.measure import Row
from amber.bench.engine.registry import register_study
from amber.bench.engine.rows import Rows, contender_table, ratio_figure, ratio_pairs
from amber.bench.engine.study import Context, Mode, Report, Study, StudyResult, describe_workloads
from amber.bench.engine.tables import Table
from amber.bench.engine.timing import Timing
from amber.bench.parts.archive import datazip
from amber.bench.parts.archive.contenders import ARCHIVE
from amber.bench.parts.archive.workloads import FRAME, mixed_workload, w2_workload

OPS = ("write", "read", "read key", "read frame")


def workloads(mode: str) -> list[Workload]:
    return [w2_workload(), mixed_workload(mode)]


@register_study
class ArchiveStudy(Study):
    name = "archive"
    part = ARCHIVE.name
    description = "write, read all, read one key and read the big frame: W2 and a mixed result"
    rerun = "benches/run_archive.py"

    def workload_count(self, mode: Mode) -> int:
        return len(workloads(mode))

    def run(self, ctx: Context) -> StudyResult:
        result = StudyResult(self.name)
        chosen = workloads(ctx.mode)
        result.params["workloads"] = describe_workloads(chosen)
        child: list[dict[str, Any]] = []
        hashes: dict[str, Any] = {}
        for workload in chosen:
            result.rows += ctx.measure(workload)
            frame = dict(workload.options).get(FRAME)
            if isinstance(frame, str):
                ctx.progress.update("BLAKE3 over the big frame's entry")
                hashes[workload.name] = _hash_rate(workload.build()[frame], ctx.policy.repeats)
            if ctx.mode != "tiny":
                child += self._datazip(workload, ctx, result)
        result.params["datazip"] = child
        result.params["verify"] = hashes
        return result

    @staticmethod
    def _datazip(workload: Workload, ctx: Context, result: StudyResult) -> list[dict[str, Any]]:
        """DataZip's rows, timed in a Python 3.12+ child (see `datazip`); a note if it cannot."""
        ctx.progress.update("DataZip in a child interpreter")
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
        verify = _verify_table(rows, result.params.get("verify", {}))
        if verify is not None:
            report.tables.append(verify)
        child = Rows([_row(r) for r in result.params.get("datazip", [])], "pickle-5")
        for name in child.workloads():
            ops = OPS if name != "W2" else OPS[:3]
            title = f"{name}, in the Python 3.12+ child: DataZip and pickle-5 timed there"
            report.tables.append(contender_table(child, name, ops, title, label="archive"))
        report.plots += ratio_figure(
            rows,
            OPS,
            ctx,
            "archive_ratio",
            f"archive: each file format's time relative to {ctx.baseline}",
        )
        return report


def _hash_rate(frame: Any, repeats: int) -> dict[str, Any]:
    """The size of `frame`'s entry in an archive, and the median time BLAKE3 takes over it as a
    verified read hashes it (on every CPU the process may use)."""
    from amber import Archive, _native

    with tempfile.TemporaryDirectory(prefix="amber-bench-hash-") as d:
        path = Path(d) / "frame.zip"
        with Archive(path, "w") as a:
            a["frame"] = frame
        with Archive(path) as a:
            name = next(iter(a.info("frame")["entries"]))
            content = bytes(a._content(name, check=False))
    samples = []
    for _ in range(max(3, repeats)):
        start = time.perf_counter_ns()
        _native.archive_blake3(content)
        samples.append(time.perf_counter_ns() - start)
    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"bytes": len(content), "hash_ns": statistics.median(samples), "threads": threads}


def _verify_table(rows: Rows, hashes: dict[str, Any]) -> Table | None:
    """Reading the big frame with and without the BLAKE3 check, side by side."""
    table = Table(
        "Verified reads: the big frame with and without its BLAKE3 check",
        [
            "workload",
            "entry",
            "verify=False",
            "verify=True (default)",
            "check costs",
            "check GB/s",
            "BLAKE3 alone",
        ],
        caption="`verify=True`, the default, hashes the whole entry as it is read (on every "
        "CPU, without the GIL) and compares it with the manifest; `verify=False` maps it "
        "unchecked. 'check GB/s' is the entry's size over the difference of the two medians; "
        "'BLAKE3 alone' times the hash over the same bytes in memory, on the threads shown.",
    )
    for name, h in hashes.items():
        plain = rows.median(name, "amber", "read frame")
        checked = rows.median(name, "amber-verified", "read frame")
        if plain is None or checked is None:
            continue
        size = h["bytes"]
        extra = checked - plain
        rate = f"{size / extra:.1f}" if extra > 0 else "-"
        table.add(
            name,
            f"{size / 1e6:.0f} MB",
            f"{plain / 1e6:.2f} ms",
            f"{checked / 1e6:.2f} ms",
            f"{extra / 1e6:.2f} ms",
            rate,
            f"{size / h['hash_ns']:.1f} GB/s on {h['threads']}",
        )
    return table if table.rows else None


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
