"""The archive part: `amber.Archive` against the ways users keep an analysis result in a file
today (one pickle, joblib), writing every key and reading all of them, one key, or the big frame.

`contenders` registers the part and its contenders (pickle protocol 5 is the baseline),
`workloads` defines the nested dict and the mixed result, and `study` is the "archive" study.
"""

from amber.bench.parts.archive import contenders, study, workloads

__all__ = ["contenders", "study", "workloads"]
