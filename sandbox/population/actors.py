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
when it was started here.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

import numpy as np

from sandbox.population.dynamics import Neighbours, match_edges, play_edges
from sandbox.population.strategies import MatchTable, payoff_table

__all__ = ["ActorBlocks", "block_bounds"]


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
    does in one process. Use as a context manager: the actors (and a Ray started here) stop on exit."""

    def __init__(self, names: list[str], game: Any, neighbours: Neighbours, actors: int) -> None:
        import ray

        self._started = not ray.is_initialized()
        if self._started:
            ray.init(num_cpus=actors, include_dashboard=False, log_to_driver=False)
        self._actors: list[Any] = []
        try:
            edges = match_edges(neighbours)
            self.bounds = block_bounds(edges[:, 0], actors)
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
        import ray

        return ray.get([actor.edges.remote() for actor in self._actors])

    def __call__(self, strategies: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        import ray

        shared = ray.put(strategies)
        parts = [
            actor.play.remote(shared, seeds[lo:hi]) for actor, lo, hi in zip(self._actors, self.bounds, self.bounds[1:])
        ]
        return np.concatenate(ray.get(parts), axis=1)

    def __enter__(self) -> ActorBlocks:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        import ray

        for actor in self._actors:
            ray.kill(actor)
        if self._started:
            ray.shutdown()
