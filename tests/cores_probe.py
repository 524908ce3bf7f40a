"""Pool tasks for tests/test_sweep.py that report a worker's cores (a light module: the spawned workers import it)."""

from __future__ import annotations

import os
import time
from typing import Any

_RUNNING: Any = None


def start(counter: Any, slices: list[list[int]], running: Any) -> None:
    """The sweep's worker start, keeping a shared count of the tasks running so a task can wait for the others."""
    global _RUNNING
    from sandbox.sweep.executors import _start_worker

    _RUNNING = running
    _start_worker(counter, slices)


def cores_of_this_worker(workers: int) -> tuple[int, list[list[int]], str | None]:
    """This worker's pid, every thread's cores, and OMP_NUM_THREADS; held until `workers` tasks are running at once, so
    each runs on a worker of its own (waiting only for the workers to have started let a worker that finished first
    take the second task too, before the second worker asked for one)."""
    with _RUNNING.get_lock():
        _RUNNING.value += 1
    deadline = time.monotonic() + 120
    while _RUNNING.value < workers and time.monotonic() < deadline:
        time.sleep(0.05)
    threads = [sorted(os.sched_getaffinity(int(t))) for t in os.listdir("/proc/self/task")]
    return os.getpid(), threads, os.environ.get("OMP_NUM_THREADS")
