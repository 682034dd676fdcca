"""The proto part: amber.proto against Google's protobuf runtime and bufbuild's protobuf-py on a
family of message shapes.

`contenders` registers the part and its runtimes (Google's upb backend is the baseline; its
pure-Python backend is timed in a child process, see `child`), `workloads` defines the shapes
(`bench.Test` and the messages of protos/shapes.proto), their contents and how every field is
read, and `study` is the "proto" study. The schemas are in protos/.
"""

from amber.bench.parts.proto import child, contenders, study, workloads

__all__ = ["child", "contenders", "study", "workloads"]
