"""Where a sweep's runs play: a local process pool (the default) or Ray (a local Ray, or a cluster's address).

Both take the same jobs (`execute_run`'s arguments, plain data) and call
`on_done` with each outcome as it finishes; at most `workers` run at once.
The driver hands each run to one worker once; the run directory's hold
guards against any other process that would play it too.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
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


THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def core_slices(cores: Sequence[int], workers: int) -> list[list[int]]:
    """The cores each of `workers` workers runs on: `cores` split into even, disjoint slices (the first slices take
    the remainder); with more workers than cores, one core each in turn.

    >>> core_slices([0, 1, 2], 2), core_slices([0, 1], 3), core_slices([4], 2)
    ([[0], [1, 2]], [[0], [1], [0]], [[4], [4]])
    """
    cores = list(cores)
    if workers >= len(cores):
        return [[cores[k % len(cores)]] for k in range(workers)]
    return [cores[k * len(cores) // workers : (k + 1) * len(cores) // workers] for k in range(workers)]


def usable_core_list() -> list[int]:
    """The cores this process may run on, capped by a container's CPU quota (`usable_cores`); empty off Linux."""
    from sandbox.llm.embedded_tuning import usable_cores

    try:
        return sorted(os.sched_getaffinity(0))[: usable_cores()]
    except (AttributeError, OSError):  # not on Linux: no pinning
        return []


def share_the_cores(counter: Any, slices: Sequence[Sequence[int]]) -> list[int]:
    """Pin this worker (every thread it has) to its own slice of the cores (`core_slices`, cut by the driver).

    Without it each of the runs sizes its thread pools (torch's OpenMP, llama.cpp) to every core, and two PPO runs
    on 2 cores ran episodes 20 times slower in bursts (OpenMP threads spinning against each other). `counter`
    hands out the slices; a replaced pool's workers take them in turn again. The math libraries' thread counts
    (`THREAD_VARIABLES`) are set for a slice by the driver before the pool starts (`_local`), since numpy's BLAS
    reads them on import, before this runs. Returns the cores it got (none off Linux).
    """
    if not slices:
        return []
    with counter.get_lock():
        k = counter.value
        counter.value += 1
    mine = list(slices[k % len(slices)])
    pin(mine)
    return mine


def pin(cores: Sequence[int]) -> None:
    """Run this process, every thread it has started so far, on `cores` (Linux; a library's threads keep the old
    mask otherwise)."""
    try:
        threads = [int(task) for task in os.listdir("/proc/self/task")]
    except OSError:  # no /proc: the calling thread only
        threads = [0]
    for thread in threads:
        try:
            os.sched_setaffinity(thread, cores)
        except OSError:  # a thread that ended meanwhile
            pass


def _start_worker(counter: Any, slices: Sequence[Sequence[int]]) -> None:
    _die_with_the_driver()
    share_the_cores(counter, slices)


def _crashed(job: Job, error: BaseException) -> dict[str, Any]:
    """The outcome of a run whose worker died under it (killed, out of memory): failed, resumable."""
    return {
        "id": Path(job["path"]).name,
        "status": "failed",
        "error": f"its worker died: {type(error).__name__}: {error}",
    }


def _local(jobs: Sequence[Job], workers: int, on_done: Callable[[dict[str, Any]], None]) -> None:
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no forked threads or locks
    counter = context.Value("i", 0)  # which slice of the cores the next worker takes (`share_the_cores`)
    workers = max(1, min(workers, len(jobs)))  # a resume of one run keeps every core
    cores = usable_core_list()
    slices = core_slices(cores, workers) if cores else []
    with _threads_per_worker(max(1, len(cores) // workers) if cores else None):
        _pool(list(jobs), workers, on_done, context, (counter, slices))


@contextlib.contextmanager
def _threads_per_worker(count: int | None) -> Iterator[None]:
    """The math libraries' thread counts (`count` each; None leaves them) in this process's environment while the
    pool spawns its workers (they inherit it); a count the user set is kept."""
    if count is None:
        yield
        return
    threads = str(count)
    saved = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, threads)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)


def _pool(
    pending: list[Job],
    workers: int,
    on_done: Callable[[dict[str, Any]], None],
    context: Any,
    start: tuple[Any, list[list[int]]],
) -> None:
    while pending:  # a pool a dead worker broke is replaced; its run and those in flight are reported failed
        pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_start_worker, initargs=start
        )
        try:
            running = {}
            while pending or running:
                while pending and len(running) < workers:  # only `workers` jobs handed out at a time
                    job = pending.pop(0)
                    running[pool.submit(execute_run, **job)] = job
                done, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in done:
                    job = running.pop(future)
                    try:
                        on_done(future.result())
                    except concurrent.futures.process.BrokenProcessPool as error:
                        on_done(_crashed(job, error))
                        for other in running:
                            on_done(_crashed(running[other], error))
                        running = {}
                        raise
        except concurrent.futures.process.BrokenProcessPool:
            pool.shutdown(wait=False, cancel_futures=True)
            continue
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # Ctrl-C: stop handing out runs at once
            raise
        pool.shutdown()


def _ray(jobs: Sequence[Job], workers: int, on_done: Callable[[dict[str, Any]], None], address: str | None) -> None:
    import ray

    started = not ray.is_initialized()
    # the endpoints' settings travel to the workers (a cluster's nodes do not share this shell's environment)
    env = {k: os.environ[k] for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SANDBOX_CACHE_DIR") if k in os.environ}
    if started:
        if address:  # an existing cluster: its nodes need the sandbox installed and the sweep directory shared
            ray.init(address=address, log_to_driver=False, runtime_env={"env_vars": env})
        else:
            from sandbox.base.local_ray import init_local_ray

            init_local_ray(workers, runtime_env={"env_vars": env})
    remote = ray.remote(num_cpus=1, max_retries=0)(execute_run)
    pending = list(jobs)
    running: dict[Any, Job] = {}
    try:
        while pending or running:
            while pending and len(running) < workers:
                job = pending.pop(0)
                running[remote.remote(**job)] = job
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in done:
                job = running.pop(ref)
                try:
                    on_done(ray.get(ref))
                except ray.exceptions.RayError as error:  # the worker died (killed, out of memory)
                    on_done(_crashed(job, error))
    except BaseException:
        for ref in running:
            ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()


def run_jobs(
    jobs: Sequence[Job],
    *,
    executor: str,
    workers: int,
    on_done: Callable[[dict[str, Any]], None],
    address: str | None = None,
) -> None:
    """Play `jobs` on `executor` (local or ray), `workers` at a time, calling `on_done` with each outcome."""
    if not jobs:
        return
    if executor == "ray":
        _ray(jobs, workers, on_done, address)
    else:
        _local(jobs, workers, on_done)
