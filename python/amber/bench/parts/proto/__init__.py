"""The proto part: amber.proto against Google's protobuf runtime on seed 001's message.

`contenders` registers the part and its runtimes (Google's upb backend is the baseline; its
pure-Python backend is timed in a child process, see `child`), `workloads` defines seed 001's
message and how every field is read, and `study` is the "proto" study. The schema is in protos/.
"""

from amber.bench.parts.proto import child, contenders, study, workloads

__all__ = ["child", "contenders", "study", "workloads"]
