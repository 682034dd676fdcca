"""amber's benchmark framework: codecs, workloads and studies that rerun each published claim.

`amber bench` (see `amber.cli`) and the scripts in benches/ both call `amber.bench.app.run`.
"""

from __future__ import annotations

from amber.bench.app import BenchConfig, BenchRun, run
from amber.bench.codecs import Codec, UnknownNameError, codec_names, register_codec, resolve
from amber.bench.study import (
    Context,
    Report,
    Study,
    StudyResult,
    get_study,
    register_study,
    study_names,
)

__all__ = [
    "BenchConfig",
    "BenchRun",
    "Codec",
    "Context",
    "Report",
    "Study",
    "StudyResult",
    "UnknownNameError",
    "codec_names",
    "get_study",
    "register_codec",
    "register_study",
    "resolve",
    "run",
    "study_names",
]
