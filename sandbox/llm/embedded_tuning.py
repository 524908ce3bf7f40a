"""How the embedded model uses the machine: usable cores, slots and threads, and the settings that say so.

A society's calls on the embedded model are mostly prompt: `make run`
computes about 3,000 prompt tokens and generates 170. On a CPU, computing a
prompt (prefill) is compute-bound whatever the number of slots: about 78
tokens/s on 2 cores. Decoding several calls in one batch (llama.cpp's slots)
raises the generated tokens per second, but each slot holds its own prompt,
and a shared prefix is computed again in every slot that needs it. Measured
with `sandbox bench embedded` on a 2-core machine:

* decoding: 29.6 tokens/s with 1 slot, 30.7 with 2, 38.4 with 4 (1.30x);
* the `make run` society: 44.3 s with 1 slot, 53.4 s with 4;
* the norm-fidelity scenario (240 calls): 251 s with 1 slot, 270 s with 4.

So `choose_slots` picks one slot below `MANY_CORES` cores. With more cores,
prefill has more arithmetic to spare and batching pays more, so it picks a
slot per `CORES_PER_SLOT` cores, at most `MAX_SLOTS`. That rule is llama.cpp's
usual advice, not a measurement of this project's: no machine with more than
2 cores was at hand. A scenario's `embedded:` block (`EmbeddedSettings`)
overrides both choices.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

MANY_CORES = 8
CORES_PER_SLOT = 4
MAX_SLOTS = 4

_CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def _cgroup_limit(path: Path = _CGROUP_CPU_MAX) -> int | None:
    """CPUs allowed by a cgroup v2 quota (`cpu.max` reads `QUOTA PERIOD` or `max PERIOD`), or None.

    Only the process's cgroup v2 root file is read; a cgroup v1 quota is not seen.
    """
    try:
        quota, period = path.read_text().split()[:2]
        if quota == "max":
            return None
        return max(1, int(quota) // int(period))
    except (OSError, ValueError, ZeroDivisionError):
        return None


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
    """The host's physical cores where psutil can tell, else None.

    Hyper-threads share a core's vector units. This counts the whole host, not
    the process's CPU set, so it only caps threads on a machine used whole.
    """
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
    """CPU threads for llama.cpp: one per usable core, and no more than the physical cores when known.

    >>> choose_threads(2), choose_threads(16, physical=8), choose_threads(4, physical=8)
    (2, 8, 4)
    """
    return max(1, min(cores, physical) if physical else cores)


@lru_cache(maxsize=1)
def machine() -> tuple[int, int | None]:
    """This process's usable cores and the host's physical cores (read once: they do not change in a run)."""
    return usable_cores(), physical_cores()


class EmbeddedSettings(BaseModel):
    """How the in-process embedded model uses this machine; one server serves every role that names `embedded`.

    By default the slots and threads are chosen from the cores this process
    may use: on fewer than 8 cores, one slot and a thread per core.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    slots: int | None = Field(
        None, ge=1, le=64, description="Calls decoded at once; default: 1 below 8 cores, else one per 4 cores (max 4)."
    )
    threads: int | None = Field(None, ge=1, le=1024, description="CPU threads; default: the usable physical cores.")
    context_per_slot: int = Field(2048, ge=256, le=131072, description="Context tokens per slot.")
    prompt_cache_mib: int = Field(
        2048,
        ge=0,
        le=1_048_576,
        description="Host memory for prompts kept between calls, so shared prefixes are computed once; 0 = none.",
    )

    def resolve(self, path: str) -> ServerSettings:
        """The settings of a server for the model file `path` on this machine, its choices filled in."""
        cores, physical = machine()
        return ServerSettings(
            path=path,
            slots=self.slots or choose_slots(cores),
            context_per_slot=self.context_per_slot,
            threads=self.threads or choose_threads(cores, physical),
            prompt_cache_mib=self.prompt_cache_mib,
        )


@dataclass(frozen=True)
class ServerSettings:
    """Everything a loaded server is keyed by, every choice made."""

    path: str
    slots: int
    context_per_slot: int
    threads: int
    prompt_cache_mib: int

    def machine(self) -> dict[str, int]:
        """The choices, for a run's summary: what ran, whatever the scenario left to the machine."""
        return {
            "slots": self.slots,
            "threads": self.threads,
            "context_per_slot": self.context_per_slot,
            "prompt_cache_mib": self.prompt_cache_mib,
            "usable_cores": machine()[0],
        }
