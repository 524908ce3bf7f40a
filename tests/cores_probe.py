"""A pool task for tests/test_sweep.py that reports the worker's cores (a light module: the spawned workers import it)."""

from __future__ import annotations

import os
import time


def cores_of_this_worker() -> tuple[int, list[int], str | None]:
    time.sleep(3.0)  # hold the worker, so the pool hands the other task to the other worker
    return os.getpid(), sorted(os.sched_getaffinity(0)), os.environ.get("OMP_NUM_THREADS")
