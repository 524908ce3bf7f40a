"""Run a coroutine to completion from synchronous code, inside a notebook too."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` on a fresh event loop; in a thread when a loop already runs here (Jupyter).

    In the thread, Ctrl-C (a notebook's interrupt: `KeyboardInterrupt` in this thread, which waits) stops the run
    as it does at a terminal: its task is cancelled, its cleanup runs (a status written, Ray actors killed), and
    only then does `KeyboardInterrupt` go on. Left alone, the thread would play the run to its end first."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    started: concurrent.futures.Future[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = (
        concurrent.futures.Future()
    )

    async def main() -> T:
        task = asyncio.current_task()
        assert task is not None
        started.set_result((asyncio.get_running_loop(), task))
        return await coro

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # the caller's context goes along
        future = pool.submit(contextvars.copy_context().run, asyncio.run, main())
        try:
            return future.result()
        except KeyboardInterrupt:
            loop, task = started.result()  # set as soon as the thread's loop runs
            loop.call_soon_threadsafe(task.cancel)
            concurrent.futures.wait([future])
            raise
