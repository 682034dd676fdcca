"""Archives built for the tests: written from a dict, or crafted entry by entry with a
manifest that says what the test needs; and `CLI`, the `python -c` code that runs amber's command
line."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from amber import Archive

CLI = "import sys; from amber.cli import main; sys.exit(main())"


def write(path: Path, values: dict[str, Any], **kw: Any) -> None:
    with Archive(path, "w", **kw) as a:
        for k, v in values.items():
            a[k] = v


def crafted(tmp_path: Path, entries: list[tuple[str, bytes]]) -> Path:
    path = tmp_path / "crafted.zip"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries:
            z.writestr(name, data)
    return path


def manifest(keys: dict[str, Any], entries: dict[str, Any], version: int = 1) -> bytes:
    return json.dumps({"amber_archive": version, "keys": keys, "entries": entries}).encode()
