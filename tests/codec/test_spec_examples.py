"""Every `>>> dumps(...)` example in docs/spec/format.md is what dumps writes today.

The spec's examples are read by people implementing the format elsewhere; a stale one is a bug.
Statements between examples (`>>> a = [1]`) run in the same namespace, after the setup block the
spec gives. The README's first example runs as written too.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import amber

SPEC = Path(__file__).resolve().parents[2] / "docs" / "spec" / "format.md"
HEX_LINE = re.compile(r"^[0-9a-f]{2}( +[0-9a-f]{2})*$")


def setup_code(text: str) -> str:
    start = text.index("```python\nimport amber")
    return text[start + len("```python\n") : text.index("```", start + 3)]


def examples(text: str) -> list[tuple[int, list[str], str, str]]:
    """(line number, statements before, expression, expected hex) for each dumps example."""
    out = []
    pending: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith(">>> "):
            continue
        code = line[4:]
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if code.startswith("dumps(") and HEX_LINE.match(following):
            out.append((i + 1, pending, code, " ".join(following.split())))
            pending = []
        elif not code.startswith("dumps("):
            pending = [*pending, code]
    return out


TEXT = SPEC.read_text(encoding="utf-8")
EXAMPLES = examples(TEXT)


@pytest.fixture(scope="module")
def namespace() -> Any:
    ns: dict[str, Any] = {}
    before = amber.registered()
    exec(setup_code(TEXT), ns)
    yield ns
    for cls in set(amber.registered().values()) - set(before.values()):
        amber.unregister(cls)


def test_the_spec_has_examples() -> None:
    assert len(EXAMPLES) >= 50


@pytest.mark.parametrize(
    ("line", "before", "code", "want"), EXAMPLES, ids=[str(e[0]) for e in EXAMPLES]
)
def test_example(namespace: Any, line: int, before: list[str], code: str, want: str) -> None:
    for stmt in before:
        if not stmt.startswith("amber.loads("):
            exec(stmt, namespace)
    got = eval(code, namespace)
    assert " ".join(got.hex(" ").split()) == want, f"format.md line {line}: {code}"


def test_readme_codec_example_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's first example is whole: a new user can paste it and run it."""
    readme = (SPEC.parent.parent.parent / "README.md").read_text()
    first = re.search(r"```python\n(.*?)```", readme, re.S)
    assert first is not None
    module = types.ModuleType("readme_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(first.group(1), "README.md", "exec"), module.__dict__)
    amber.unregister(module.Point)
