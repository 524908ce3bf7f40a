"""Local Ray, started the one way the sandbox starts it: for a sweep's workers (`sandbox.sweep.executors`), a
population's actors (`sandbox.population.actors.lifecycle`) and the sweep's benchmark.

Two of Ray's settings are changed (`LOCAL_RAY_CONFIG`), both measured on this project's 2-core machine:

* `worker_niceness: 0`: the workers run at this process's niceness, not at Ray's default of 15. On a busy machine a
  worker at 15 gets a few per cent of a core: a population's actors took longer than pytest's half hour to import
  axelrod (about 20 s of CPU).
* `raylet_client_connect_timeout_milliseconds: 100` (Ray's default: 1,000): about 2 starts in 5 took 3.2 s, not
  2.2 s, the raylet waiting a whole second between its object store's start and its object manager's; with the
  timeout at 100 ms, 14 starts in 14 took 2.2 s.

Ray is imported only when called (the `scale` extra).
"""

from __future__ import annotations

from typing import Any

__all__ = ["LOCAL_RAY_CONFIG", "init_local_ray"]

LOCAL_RAY_CONFIG: dict[str, Any] = {"worker_niceness": 0, "raylet_client_connect_timeout_milliseconds": 100}


def init_local_ray(cpus: int, **options: Any) -> None:
    """`ray.init` of a local Ray with `cpus` CPUs, no dashboard, no worker logs on this process's stderr and
    `LOCAL_RAY_CONFIG`; `options` go to `ray.init` as they are (a sweep's `runtime_env`)."""
    import ray

    ray.init(
        num_cpus=cpus, include_dashboard=False, log_to_driver=False, _system_config=dict(LOCAL_RAY_CONFIG), **options
    )
