"""Running out of memory raises MemoryError, as pickle does: no abort, no panic, no DecodeError.

Each case runs in a child process under an address-space limit (RLIMIT_AS) set a little above
what the process already uses, so a crash or an uncatchable error fails the test. The child asks
amber's Rust allocator (mimalloc) to map each large block when it is needed, as the system
allocator does, instead of from address space it reserved ahead (1 GiB at a time by default):
then what the limit leaves room for is exactly what the comments below say.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and /proc are Linux's")

PRELUDE = """
import resource, sys, amber

def limit(extra_mib):
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) for line in f if line.startswith("VmSize:")) * 1024
    cap = vm + (extra_mib << 20)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

def expect_memory_error(f):
    try:
        f()
    except MemoryError as e:
        assert not isinstance(e, amber.AmberError), repr(e)
        print("MemoryError")
    else:
        print("no error")
"""


def run(body: str, quiet: bool = True) -> str:
    code = PRELUDE + textwrap.dedent(body)
    env = {**os.environ, "MIMALLOC_ARENA_RESERVE": "0"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    if quiet:
        assert "panicked" not in proc.stderr, proc.stderr[-3000:]
    return proc.stdout.strip()


def test_output_buffer_that_cannot_grow() -> None:
    # The output needs a 400 MiB buffer and its copy; 300 MiB more is not enough for the buffer.
    assert (
        run("""
        big = bytes(400 << 20)
        limit(300)
        expect_memory_error(lambda: amber.dumps(big))
        expect_memory_error(lambda: amber.dumps([1, "a", big, 2.0], identity=True))
        """)
        == "MemoryError\nMemoryError"
    )


def test_result_bytes_that_cannot_be_made() -> None:
    # Room for the output buffer, not for the bytes object copied from it.
    assert (
        run("""
        big = bytes(400 << 20)
        limit(700)
        expect_memory_error(lambda: amber.dumps(big))
        """)
        == "MemoryError"
    )


def test_memory_error_while_decoding_is_not_reported_as_bad_data() -> None:
    assert (
        run("""
        data = amber.dumps(bytes(300 << 20))
        limit(150)
        expect_memory_error(lambda: amber.loads(data))
        """)
        == "MemoryError"
    )


def test_stack_for_deep_nesting_that_cannot_be_had() -> None:
    # Each stack segment is mapped on demand: deep data under a tight limit runs out of them.
    # The stack-growth library reports a failed mapping by panicking, which prints a message
    # before amber turns it into MemoryError.
    assert (
        run(
            """
        depth = 300_000
        x = []
        for _ in range(depth):
            x = [x]
        data = amber.dumps(x, max_depth=depth + 1)
        limit(120)
        expect_memory_error(lambda: amber.dumps(x, max_depth=depth + 1))
        expect_memory_error(lambda: amber.loads(data, max_depth=depth + 1))
        """,
            quiet=False,
        )
        == "MemoryError\nMemoryError"
    )
