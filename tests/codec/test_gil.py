"""Bulk copies run without the GIL, and a signal that arrives meanwhile is let through."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest

import amber

BIG = 64 << 20  # far above the 1 MiB from which copies release the GIL


class Interrupted(BaseException):  # as KeyboardInterrupt, never wrapped as a DecodeError
    pass


def raised_inside(call: Callable[[], Any]) -> bool:
    """Whether a signal sent by another thread, which can only run while `call` has released the
    GIL, makes `call` itself raise (the handler runs when the copy ends, not after `call`)."""
    main = threading.get_ident()
    go = threading.Event()

    def send() -> None:
        go.wait()
        signal.pthread_kill(main, signal.SIGUSR1)

    def handler(signum: int, frame: Any) -> None:
        raise Interrupted

    old = signal.signal(signal.SIGUSR1, handler)
    thread = threading.Thread(target=send)
    thread.start()
    result: Any = None
    try:
        go.set()
        result = call()
    except Interrupted:
        pass
    finally:
        thread.join()
        # A signal that came after the call is handled here instead.
        with contextlib.suppress(Interrupted):
            signal.signal(signal.SIGUSR1, old)
    return result is None


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: lambda: amber.dumps(b"x" * BIG), id="dumps"),
        pytest.param(
            lambda: (lambda frame: lambda: amber.loads(frame))(amber.dumps(b"x" * BIG)),
            id="loads",
        ),
    ],
)
def test_a_large_copy_lets_other_threads_run_and_signals_through(make: Any) -> None:
    call = make()
    # The other thread can send its signal only while the GIL is released; a few tries
    # absorb a slow thread start on a busy machine.
    assert any(raised_inside(call) for _ in range(3))


def test_copies_from_mutable_inputs_and_small_copies_are_exact() -> None:
    data = bytes(range(256)) * 8192  # 2 MiB
    frame = amber.dumps({"a": data, "b": bytearray(data), "c": b"small"})
    for given in (frame, bytearray(frame), memoryview(frame)):
        out = amber.loads(given)
        assert out == {"a": data, "b": bytearray(data), "c": b"small"}
        assert type(out["b"]) is bytearray
