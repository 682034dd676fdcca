"""A smoke test of every part of an installed amber, run from outside the source tree (CI runs it
on a wheel installed into a fresh environment with no Rust on PATH). Exits non-zero on failure."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import psycopg

import amber
import amber.pg
import amber.pg.testing
import amber.proto


def codec() -> None:
    value = {
        "id": 7,
        "tags": ("a", "b"),
        "seen": {3, 4},
        "price": Decimal("9.90"),
        "at": datetime(2026, 11, 27, tzinfo=timezone.utc),
        "big": 2**100,
        "nan": float("nan"),
    }
    back = amber.loads(amber.dumps(value))
    assert back.keys() == value.keys() and back["tags"] == ("a", "b") and back["big"] == 2**100
    assert type(back["seen"]) is set and back["price"].as_tuple() == value["price"].as_tuple()
    assert back["nan"] != back["nan"]
    try:
        amber.loads(b"\x00" * 12)
    except amber.DecodeError:
        pass
    else:
        raise AssertionError("garbage decoded")


def archive(folder: Path) -> None:
    path = folder / "run.amber.zip"
    df = pd.DataFrame({"a": np.arange(5, dtype=np.int64), "b": list("vwxyz")})
    with amber.Archive(path, "w") as a:
        a["config"] = {"lr": 0.1, "layers": (64, 32)}
        a["weights"] = np.arange(12, dtype=np.float32).reshape(3, 4)
        a["frame"] = df
    with amber.Archive(path) as a:
        assert a["config"] == {"lr": 0.1, "layers": (64, 32)}
        assert np.array_equal(a["weights"], np.arange(12, dtype=np.float32).reshape(3, 4))
        pd.testing.assert_frame_equal(a["frame"], df)
        a.verify()
    out = subprocess.run(
        [sys.executable, "-m", "amber", "ls", str(path)], check=True, capture_output=True, text=True
    ).stdout
    assert "weights" in out, out


def pg() -> None:
    with amber.pg.testing.start() as server, server.connect() as conn:
        conn.execute("create table t (id int8, x float8, s text)")
        amber.pg.copy_in(conn, "t", [(1, 0.5, "a"), (2, -1.25, "é")])
        assert amber.pg.copy_out(conn, "select * from t order by id") == [
            (1, 0.5, "a"),
            (2, -1.25, "é"),
        ]
        amber.pg.register(conn)
        conn.execute("create table o (v bytea)")
        conn.execute("insert into o values (%s)", (amber.pg.Amber({"k": (1, 2)}),))
        assert conn.execute("select v from o").fetchone() == ({"k": (1, 2)},)
        assert isinstance(conn, psycopg.Connection)


def proto() -> None:
    ns = amber.proto.load_text(
        'syntax = "proto3"; package shop;'
        "message Item { string sku = 1; int32 qty = 2; }"
        "message Order { int64 id = 1; repeated Item items = 2; map<string, int64> n = 3; }",
        name="shop.proto",
    )
    order = ns.shop.Order(id=7, items=[{"sku": "a", "qty": 2}], n={"x": 1})
    data = order.SerializeToString()
    back = ns.shop.Order.FromString(data)
    assert back == order and back.items[0].qty == 2
    assert ns.shop.Order.from_json(order.to_json()) == order


def main() -> None:
    print(f"amber {amber.__version__} on Python {sys.version.split()[0]} from {amber.__file__}")
    version = subprocess.run(
        [sys.executable, "-m", "amber", "--version"], check=True, capture_output=True, text=True
    ).stdout.strip()
    assert version == f"amber {amber.__version__}", version
    studies = subprocess.run(
        [sys.executable, "-m", "amber", "bench", "--list"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "study  objects" in studies, studies
    codec()
    with tempfile.TemporaryDirectory() as folder:
        archive(Path(folder))
    pg()
    proto()
    print(
        "smoke test passed: codec, archive, pg, proto, command line (bench --list, ls, --version)"
    )


if __name__ == "__main__":
    main()
