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

The actors' lifecycle (Ray's start, the timeout, the kill) is `sandbox.population.actors.lifecycle`'s.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from sandbox.population.actors.lifecycle import (
    TIMEOUT_VARIABLE,
    actor_timeout_s,
    answers_of,
    block_bounds,
    kill_actors,
    ray_started,
)
from sandbox.population.games.matrix.dynamics import play_edges
from sandbox.population.games.matrix.strategies import MatchTable, payoff_table
from sandbox.population.network import Neighbours, match_edges

if TYPE_CHECKING:
    from ray import ObjectRef

    from sandbox.population.games.matrix.spec import MatrixSpec

__all__ = ["ActorBlocks"]

T = TypeVar("T")  # what an actor answers


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
        game: MatrixSpec,
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
        self._actors: list[Any] = []  # `_Block` handles: Ray types a handle's methods as Never, so none is typed
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

    def _get(self, refs: list[ObjectRef[T]], step: str) -> list[T]:
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
