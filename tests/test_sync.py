"""`run_sync` inside a running event loop (a notebook): Ctrl-C stops the run as at a terminal, not at its end."""

from __future__ import annotations

import asyncio
import signal
import threading
import time

import pytest

from sandbox.base.sync import run_sync


def test_an_interrupt_in_a_notebook_cancels_the_run_and_its_cleanup_runs_first() -> None:
    cleaned: list[float] = []

    async def long_run() -> str:
        try:
            for _ in range(600):  # 30 s: a run the interrupt must not wait for
                await asyncio.sleep(0.05)
            return "finished"
        finally:
            cleaned.append(time.monotonic())  # the run's cleanup (status, actors) runs on its own loop

    async def notebook_cell() -> None:  # a loop runs here, as in Jupyter: run_sync plays the run in a thread
        main = threading.main_thread().ident
        threading.Timer(0.5, signal.pthread_kill, (main, signal.SIGINT)).start()  # the kernel's interrupt: SIGINT
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            run_sync(long_run())
        assert cleaned and cleaned[0] - started < 5  # was: the run played on to its end (30 s), then raised
        assert time.monotonic() - started < 5

    loop = asyncio.new_event_loop()  # as ipykernel's: no SIGINT handler of asyncio.run's own
    try:
        loop.run_until_complete(notebook_cell())
    finally:
        loop.close()


def test_a_run_inside_a_loop_returns_its_result() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    async def cell() -> int:
        return run_sync(answer())

    assert asyncio.run(cell()) == 42 and run_sync(answer()) == 42
