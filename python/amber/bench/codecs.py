"""The codecs a benchmark compares, behind one `dumps(obj) -> bytes` / `loads(buffer)` shape.

Each codec is registered as a factory that imports its library when called, so a missing library (or
amber before its native module is built) is reported as skipped instead of failing the run.
"""

from __future__ import annotations

import importlib.metadata
import io
import pickle
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from amber.bench.workloads import ALL_KINDS, BYTES, JSON

Buffer = bytes | memoryview
Dumps = Callable[[Any], bytes]
Loads = Callable[[Buffer], Any]

BASELINE = "pickle-5"


@dataclass(frozen=True)
class Codec:
    """One way to turn an object into bytes and back.

    `kinds` names the value kinds (see `amber.bench.workloads`) the codec keeps exactly; a workload
    needing another kind is reported as "cannot represent" without running. A codec that claims a
    kind but fails the round trip check is reported as "not exact" for that workload.
    """

    name: str
    dumps: Dumps
    loads: Loads
    kinds: frozenset[str]
    package: str | None = None  # distribution whose version the report names
    note: str = ""


class UnknownNameError(KeyError):
    """A study or codec name that is not registered."""


@dataclass(frozen=True)
class Skipped:
    name: str
    reason: str


CodecFactory = Callable[[], Codec]
_FACTORIES: dict[str, CodecFactory] = {}


def register_codec(name: str) -> Callable[[CodecFactory], CodecFactory]:
    """Register a factory; it may raise ImportError when its library is missing."""

    def deco(factory: CodecFactory) -> CodecFactory:
        if name in _FACTORIES:
            raise ValueError(f"codec {name!r} is already registered")
        _FACTORIES[name] = factory
        return factory

    return deco


def codec_names() -> list[str]:
    return list(_FACTORIES)


def resolve(names: Iterable[str] | None = None) -> tuple[list[Codec], list[Skipped]]:
    """Build the named codecs (all registered ones by default), in registry order."""
    wanted = codec_names() if names is None else list(dict.fromkeys(names))
    unknown = [n for n in wanted if n not in _FACTORIES]
    if unknown:
        raise UnknownNameError(
            f"unknown codec(s): {', '.join(unknown)}; known: {', '.join(_FACTORIES)}"
        )
    codecs: list[Codec] = []
    skipped: list[Skipped] = []
    for name in wanted:
        try:
            codecs.append(_FACTORIES[name]())
        except ImportError as exc:
            skipped.append(Skipped(name, f"not installed ({exc})"))
        except Exception as exc:  # a library that imports but does not work is skipped too
            skipped.append(Skipped(name, f"unavailable ({type(exc).__name__}: {exc})"))
    return codecs, skipped


def version_of(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        module = __import__(package)
        return str(getattr(module, "__version__", "unknown"))


# --- amber -----------------------------------------------------------------------------------------


def _amber_functions() -> tuple[Callable[..., bytes], Callable[..., Any]]:
    try:
        from amber import dumps, loads
    except ImportError as exc:
        raise ImportError(f"amber codec not importable: {exc}") from exc
    dumps(1)  # the Python package may import while the native module is still missing
    return dumps, loads


@register_codec("amber")
def _amber() -> Codec:
    dumps, loads = _amber_functions()
    return Codec("amber", dumps, loads, ALL_KINDS, "amber")


@register_codec("amber-identity")
def _amber_identity() -> Codec:
    dumps, loads = _amber_functions()
    dumps([1], identity=True)

    def dumps_identity(obj: Any) -> bytes:
        return dumps(obj, identity=True)

    return Codec(
        "amber-identity", dumps_identity, loads, ALL_KINDS, "amber", "dumps(obj, identity=True)"
    )


# --- pickle ----------------------------------------------------------------------------------------


@register_codec("pickle-5")
def _pickle5() -> Codec:
    def dumps(obj: Any) -> bytes:
        return pickle.dumps(obj, 5)

    return Codec("pickle-5", dumps, pickle.loads, ALL_KINDS, None, "protocol 5")


@register_codec("pickle-0")
def _pickle0() -> Codec:
    def dumps(obj: Any) -> bytes:
        return pickle.dumps(obj, 0)

    return Codec("pickle-0", dumps, pickle.loads, ALL_KINDS, None, "protocol 0")


@register_codec("pickle-5-fast")
def _pickle5_fast() -> Codec:
    def dumps(obj: Any) -> bytes:
        out = io.BytesIO()
        pickler = pickle.Pickler(out, 5)
        pickler.fast = True  # no memo: no shared references, no cycles
        pickler.dump(obj)
        return out.getvalue()

    return Codec("pickle-5-fast", dumps, pickle.loads, ALL_KINDS, None, "Pickler.fast, protocol 5")


# --- third-party codecs ----------------------------------------------------------------------------


@register_codec("msgspec")
def _msgspec() -> Codec:
    import msgspec

    encoder = msgspec.msgpack.Encoder()
    decoder = msgspec.msgpack.Decoder()
    return Codec(
        "msgspec", encoder.encode, decoder.decode, frozenset({JSON, BYTES}), "msgspec", "msgpack"
    )


@register_codec("ormsgpack")
def _ormsgpack() -> Codec:
    import ormsgpack

    return Codec(
        "ormsgpack", ormsgpack.packb, ormsgpack.unpackb, frozenset({JSON, BYTES}), "ormsgpack"
    )


@register_codec("orjson")
def _orjson() -> Codec:
    import orjson

    return Codec("orjson", orjson.dumps, orjson.loads, frozenset({JSON}), "orjson")


@register_codec("cbor2")
def _cbor2() -> Codec:
    import cbor2

    return Codec("cbor2", cbor2.dumps, cbor2.loads, frozenset({JSON, BYTES}), "cbor2")
