"""Where a sweep's runs play: a local process pool (the default) or Ray (a local Ray, or a cluster's address).

Both take the same jobs (`execute_run`'s arguments, plain data) and call
`on_done` with each outcome as it finishes; at most `workers` run at once.
The driver hands each run to one worker once; the run directory's hold
guards against any other process that would play it too.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import signal
from collections.abc import Callable, Sequence
from typing import Any

from sandbox.sweep.execute import execute_run

__all__ = ["run_jobs"]

Job = dict[str, Any]


def _die_with_the_driver() -> None:
    """A pool worker is killed when the driver dies (Linux), so a killed sweep leaves no run half-held."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _local(jobs: Sequence[Job], workers: int, on_done: Callable[[dict[str, Any]], None]) -> None:
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no forked threads or locks
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                                initializer=_die_with_the_driver) as pool:  # fmt: skip
        futures = [pool.submit(execute_run, **job) for job in jobs]
        for future in concurrent.futures.as_completed(futures):
            on_done(future.result())


def _ray(jobs: Sequence[Job], workers: int, on_done: Callable[[dict[str, Any]], None], address: str | None) -> None:
    import ray

    started = not ray.is_initialized()
    if started:
        if address:  # an existing cluster: its nodes need the sandbox installed and the sweep directory shared
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(execute_run)
        pending = list(jobs)
        running: list[Any] = []
        while pending or running:
            while pending and len(running) < workers:
                running.append(remote.remote(**pending.pop(0)))
            done, running = ray.wait(running, num_returns=1)
            for ref in done:
                on_done(ray.get(ref))
    finally:
        if started:
            ray.shutdown()


def run_jobs(jobs: Sequence[Job], *, executor: str, workers: int, on_done: Callable[[dict[str, Any]], None],
             address: str | None = None) -> None:  # fmt: skip
    """Play `jobs` on `executor` (local or ray), `workers` at a time, calling `on_done` with each outcome."""
    if not jobs:
        return
    if executor == "ray":
        _ray(jobs, workers, on_done, address)
    else:
        _local(jobs, workers, on_done)
