"""Ray actors' lifecycle for a population (`population.actors`): Ray started here unless it already is, every wait
on the actors bounded, and the actors killed however a run stops.

Local Ray is started (one CPU per actor) unless Ray is already initialised,
for example by `ray.init(address=...)` on a cluster, and stopped at the end
when it was started here. A run whose actors have played their last block
stops Ray in a thread of its own (`stop_ray(wait=False)`: Ray's shutdown
waits about a second for its processes) while it writes its tables; the run
waits for that thread before it returns (`ray_stopped`), as does the next
start and the process's exit. Ray starts with the sandbox's settings
(`sandbox.base.local_ray`): its workers at this process's niceness, its
raylet's connect timeout at 100 ms.

Every wait on the actors is bounded by `SANDBOX_ACTOR_TIMEOUT_S` seconds
(`TIMEOUT_S`, 1800, by default: a generous half hour for one block's
matches, the actors' start included); an actor that does not answer in time
stops the run with `RunFailedError`, naming the actor and the step. However
the run stops (that error, Ctrl-C, any exception), its actors are killed on
the way out, and `sandbox resume` starts fresh ones (the error names the run's
directory).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from sandbox.base.errors import RunFailedError, UsageError

if TYPE_CHECKING:
    from ray import ObjectRef
    from ray.actor import ActorHandle

T = TypeVar("T")

__all__ = [
    "TIMEOUT_S",
    "TIMEOUT_VARIABLE",
    "actor_timeout_s",
    "answers_of",
    "block_bounds",
    "kill_actors",
    "ray_started",
    "ray_stopped",
    "stop_ray",
]

TIMEOUT_VARIABLE = "SANDBOX_ACTOR_TIMEOUT_S"
TIMEOUT_S = 1800.0  # the longest wait on an actor, unless TIMEOUT_VARIABLE says otherwise
_stopping: list[threading.Thread] = []  # Ray's shutdowns under way in threads of their own (`stop_ray(wait=False)`)


def actor_timeout_s() -> float:
    """The longest wait on a Ray actor, in seconds: `SANDBOX_ACTOR_TIMEOUT_S` if set, else `TIMEOUT_S` (1800).

    Raises:
        UsageError: the variable is not a number of seconds above 0.
    """
    text = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return TIMEOUT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise UsageError(f"{TIMEOUT_VARIABLE}: {text!r} is not a number of seconds above 0 (default {TIMEOUT_S:g})")
    return seconds


def block_bounds(first: np.ndarray, blocks: int) -> list[int]:
    """Where to cut edges sorted by their first agent (`first`) into `blocks` runs of about equal length, never
    between two edges of the same agent (each cut moves to the nearer end of that agent's edges): the edge indices
    [0, c1, ..., len(first)]."""
    if len(first) == 0:
        return [0] * (blocks + 1)
    cuts = [0]
    for k in range(1, blocks):
        target = k * len(first) // blocks
        left = int(np.searchsorted(first, first[target], side="left"))
        right = int(np.searchsorted(first, first[target], side="right"))
        cuts.append(max(left if target - left <= right - target else right, cuts[-1]))
    return [*cuts, len(first)]


def ray_started(actors: int) -> bool:
    """Start local Ray with a CPU for each of `actors` unless Ray is already initialised (a cluster's
    `ray.init(address=...)`); whether it was started here (`init_local_ray`: its workers at this process's
    niceness, its raylet's connect timeout at 100 ms)."""
    import ray

    from sandbox.base.local_ray import init_local_ray

    ray_stopped()  # a shutdown under way ends first
    if ray.is_initialized():
        return False
    init_local_ray(actors)
    return True


def stop_ray(started: bool, *, wait: bool = True) -> None:
    """Shut Ray down if `ray_started` started it: here, or (`wait=False`) in a thread of its own, which `ray_stopped`,
    the next `ray_started` and the process's exit wait for."""
    if started:
        import ray

        if wait:
            ray.shutdown()
        else:
            thread = threading.Thread(target=ray.shutdown, name="ray-shutdown")
            _stopping.append(thread)
            thread.start()


def ray_stopped() -> None:
    """Wait for Ray's shutdowns under way (`stop_ray(wait=False)`)."""
    while _stopping:
        _stopping.pop().join()


def answers_of(refs: list[ObjectRef[T]], timeout_s: float, late: Callable[[int], str]) -> list[T]:
    """The actors' answers (one each, in order), waiting at most `timeout_s`; `RunFailedError` saying `late(k)` of
    the first actor k that did not answer in time."""
    import ray

    _, waiting = ray.wait(refs, num_returns=len(refs), timeout=timeout_s)
    if waiting:
        raise RunFailedError(late(refs.index(waiting[0])))
    return list(ray.get(refs, timeout=timeout_s))


def kill_actors(actors: list[ActorHandle], started: bool, *, wait: bool = True) -> None:
    """Kill every actor (one already gone must not leave the others running), then stop Ray if it was started here
    (`ray_started`), waiting for its end or not (`stop_ray`)."""
    import ray

    try:
        for actor in actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
    finally:
        stop_ray(started, wait=wait)
