"""Play a list of jobs concurrently, results in the jobs' order, with progress: the loop every evaluation shares.

The model stack's concurrency limit bounds how many calls are in flight, so
every job is started at once; the results come back in the order of the jobs
(a table written from them does not depend on which call answered first).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

__all__ = ["gather_jobs"]

J = TypeVar("J")
R = TypeVar("R")


async def gather_jobs(
    jobs: Sequence[J],
    play: Callable[[J], Awaitable[R]],
    *,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[R], None] | None = None,
) -> list[R]:
    """`play(job)` for every job at once; their results in job order.

    Args:
        jobs: What to play.
        play: Plays one job.
        on_start: Called with the number of jobs, before any starts.
        on_done: Called with each result as it arrives (progress bars).

    >>> async def double(x: int) -> int:
    ...     return 2 * x
    >>> asyncio.run(gather_jobs([1, 2, 3], double))
    [2, 4, 6]
    """
    if on_start is not None:
        on_start(len(jobs))

    async def one(job: J) -> R:
        result = await play(job)
        if on_done is not None:
            on_done(result)
        return result

    return list(await asyncio.gather(*(one(job) for job in jobs)))
