"""How the embedded model uses the machine: the cores this process may use, its slots and threads.

On a CPU the embedded model's work is the forward pass, and on a few cores
that pass is compute-bound: decoding several calls together in one batch
(llama.cpp's parallel slots) does not raise the total token rate, while each
extra slot splits the cores' time and keeps a prompt cache of its own.
Measured with `sandbox bench embedded` on a 2-core machine: one slot decodes
31.6 tokens/s and prefills about 78 tokens/s; four slots decode fewer tokens
per second in total than one. So `choose_slots` picks one slot
below `MANY_CORES` cores. With more cores the single stream becomes
memory-bound and batching pays, so it picks a slot per `CORES_PER_SLOT` cores,
at most `MAX_SLOTS`. That rule is llama.cpp's usual advice, not a measurement
of this project's: no machine with more than 2 cores was at hand. A scenario's
`embedded.slots` and `embedded.threads` override both choices.
"""

from __future__ import annotations

import os
from pathlib import Path

MANY_CORES = 8
CORES_PER_SLOT = 4
MAX_SLOTS = 4

_CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def _cgroup_limit(path: Path = _CGROUP_CPU_MAX) -> int | None:
    """CPUs allowed by a cgroup v2 quota (`cpu.max` is `QUOTA PERIOD` or `max PERIOD`), or None."""
    try:
        quota, period = path.read_text().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    return max(1, int(int(quota) // int(period)))


def usable_cores(cgroup_cpu_max: Path = _CGROUP_CPU_MAX) -> int:
    """The cores this process may run on: its CPU affinity, capped by a container's CPU quota.

    `os.cpu_count()` counts the host's CPUs, which in a container with a
    quota or a CPU set is more than the process can use.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    limit = _cgroup_limit(cgroup_cpu_max)
    return max(1, min(cores, limit) if limit else cores)


def physical_cores() -> int | None:
    """Physical cores where psutil can tell (hyper-threads share one core's arithmetic units), else None."""
    try:
        import psutil  # installed with accelerate; optional here
    except ImportError:
        return None
    return psutil.cpu_count(logical=False) or None


def choose_slots(cores: int) -> int:
    """Calls the embedded model decodes at once on `cores` cores.

    >>> [choose_slots(c) for c in (1, 2, 4, 7, 8, 12, 16, 64)]
    [1, 1, 1, 1, 2, 3, 4, 4]
    """
    if cores < MANY_CORES:
        return 1
    return min(MAX_SLOTS, cores // CORES_PER_SLOT)


def choose_threads(cores: int, physical: int | None = None) -> int:
    """CPU threads for llama.cpp: one per usable core, and no more than the physical cores.

    A second thread on a hyper-threaded core competes for the same vector
    units and slows the matrix products down.

    >>> choose_threads(2), choose_threads(16, physical=8), choose_threads(4, physical=8)
    (2, 8, 4)
    """
    return max(1, min(cores, physical) if physical else cores)
