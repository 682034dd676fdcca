"""amber.proto as the testee of Google's protobuf conformance suite.

Google's `conformance_test_runner` starts this program and speaks to it over
stdin/stdout: each request is a 4-byte little-endian length and a serialized
`conformance.ConformanceRequest`; each reply is the same framing around a
`conformance.ConformanceResponse`. Both messages, and the test messages, come from
amber.proto itself, loaded from the copies of protobuf's .proto files in
crates/amber-core/tests/data/proto/conformance/.

Binary, JSON and text-format input and output do the real work (parse, then
write). JSPB is Google-internal; open-source testees skip it.

    conformance_test_runner [options] .venv/bin/python scripts/conformance/testee.py

`make conformance` runs it with the failure lists beside this file. Set
AMBER_CONFORMANCE_VERBOSE=1 to log every request and response to stderr.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path
from typing import Any, BinaryIO

import amber
import amber.proto

ROOT = Path(__file__).resolve().parents[2]
PROTOS = ROOT / "crates" / "amber-core" / "tests" / "data" / "proto" / "conformance"
FILES = (
    "conformance.proto",
    "test_messages_proto2.proto",
    "test_messages_proto3.proto",
    "test_messages_edition2023.proto",
    "test_messages_proto2_editions.proto",
    "test_messages_proto3_editions.proto",
)
# The message types the runner names in ConformanceRequest.message_type.
TEST_TYPES = (
    "protobuf_test_messages.proto2.TestAllTypesProto2",
    "protobuf_test_messages.proto3.TestAllTypesProto3",
    "protobuf_test_messages.editions.TestAllTypesEdition2023",
    "protobuf_test_messages.editions.proto2.TestAllTypesProto2",
    "protobuf_test_messages.editions.proto3.TestAllTypesProto3",
)

NS = amber.proto.load(*FILES, include=[PROTOS])
TYPES: dict[str, Any] = NS.types
Request = TYPES["conformance.ConformanceRequest"]
Response = TYPES["conformance.ConformanceResponse"]
FailureSet = TYPES["conformance.FailureSet"]
WireFormat = NS.conformance.WireFormat
TestCategory = NS.conformance.TestCategory

NOT_YET = {
    "jspb_payload": "JSPB is Google-internal; open-source testees skip it",
}
NOT_YET_OUT = {
    WireFormat.JSPB: "JSPB is Google-internal; open-source testees skip it",
}
OUTPUTS = (WireFormat.PROTOBUF, WireFormat.TEXT_FORMAT, WireFormat.JSON)


class ProtocolError(Exception):
    """The runner sent something a testee must not get; ends the run."""


def run_test(request: Any) -> Any:
    response = Response()
    if request.message_type == "conformance.FailureSet":
        # Newer runners ask the testee for its own failure list first; ours are files.
        response.protobuf_payload = FailureSet().SerializeToString()
        return response

    payload = request.WhichOneof("payload")
    if payload is None:
        raise ProtocolError("request has no payload")
    if payload in NOT_YET:
        response.skipped = NOT_YET[payload]
        return response
    fmt = request.requested_output_format
    if fmt in NOT_YET_OUT:
        response.skipped = NOT_YET_OUT[fmt]
        return response
    if fmt not in OUTPUTS:
        raise ProtocolError(f"unknown requested_output_format {fmt}")
    cls = TYPES.get(request.message_type) if request.message_type in TEST_TYPES else None
    if cls is None:
        raise ProtocolError(f"unknown message_type {request.message_type!r}")

    try:
        if payload == "text_payload":
            message = cls.from_text(request.text_payload)
        elif payload == "json_payload":
            ignore = request.test_category == TestCategory.JSON_IGNORE_UNKNOWN_PARSING_TEST
            message = cls.from_json(request.json_payload, ignore_unknown_fields=ignore)
        else:
            message = cls.FromString(request.protobuf_payload)
    except amber.proto.DecodeError as e:
        response.parse_error = str(e) or type(e).__name__
        return response
    except Exception as e:  # a bug, not a refusal: the runner reports it as such
        response.runtime_error = f"parse raised {type(e).__name__}: {e}"
        return response
    try:
        if fmt == WireFormat.TEXT_FORMAT:
            response.text_payload = message.to_text(
                print_unknown_fields=request.print_unknown_fields
            )
        elif fmt == WireFormat.JSON:
            response.json_payload = message.to_json(indent=None)
        else:
            response.protobuf_payload = message.SerializeToString()
    except amber.EncodeError as e:
        response.serialize_error = str(e) or type(e).__name__
    except Exception as e:
        response.runtime_error = f"serialize raised {type(e).__name__}: {e}"
    return response


def read_exact(stream: BinaryIO, n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise ProtocolError(f"truncated frame: wanted {n} bytes, got {len(data)}")
    return data


def main() -> int:
    verbose = os.environ.get("AMBER_CONFORMANCE_VERBOSE", "") not in ("", "0")
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    count = 0
    while True:
        head = stdin.read(4)
        if not head:
            break
        if len(head) != 4:
            raise ProtocolError("truncated length prefix")
        (length,) = struct.unpack("<I", head)
        request = Request.FromString(read_exact(stdin, length))
        response = run_test(request)
        out = response.SerializeToString()
        stdout.write(struct.pack("<I", len(out)))
        stdout.write(out)
        stdout.flush()
        count += 1
        if verbose:
            print(f"testee: request={request!r} response={response!r}", file=sys.stderr)
    print(f"testee: EOF after {count} tests", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
