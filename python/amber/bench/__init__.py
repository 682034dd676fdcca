"""amber's benchmark framework: each part of amber registers contenders, workloads and studies that
rerun its measured claims against the tools users pick today.

`amber.bench.engine` times and reports, knowing no part; `amber.bench.parts.<part>` holds a part's
contenders and studies. `amber bench` (see `amber.cli`) and the scripts in benches/ both call
`amber.bench.app.run`.
"""

from __future__ import annotations

from amber.bench.app import BenchConfig, BenchRun, ResultsError, rerender, run
from amber.bench.engine.contender import (
    Contender,
    Mismatch,
    Skipped,
    Trial,
    UnknownNameError,
    Workload,
)
from amber.bench.engine.registry import (
    Part,
    get_part,
    get_study,
    part_names,
    register_part,
    register_study,
    study_names,
)
from amber.bench.engine.study import Context, Report, Study, StudyResult

__all__ = [
    "BenchConfig",
    "BenchRun",
    "Contender",
    "Context",
    "Mismatch",
    "Part",
    "Report",
    "ResultsError",
    "Skipped",
    "Study",
    "StudyResult",
    "Trial",
    "UnknownNameError",
    "Workload",
    "get_part",
    "get_study",
    "part_names",
    "register_part",
    "register_study",
    "rerender",
    "run",
    "study_names",
]
