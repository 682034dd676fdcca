"""`amber proto`'s commands: stubs and decode, from the command line."""

from __future__ import annotations

from pathlib import Path

import amber.proto as P
from tests.proto.oracle import SHOP


def test_cli_stubs_and_decode(tmp_path: Path) -> None:
    import ast
    import subprocess
    import sys

    (tmp_path / "shop.proto").write_text(SHOP)
    out = tmp_path / "shop_pb.pyi"
    run = [sys.executable, "-m", "amber", "proto"]
    subprocess.run([*run, "stubs", str(tmp_path / "shop.proto"), "-o", str(out)], check=True)
    tree = ast.parse(out.read_text())
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    assert {"Item", "Order"} <= classes
    assert "def __init__(self, *, sku: _builtins.str | _builtins.bytes | None = ..." in (
        out.read_text()
    )
    ns = P.load(tmp_path / "shop.proto")
    data = ns.shop.Order(id=3, note="n").SerializeToString()
    done = subprocess.run(
        [*run, "decode", str(tmp_path / "shop.proto"), "shop.Order"],
        input=data,
        capture_output=True,
        check=True,
    )
    assert done.stdout.decode() == 'id: 3\nnote: "n"\n'
    as_json = subprocess.run(
        [*run, "decode", str(tmp_path / "shop.proto"), "shop.Order", "--json"],
        input=data,
        capture_output=True,
        check=True,
    )
    assert as_json.stdout.decode() == '{\n  "id": "3",\n  "note": "n"\n}\n'
    bad = subprocess.run(
        [*run, "decode", str(tmp_path / "shop.proto"), "shop.Order"],
        input=b"\x0a\x09",
        capture_output=True,
    )
    assert bad.returncode == 1 and b"larger than" in bad.stderr
