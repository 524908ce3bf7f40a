"""Play a list of jobs concurrently, results in the jobs' order, with progress: the loop every evaluation shares.

The model stack's concurrency limit bounds how many calls are in flight, so
every job may be started at once; the results come back in the order of the
jobs (a table written from them does not depend on which call answered
first). With `limit`, at most that many jobs run at once and the others wait
before they start: a job's own work before its call (a prompt rendered, the
cache asked) is then done when a call slot is near, not all of it at the
start. Started at once, the 20,000 calls of a 10,000-agent population did
seconds of that work before the event loop read the first answers back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

__all__ = ["gather_jobs", "jobs_ahead"]

J = TypeVar("J")
R = TypeVar("R")


def jobs_ahead(concurrency: int, calls_per_job: int = 1) -> int:
    """The `limit` of `gather_jobs` for jobs of `calls_per_job` model calls under the stack's `concurrency`: twice
    as many calls started as may be in flight, so a job's work before its call is done while others wait on
    theirs, and no more (a population's jobs are its agents' calls: thousands).

    >>> jobs_ahead(64), jobs_ahead(64, calls_per_job=2)
    (128, 64)
    """
    return max(1, 2 * concurrency // calls_per_job)


async def gather_jobs(
    jobs: Sequence[J],
    play: Callable[[J], Awaitable[R]],
    *,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[R], None] | None = None,
    limit: int | None = None,
) -> list[R]:
    """`play(job)` for every job at once; their results in job order.

    Args:
        jobs: What to play.
        play: Plays one job.
        on_start: Called with the number of jobs, before any starts.
        on_done: Called with each result as it arrives (progress bars).
        limit: The most jobs running at once (None: all of them).

    >>> async def double(x: int) -> int:
    ...     return 2 * x
    >>> asyncio.run(gather_jobs([1, 2, 3], double))
    [2, 4, 6]
    >>> asyncio.run(gather_jobs([1, 2, 3], double, limit=1))
    [2, 4, 6]
    """
    if on_start is not None:
        on_start(len(jobs))

    gate = asyncio.Semaphore(limit) if limit else None

    async def one(job: J) -> R:
        if gate is None:
            result = await play(job)
        else:
            async with gate:
                result = await play(job)
        if on_done is not None:
            on_done(result)
        return result

    return list(await asyncio.gather(*(one(job) for job in jobs)))
