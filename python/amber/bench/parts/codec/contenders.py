"""The codec part's contenders: amber and the codecs users pick today, each a `dumps(obj) -> bytes`
and `loads(buffer) -> obj` pair, checked by a round trip before it is timed.

Each is registered as a factory that imports its library when called, so a missing library (or amber
before its native module is built) is reported as skipped instead of failing the run.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable
from typing import Any

from amber.bench.engine.contender import Contender, Trial
from amber.bench.engine.registry import Part, register_part
from amber.bench.parts.codec.workloads import ALL_KINDS, BYTES, JSON, embed

Buffer = bytes | memoryview
Dumps = Callable[[Any], bytes]
Loads = Callable[[Buffer], Any]

CODEC = register_part(
    Part(
        "codec",
        baseline="pickle-5",
        label="Codecs",
        description="amber.dumps/loads against the object codecs users pick today",
    )
)

# How loads is fed (a row's `input`). A workload whose option LOADS_INPUT is INPUT_MEMORYVIEW has
# loads read a read-only slice of a larger buffer; a codec whose loads refuses it gets a copy.
LOADS_INPUT = "loads_input"
INPUT_BYTES = "bytes"
INPUT_MEMORYVIEW = "memoryview"
INPUT_COPY = "bytes(mv) copy"
SAID = {INPUT_COPY: "loads given bytes(mv): copy timed"}  # the note tables give such a row


def codec(
    name: str,
    dumps: Dumps,
    loads: Loads,
    kinds: frozenset[str] = ALL_KINDS,
    package: str | None = None,
    note: str = "",
) -> Contender:
    """A codec contender: operations "dumps" and "loads", checked by `loads(dumps(x))` being `x`.

    `kinds` names the value kinds (see `amber.bench.parts.codec.workloads`) the codec keeps exactly;
    a workload needing another kind is reported "cannot represent" without running. A codec that
    claims a kind but fails the round trip is reported "not exact" for that workload.
    """

    def prepare(t: Trial) -> None:
        payload = t.run("dumps", dumps, t.value)
        t.size = len(payload)
        if t.options.get(LOADS_INPUT) == INPUT_MEMORYVIEW:
            back = _loads_view(t, loads, embed(payload))
        else:
            t.input = INPUT_BYTES
            back = t.run("loads", loads, payload)
        t.expect_exact(back, "loads(dumps(x)) differs from x")

    return Contender(name, prepare, kinds=kinds, package=package, note=note)


def _loads_view(t: Trial, loads: Loads, view: memoryview) -> Any:
    """loads from the memoryview; a codec that rejects it is given `bytes(view)`, the copy on the
    clock and named in the row."""
    t.input = INPUT_MEMORYVIEW
    try:
        return t.run("loads", loads, view)
    except Exception as exc:
        t.input = INPUT_COPY
        t.note = f"loads(memoryview) raised {type(exc).__name__}"

    def copy_then_loads(buf: Buffer) -> Any:
        return loads(bytes(buf))

    return t.run("loads", copy_then_loads, view)


# --- amber -----------------------------------------------------------------------------------------


def _amber_functions() -> tuple[Callable[..., bytes], Callable[..., Any]]:
    try:
        from amber import dumps, loads
    except ImportError as exc:
        raise ImportError(f"amber codec not importable: {exc}") from exc
    dumps(1)  # the Python package may import while the native module is still missing
    return dumps, loads


@CODEC.contender("amber")
def _amber() -> Contender:
    dumps, loads = _amber_functions()
    return codec("amber", dumps, loads, ALL_KINDS, "amber")


@CODEC.contender("amber-identity")
def _amber_identity() -> Contender:
    dumps, loads = _amber_functions()
    dumps([1], identity=True)

    def dumps_identity(obj: Any) -> bytes:
        return dumps(obj, identity=True)

    return codec(
        "amber-identity", dumps_identity, loads, ALL_KINDS, "amber", "dumps(obj, identity=True)"
    )


# --- pickle ----------------------------------------------------------------------------------------


@CODEC.contender("pickle-5")
def _pickle5() -> Contender:
    def dumps(obj: Any) -> bytes:
        return pickle.dumps(obj, 5)

    return codec("pickle-5", dumps, pickle.loads, ALL_KINDS, None, "protocol 5")


@CODEC.contender("pickle-0")
def _pickle0() -> Contender:
    def dumps(obj: Any) -> bytes:
        return pickle.dumps(obj, 0)

    return codec("pickle-0", dumps, pickle.loads, ALL_KINDS, None, "protocol 0")


@CODEC.contender("pickle-5-fast")
def _pickle5_fast() -> Contender:
    def dumps(obj: Any) -> bytes:
        out = io.BytesIO()
        pickler = pickle.Pickler(out, 5)
        pickler.fast = True  # no memo: no shared references, no cycles
        pickler.dump(obj)
        return out.getvalue()

    return codec("pickle-5-fast", dumps, pickle.loads, ALL_KINDS, None, "Pickler.fast, protocol 5")


# --- third-party codecs ----------------------------------------------------------------------------


@CODEC.contender("msgspec")
def _msgspec() -> Contender:
    import msgspec

    encoder = msgspec.msgpack.Encoder()
    decoder = msgspec.msgpack.Decoder()
    return codec(
        "msgspec", encoder.encode, decoder.decode, frozenset({JSON, BYTES}), "msgspec", "msgpack"
    )


@CODEC.contender("ormsgpack")
def _ormsgpack() -> Contender:
    import ormsgpack

    return codec(
        "ormsgpack", ormsgpack.packb, ormsgpack.unpackb, frozenset({JSON, BYTES}), "ormsgpack"
    )


@CODEC.contender("orjson")
def _orjson() -> Contender:
    import orjson

    return codec("orjson", orjson.dumps, orjson.loads, frozenset({JSON}), "orjson")


@CODEC.contender("cbor2")
def _cbor2() -> Contender:
    import cbor2

    return codec("cbor2", cbor2.dumps, cbor2.loads, frozenset({JSON, BYTES}), "cbor2")
