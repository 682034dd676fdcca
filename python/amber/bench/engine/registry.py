"""The registries: parts, the contenders each part registers, and the studies.

A part of amber (the codec, the archive, the PostgreSQL layer, the protobuf runtime) is one package
under `amber.bench.parts`. Importing it registers a `Part`, its contenders (`@PART.contender(NAME)`)
and its studies (`@register_study`); the engine imports every such package the first time a
registry is read, so adding a part touches no file outside its package.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from amber.bench.engine.contender import Contender, Skipped, UnknownNameError
from amber.bench.engine.study import Study

ContenderFactory = Callable[[], Contender]


class Part:
    """One part of amber as the benchmarks see it: its name, its contenders, and the baseline every
    ratio of its studies divides by (a contender of the same part, timed in the same run).

    `label` heads the report line that lists the part's contenders ("Codecs: amber, ...").
    """

    def __init__(self, name: str, *, baseline: str, label: str = "", description: str = "") -> None:
        self.name = name
        self.baseline = baseline
        self.label = label or f"Contenders ({name})"
        self.description = description
        self._factories: dict[str, ContenderFactory] = {}

    def __repr__(self) -> str:
        return f"Part({self.name!r})"

    def contender(self, name: str) -> Callable[[ContenderFactory], ContenderFactory]:
        """Register a factory under `name`; it imports its library when called, and may raise
        ImportError when that library is missing: the contender is then skipped with a note."""

        def deco(factory: ContenderFactory) -> ContenderFactory:
            if name in self._factories:
                raise ValueError(f"contender {name!r} is already registered in part {self.name!r}")
            self._factories[name] = factory
            return factory

        return deco

    def names(self) -> list[str]:
        return list(self._factories)

    def resolve(self, names: Iterable[str] | None = None) -> tuple[list[Contender], list[Skipped]]:
        """Build the named contenders (all of this part's by default), in the order given."""
        wanted = self.names() if names is None else list(dict.fromkeys(names))
        unknown = [n for n in wanted if n not in self._factories]
        if unknown:
            raise UnknownNameError(
                f"unknown contender(s) in part {self.name}: {', '.join(unknown)}; "
                f"known: {', '.join(self._factories)}"
            )
        found: list[Contender] = []
        skipped: list[Skipped] = []
        for name in wanted:
            try:
                found.append(self._factories[name]())
            except ImportError as exc:
                skipped.append(Skipped(name, f"not installed ({exc})"))
            except Exception as exc:  # a library that imports but does not work is skipped too
                skipped.append(Skipped(name, f"unavailable ({type(exc).__name__}: {exc})"))
        return found, skipped


@dataclass
class Lineup:
    """The contenders of one part chosen for a run, the ones skipped, and notes on the choice."""

    part: Part
    contenders: list[Contender]
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


_PARTS: dict[str, Part] = {}
_STUDIES: dict[str, type[Study]] = {}
_DISCOVERED = False


def register_part(part: Part) -> Part:
    if part.name in _PARTS and _PARTS[part.name] is not part:
        raise ValueError(f"part {part.name!r} is already registered")
    _PARTS[part.name] = part
    return part


def register_study(cls: type[Study]) -> type[Study]:
    """Class decorator: register a study; its `part` names the part whose contenders it runs."""
    if cls.name in _STUDIES and _STUDIES[cls.name] is not cls:
        raise ValueError(f"study {cls.name!r} is already registered")
    _STUDIES[cls.name] = cls
    return cls


def discover() -> None:
    """Import every package under `amber.bench.parts` once, which registers what it holds."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    from amber.bench import parts

    for info in sorted(pkgutil.iter_modules(parts.__path__), key=lambda m: m.name):
        importlib.import_module(f"{parts.__name__}.{info.name}")


def part_names() -> list[str]:
    discover()
    return list(_PARTS)


def get_part(name: str) -> Part:
    discover()
    try:
        return _PARTS[name]
    except KeyError:
        raise UnknownNameError(f"unknown part {name!r}; known: {', '.join(_PARTS)}") from None


def study_names() -> list[str]:
    discover()
    return list(_STUDIES)


def get_study(name: str) -> Study:
    discover()
    try:
        return _STUDIES[name]()
    except KeyError:
        raise UnknownNameError(f"unknown study {name!r}; known: {', '.join(_STUDIES)}") from None
