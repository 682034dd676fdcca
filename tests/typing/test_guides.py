"""The Python examples of README.md and of every docs/*.md page pass `mypy --strict`.

Each page is read top to bottom as one module: its ```python blocks (```py, ```python3 and
```pycon too), joined in order, since later blocks use names of earlier ones. In a REPL
transcript (a block whose first line starts with `>>> `), the `>>> ` and `... ` lines are the
code and the output lines are dropped. The module is checked for CPython 3.10, the oldest amber
supports, against this checkout's `amber` (its `.py` files and `.pyi` stubs), and each error is
reported as `page:line` of the markdown.

Markers, written in the markdown as an HTML comment on the line right above the fence (visible
in the page's source, hidden when it is rendered), each for that one block:

- `<!-- not checked: REASON -->`: the block is not checked, for the reason given (it must say
  one). For code that cannot be checked as part of the page: a file of another module, shell,
  pseudo-code.
- `<!-- given: DECLARATIONS -->` (one or more lines): Python declarations of the names the
  example takes from its surroundings with their types (`conn: psycopg.Connection[Any]`),
  checked as if they were written above the block.
- `<!-- module: NAME -->`: the block is a file of its own (a program importing a module the
  page wrote), checked as module NAME instead of as part of the page.

An example that deliberately shows a type error says so with `# type: ignore[code]` on that
line: `--strict` warns of an ignore that is not needed, so the error must really be reported.
Blocks in other languages (```sh, ```proto, plain ```) are not Python and are not read.

Third-party packages without type information are `ignore_missing_imports` (their values are
`Any` to the check): pandas, pyarrow, fsspec, joblib, numcodecs. The typed ones the examples use
(NumPy, psycopg, distributed, zarr, polars) are checked with their own types, except that
calls of distributed's unannotated constructors (`LocalCluster`, `Client`) are allowed
(`untyped_calls_exclude`). One of those that is not installed in this Python (zarr, before
CPython 3.11 and on 3.15) is taken as untyped too, so that the rest of its page is still
checked there.

`docs/proto.md`'s typing-stub examples import `order_pb`, the module a user writes next to the
stub `amber proto stubs` gives: the test writes that stub with this checkout's `amber proto
stubs` from `protos/shop/order.proto` beside this file, the schema the page's examples load.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROTOS = Path(__file__).resolve().parent / "protos"
UNTYPED = ["pandas", "pyarrow", "fsspec", "joblib", "numcodecs"]
TYPED = ["numpy", "psycopg", "distributed", "zarr", "polars"]

_FENCE = re.compile(r"^(?P<indent>\s*)```\s*(?P<lang>[\w+-]*)(?P<info>.*)$")
_PYTHON = {"python", "python3", "py", "pycon"}
_ERROR = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<rest>.*)$")


@dataclass
class Module:
    """One page as a module: its lines and, for each, the markdown line it came from."""

    page: Path
    lines: list[str] = field(default_factory=list)
    origin: list[int] = field(default_factory=list)

    def add(self, text: str, line: int) -> None:
        self.lines.append(text)
        self.origin.append(line)

    own_name: str = ""

    @property
    def name(self) -> str:
        return self.own_name or "guide_" + re.sub(r"\W", "_", self.page.stem)

    @property
    def label(self) -> str:
        return (
            str(self.page.relative_to(ROOT)) if self.page.is_relative_to(ROOT) else self.page.name
        )


def _marker(lines: list[str], fence: int) -> tuple[str, str, int] | None:
    """The HTML comment right above the fence at index `fence`: (kind, text, first line index)."""
    end = fence - 1
    if end < 0 or not lines[end].strip().endswith("-->"):
        return None
    start = end
    while start >= 0 and "<!--" not in lines[start]:
        start -= 1
    if start < 0:
        return None
    body = "\n".join(lines[start : end + 1]).strip()
    body = body.removeprefix("<!--").removesuffix("-->").strip()
    kind, _, text = body.partition(":")
    return kind.strip(), text, start


def _code(block: list[str]) -> list[tuple[int, str]]:
    """(offset in the block, line of code): a REPL transcript's code lines, or every line."""
    first = next((line for line in block if line.strip()), "")
    if not first.lstrip().startswith(">>>"):
        return list(enumerate(block))
    out = []
    for i, line in enumerate(block):
        if line.startswith((">>> ", "... ")):
            out.append((i, line[4:]))
        elif line.rstrip() in (">>>", "..."):
            out.append((i, ""))
    return out


def extract(page: Path) -> list[Module]:
    """The page's Python blocks as one module, and the blocks marked as modules of their own
    (see the module's docstring for the markers)."""
    page_module = Module(page)
    modules = [page_module]
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        indent = len(m["indent"])
        close = i + 1
        while close < len(lines) and lines[close].strip() != "```":
            close += 1
        if m["lang"] not in _PYTHON:
            i = close + 1
            continue
        block = [line[indent:] for line in lines[i + 1 : close]]
        marker = _marker(lines, i)
        module = page_module
        if marker is not None and marker[0] == "module":
            module = Module(page, own_name=marker[1].strip())
            assert module.own_name.isidentifier(), f"{module.label}:{i + 1}: bad module name"
            modules.append(module)
        if marker is not None and marker[0] == "not checked":
            assert marker[1].strip(), f"{module.label}:{i + 1}: `not checked` needs a reason"
            i = close + 1
            continue
        if marker is not None and marker[0] == "given":
            _, text, start = marker
            given = textwrap.dedent(text).strip("\n").splitlines()
            first = start + 1 if text.startswith("\n") or not text.strip() else start
            for n, line in enumerate(given):
                module.add(line, first + n + 1)
        code = _code(block)
        dedented = textwrap.dedent("\n".join(text for _, text in code)).splitlines()
        for (offset, _), text in zip(code, dedented, strict=False):
            module.add(text, i + 2 + offset)
        i = close + 1
    return modules


def _stub_order(folder: Path) -> None:
    """`order_pb.pyi`, as `amber proto stubs shop/order.proto -I protos -o order_pb.pyi` writes
    it (docs/proto.md's typing-stub examples import it)."""
    out = folder / "order_pb.pyi"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "amber",
            "proto",
            "stubs",
            "shop/order.proto",
            "-I",
            str(PROTOS),
            "-o",
            str(out),
        ],
        check=True,
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(ROOT / "python")},
    )


def _config(folder: Path) -> Path:
    absent = [name for name in TYPED if importlib.util.find_spec(name) is None]
    untyped = ",".join(f"{name},{name}.*" for name in UNTYPED + absent)
    ini = folder / "mypy.ini"
    ini.write_text(
        textwrap.dedent(
            f"""\
            [mypy]
            strict = True
            python_version = 3.10
            mypy_path = {ROOT / "python"}
            cache_dir = {ROOT / ".mypy_cache" / "guides-{}.{}".format(*sys.version_info)}
            show_column_numbers = True
            show_error_codes = True
            show_absolute_path = True
            no_error_summary = True
            # distributed's LocalCluster and Client have no annotations on their constructors
            untyped_calls_exclude = distributed

            [mypy-amber.*]
            # amber's own modules are checked by `make lint`; here they give the examples types
            follow_imports = silent

            [mypy-{untyped}]
            ignore_missing_imports = True
            """
        ),
        encoding="utf-8",
    )
    return ini


def _run_mypy(modules: list[Module], folder: Path) -> list[str]:
    """mypy --strict on the modules, its errors as `page:line:col: message`."""
    # By file name: mypy's cache replays a module's errors under the path it first had.
    paths = {}
    for module in modules:
        path = folder / f"{module.name}.py"
        path.write_text("\n".join(module.lines) + "\n", encoding="utf-8")
        paths[path.name] = module
    _stub_order(folder)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(_config(folder)), *paths],
        capture_output=True,
        text=True,
        cwd=folder,
        env={k: v for k, v in os.environ.items() if k != "MYPYPATH"},
    )
    problems = []
    for line in proc.stdout.splitlines():
        m = _ERROR.match(line)
        found = paths.get(Path(m["file"]).name) if m else None
        if m is None or found is None:
            problems.append(line)
            continue
        md_line = found.origin[int(m["line"]) - 1]
        code = found.lines[int(m["line"]) - 1].strip()
        problems.append(f"{found.label}:{md_line}:{m['col']}: {m['rest']}\n    {code}")
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and not problems):
        problems.append(f"mypy exited with {proc.returncode}: {proc.stderr.strip()}")
    return problems


def test_pages_have_python_examples() -> None:
    """The extraction finds the examples (a change of fence style would otherwise pass unseen)."""
    modules = {m.page.name: m for page in PAGES for m in extract(page)[:1]}
    for page in ("README.md", "guide.md", "archive.md", "pg.md", "proto.md", "distributed.md"):
        assert modules[page].lines, f"no Python examples found in {page}"


def test_transcript_keeps_code_and_drops_output() -> None:
    block = [">>> x = {", "...     'a': 1}", ">>> x", "{'a': 1}"]
    assert _code(block) == [(0, "x = {"), (1, "    'a': 1}"), (2, "x")]


def test_markers(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        textwrap.dedent(
            """\
            <!-- given:
            conn: object
            -->
            ```python
            print(conn)
            ```
            <!-- not checked: pseudo-code -->
            ```python
            for x in ...: ...
            ```
            ```sh
            ls
            ```
            <!-- module: app -->
            ```python
            import page
            ```
            - a list item:
              ```python
              >>> x = 1
              >>> x
              1
              ```
            ```py title="more.py"
            y = 2
            ```
            """
        ),
        encoding="utf-8",
    )
    main, app = extract(page)
    assert main.lines == ["conn: object", "print(conn)", "x = 1", "x", "y = 2"]
    assert main.origin == [2, 5, 20, 21, 25]
    assert (app.name, app.lines, app.origin) == ("app", ["import page"], [16])
    page.write_text("<!-- not checked:  -->\n```python\nx\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="needs a reason"):
        extract(page)


def test_guides_pass_mypy_strict(tmp_path: Path) -> None:
    modules = [m for page in PAGES for m in extract(page) if m.lines]
    problems = _run_mypy(modules, tmp_path)
    if problems:
        pytest.fail(
            f"mypy --strict on the guides' examples: {len(problems)} errors\n"
            + "\n".join(problems),
            pytrace=False,
        )
