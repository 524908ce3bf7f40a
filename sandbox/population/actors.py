"""A generation's matches played on Ray actors, one block of agents each (`population.actors`).

AgentSociety (arXiv 2502.08691) runs large populations by grouping agents
into Ray actors. Here the pairs that play (the graph's edges, sorted by
their first agent) are cut into as many contiguous blocks as there are
actors, of about the same number of edges and cut between agents: each
actor holds the edges of its block of agents and its own copy of the match
table, and each generation receives the strategies and the stochastic
matches' seeds and plays its block. The seeds are drawn by the driver, in
the order the in-process play draws them, so a run writes the same tables
with any number of actors; only the time differs.

Local Ray is started (one CPU per actor) unless Ray is already initialised,
for example by `ray.init(address=...)` on a cluster, and stopped at the end
when it was started here. Its workers run at this process's niceness, not at
Ray's default of 15: on a busy machine a worker at 15 gets a few per cent of
a core, and the actors' start (axelrod's import, about 20 s of CPU) took
longer than pytest's half hour.

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
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from sandbox.base.errors import RunFailedError, UsageError
from sandbox.population.dynamics import Neighbours, match_edges, play_edges
from sandbox.population.strategies import MatchTable, payoff_table

__all__ = [
    "TIMEOUT_S",
    "TIMEOUT_VARIABLE",
    "ActorBlocks",
    "actor_timeout_s",
    "answers_of",
    "block_bounds",
    "kill_actors",
    "ray_started",
    "stop_ray",
]

TIMEOUT_VARIABLE = "SANDBOX_ACTOR_TIMEOUT_S"
TIMEOUT_S = 1800.0  # the longest wait on an actor, unless TIMEOUT_VARIABLE says otherwise


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
    `ray.init(address=...)`); whether it was started here. Its workers run at this process's niceness: Ray's
    default, 15, starves them on a busy machine."""
    import ray

    if ray.is_initialized():
        return False
    ray.init(num_cpus=actors, include_dashboard=False, log_to_driver=False, _system_config={"worker_niceness": 0})
    return True


def stop_ray(started: bool) -> None:
    """Shut Ray down if `ray_started` started it."""
    if started:
        import ray

        ray.shutdown()


def answers_of(refs: list[Any], timeout_s: float, late: Callable[[int], str]) -> list[Any]:
    """The actors' answers (one each, in order), waiting at most `timeout_s`; `RunFailedError` saying `late(k)` of
    the first actor k that did not answer in time."""
    import ray

    _, waiting = ray.wait(refs, num_returns=len(refs), timeout=timeout_s)
    if waiting:
        raise RunFailedError(late(refs.index(waiting[0])))
    return list(ray.get(refs, timeout=timeout_s))


def kill_actors(actors: list[Any], started: bool) -> None:
    """Kill every actor (one already gone must not leave the others running), then stop Ray if it was started here
    (`ray_started`)."""
    import ray

    try:
        for actor in actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
    finally:
        stop_ray(started)


class _Block:
    """One actor: the edges of a block of agents and the match table, rebuilt from the game's settings."""

    def __init__(self, names: list[str], game: str, temptation: float | None, turns: int, edges: np.ndarray) -> None:
        self.table = MatchTable(names, payoff_table(game, temptation), turns)
        self.a, self.b = edges[:, 0].copy(), edges[:, 1].copy()

    def edges(self) -> int:
        return len(self.a)

    def play(self, strategies: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        return play_edges(self.table, strategies[self.a], strategies[self.b], seeds)


class ActorBlocks:
    """The population's Ray actors; called with (strategies, seeds) it returns every edge's matches, as `play_edges`
    does in one process. Use as a context manager: the actors (and a Ray started here) stop on exit, however it is
    left. `timeout_s`: the longest wait on the actors (`actor_timeout_s()` when None); `run_dir`: the run they play
    for, which the timeout's error says to resume."""

    def __init__(
        self,
        names: list[str],
        game: Any,
        neighbours: Neighbours,
        actors: int,
        *,
        timeout_s: float | None = None,
        run_dir: Path | str | None = None,
    ) -> None:
        import ray

        self.timeout_s = actor_timeout_s() if timeout_s is None else timeout_s
        self.run_dir = run_dir
        self._started = ray_started(actors)
        self._actors: list[Any] = []
        try:
            edges = match_edges(neighbours)
            self._first = edges[:, 0]
            self.bounds = block_bounds(self._first, actors)
            remote = ray.remote(num_cpus=1)(_Block)
            self._actors = [
                remote.remote(names, game.name, game.temptation, game.turns, edges[lo:hi])
                for lo, hi in zip(self.bounds, self.bounds[1:])
            ]
        except BaseException:
            self.__exit__(None, None, None)  # no Ray left running behind a failed start
            raise

    def wait(self) -> list[int]:
        """Wait until every actor has started; the number of edges each holds."""
        return self._get([actor.edges.remote() for actor in self._actors], "its start")

    def __call__(self, strategies: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        import ray

        shared = ray.put(strategies)
        parts = [
            actor.play.remote(shared, seeds[lo:hi]) for actor, lo, hi in zip(self._actors, self.bounds, self.bounds[1:])
        ]
        return np.concatenate(self._get(parts, "its block of a generation's matches (its start included)"), axis=1)

    def _get(self, refs: list[Any], step: str) -> list[Any]:
        """The actors' answers (one each, in order), waiting at most `timeout_s`; `RunFailedError` naming the first
        actor that did not answer in time and `step`, what it was asked."""

        def late(k: int) -> str:
            lo, hi = self.bounds[k], self.bounds[k + 1]
            agents = f"the edges of agents {self._first[lo]} to {self._first[hi - 1]}" if hi > lo else "no edges"
            return (
                f"Ray actor {k + 1} of {len(refs)} ({agents}) did not finish {step} within {self.timeout_s:g} s "
                f"({TIMEOUT_VARIABLE}); the run stops and its actors are killed. It can be resumed with `sandbox resume "
                f"{self.run_dir or 'RUN_DIR'}` (on a slow or busy machine, raise {TIMEOUT_VARIABLE} first)"
            )

        return answers_of(refs, self.timeout_s, late)

    def __enter__(self) -> ActorBlocks:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        actors, self._actors = self._actors, []  # handles of killed actors are never used again: a resume starts anew
        kill_actors(actors, self._started)
