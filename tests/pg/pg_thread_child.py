"""Child process for tests/pg/test_threads.py: closes the connection from another thread while
an amber.pg operation runs, many times, and reports how each ended. Run under
MALLOC_PERTURB_, so that a use of freed libpq memory crashes (the parent counts a crash as a
failure).

    python pg_thread_child.py DSN CASE ITERATIONS SEED

Prints one line per iteration ("ok" or "closed: <error>") and "DONE ok=N closed=M" at the
end; any other outcome prints "UNEXPECTED ..." and exits 3.
"""

from __future__ import annotations

import faulthandler
import random
import struct
import sys
import threading
import time
from typing import Any, cast

import psycopg
from psycopg.adapt import Loader
from psycopg.pq import Format

import amber.pg

faulthandler.enable()

#: A COPY that streams for about a second, a row at a time (the server sleeps per row).
SLOW = "select g, md5(g::text) as t, pg_sleep(0.0003)::text as s from generate_series(1, 3000) g"
#: Rows with a column read by a Python loader (point: a type amber leaves to psycopg).
POINTS = "select g, point(g, -g) as p from generate_series(1, {n}) g"


class Armed:
    """An event set the first time amber calls back into Python during the operation."""

    def __init__(self) -> None:
        self.event = threading.Event()


def point_loader(armed: Armed) -> type[Loader]:
    class PointLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> tuple[float, float]:
            armed.event.set()
            x, y = struct.unpack(">dd", bytes(data))
            return (x, y)

    return PointLoader


def closer(conn: psycopg.Connection[Any], wait: threading.Event | None, delay: float) -> Any:
    """Close `conn` from a new thread `delay` seconds after `wait` is set (at once if None)."""
    done = threading.Event()

    def run() -> None:
        if wait is not None:
            wait.wait(30)
        time.sleep(delay)
        conn.close()
        done.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, done


def close_now(conn: psycopg.Connection[Any]) -> None:
    """Close `conn` from another thread, and wait until it is closed."""
    t = threading.Thread(target=conn.close)
    t.start()
    t.join()


def one(dsn: str, case: str, rng: random.Random) -> str:
    conn = psycopg.connect(dsn, autocommit=True)
    try:
        if case.startswith("copy_out_") and case != "copy_out_loader":
            into = case.removeprefix("copy_out_")
            # Timed: the COPY streams for about a second; the close lands in amber's drain
            # (psycopg's own part, the COPY's start, is over within milliseconds).
            t, _ = closer(conn, None, rng.uniform(0.15, 1.2))
            out = amber.pg.copy_out(conn, SLOW, into=cast(Any, into))
            t.join()
            n = len(out) if into == "rows" else out.num_rows if into == "arrow" else len(out["g"])
            assert n == 3000, n
            return "ok"
        if case == "copy_out_loader":
            # A Python loader runs inside the drain; the close lands while it runs or between.
            armed = Armed()
            conn.adapters.register_loader("point", point_loader(armed))
            t, _ = closer(conn, armed.event, rng.uniform(0.0, 0.5))
            slow_points = (
                "select g, point(g, -g) as p, pg_sleep(0.0002)::text as s "
                "from generate_series(1, 3000) g"
            )
            out = amber.pg.copy_out(conn, slow_points)
            t.join()
            assert out[5][1] == (6.0, -6.0) and len(out) == 3000
            return "ok"
        if case.startswith("fetch_"):
            # The close lands while amber reads the result (a loader runs on every row); the
            # result outlives the connection, so the read completes, with the right values.
            into = case.removeprefix("fetch_")
            armed = Armed()
            conn.adapters.register_loader("point", point_loader(armed))
            t, done = closer(conn, armed.event, rng.uniform(0.0, 0.01))
            out = amber.pg.fetch(conn, POINTS.format(n=20000), into=cast(Any, into))
            closed_during = done.is_set()
            t.join()
            if into == "rows":
                n, first = len(out), out[0]
            else:
                n, first = len(out["g"]), (out["g"][0], out["p"][0])
            assert n == 20000 and tuple(first) == (1, (1.0, -1.0)), first
            return "ok closed-during" if closed_during else "ok"
        if case == "copy_in_rows":
            conn.execute("create temp table t (a int8, b text)")
            at = rng.randrange(0, 100_000)

            def rows() -> Any:
                for i in range(100_000):
                    if i == at:
                        close_now(conn)
                    yield (i, f"row {i}")

            amber.pg.copy_in(conn, "t", rows())
            return "ok"
        if case == "copy_in_frame":
            import pandas as pd

            conn.execute("create temp table t (a int8, x float8)")
            n = 50_000
            at = rng.randrange(0, n)

            class Hook:
                def __init__(self, i: int) -> None:
                    self.i = i

                def __float__(self) -> float:
                    if self.i == at:
                        close_now(conn)
                    return self.i / 2

            frame = pd.DataFrame({"a": range(n), "x": pd.Series([Hook(i) for i in range(n)])})
            amber.pg.copy_in(conn, "t", frame)
            return "ok"
        if case in ("store_get", "store_get_many", "store_put"):
            store = amber.pg.Store(conn, "kv")
            store.put_many({f"k{i}": {"i": i, "v": list(range(50))} for i in range(200)})
            if case == "store_get_many":
                at = rng.randrange(0, 200)

                def keys() -> Any:
                    for i in range(200):
                        if i == at:
                            close_now(conn)
                        yield f"k{i}"

                store.get_many(keys())
            else:
                close_now(conn)
                if case == "store_get":
                    store["k1"]
                else:
                    store["k1"] = {"i": 1}
            return "ok"
        raise SystemExit(f"unknown case {case}")
    except (psycopg.OperationalError, psycopg.InterfaceError) as e:
        if not conn.closed:
            return f"UNEXPECTED {type(e).__name__} on an open connection: {e}"
        return f"closed: {type(e).__name__}: {e}"
    except Exception as e:
        return f"UNEXPECTED {type(e).__name__}: {e}"
    finally:
        conn.close()


def main() -> int:
    dsn, case, iterations, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    counts = {"ok": 0, "closed": 0}
    for _ in range(iterations):
        outcome = one(dsn, case, rng)
        print(outcome, flush=True)
        if outcome.startswith("UNEXPECTED"):
            return 3
        counts["ok" if outcome.startswith("ok") else "closed"] += 1
    print(f"DONE ok={counts['ok']} closed={counts['closed']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
