"""Pool tasks for tests/test_sweep.py that report a worker's cores (a light module: the spawned workers import it)."""

from __future__ import annotations

import os
import time
from typing import Any

_COUNTER: Any = None


def start(counter: Any, slices: list[list[int]]) -> None:
    """The sweep's worker start, keeping the counter so a task can wait for every worker to have started."""
    global _COUNTER
    from sandbox.sweep.executors import _start_worker

    _COUNTER = counter
    _start_worker(counter, slices)


def cores_of_this_worker(workers: int) -> tuple[int, list[list[int]], str | None]:
    """This worker's pid, every thread's cores, and OMP_NUM_THREADS; held until all `workers` have started, so each
    task runs on a worker of its own."""
    deadline = time.monotonic() + 60
    while _COUNTER.value < workers and time.monotonic() < deadline:
        time.sleep(0.05)
    threads = [sorted(os.sched_getaffinity(int(t))) for t in os.listdir("/proc/self/task")]
    return os.getpid(), threads, os.environ.get("OMP_NUM_THREADS")
