"""One generation of a population: every agent plays its neighbours, then revises its strategy.

The payoffs are accumulated over the neighbours (Nowak & May 1992; Santos &
Pacheco 2005), or averaged per neighbour (`revision.payoff: mean`). The
revision is synchronous: every agent decides on the same generation's
payoffs, then all change at once.

* `imitate` (Szabo & Toke 1998): agent x picks a neighbour y uniformly and
  takes y's strategy with probability 1 / (1 + exp(-beta (P_y - P_x))).
* `proportional` (Santos & Pacheco 2005): agent x picks a neighbour y
  uniformly and, when y scored more, takes y's strategy with probability
  (P_y - P_x) / (max(k_x, k_y) D), D the game's payoff range (T - S in the
  prisoner's dilemma).
* `best` (Nowak & May 1992): agent x takes the strategy of the best-scoring
  agent among its neighbours and itself; on a tie it keeps its own, and
  among tied neighbours the lowest-numbered wins (the rule is deterministic;
  payoffs equal but for their last digits tie, so no machine's rounding
  decides, `sandbox.base.rounding`).
* then, with probability `mutation`, a strategy drawn uniformly from the
  members' strategies instead.

Agents of a `fixed` member (zealots) play but never revise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sandbox.base.rounding import below
from sandbox.population.strategies import MatchTable

__all__ = [
    "Matches",
    "Neighbours",
    "Play",
    "match_edges",
    "neighbour_of",
    "network_of",
    "play",
    "play_edges",
    "random_neighbour",
    "revise",
]


@dataclass(frozen=True)
class Neighbours:
    """Who plays whom: the graph's edges and its adjacency in CSR form (`indices[indptr[x]:indptr[x+1]]`), or
    `complete` (every pair meets; no edge list is built)."""

    size: int
    edges: np.ndarray | None  # (E, 2) int64, or None when complete
    indptr: np.ndarray | None
    indices: np.ndarray | None

    @classmethod
    def from_edges(cls, size: int, edges: np.ndarray | None) -> Neighbours:
        if edges is None:
            return cls(size, None, None, None)
        both = np.concatenate([edges, edges[:, ::-1]])
        order = np.lexsort((both[:, 1], both[:, 0]))
        both = both[order]
        indptr = np.zeros(size + 1, dtype=np.int64)
        np.add.at(indptr, both[:, 0] + 1, 1)
        return cls(size, edges, np.cumsum(indptr), both[:, 1].copy())

    @property
    def complete(self) -> bool:
        return self.edges is None

    def degree(self) -> np.ndarray:
        if self.complete:
            return np.full(self.size, self.size - 1, dtype=np.int64)
        return np.diff(self.indptr)


def network_of(agents: int, spec: Any, seed: int) -> tuple[Any, Neighbours]:
    """The scenario's network (`societies.network.Network`, seeded from the run's seed tree) and its neighbours;
    a complete network keeps no edge list."""
    from sandbox.base.seeding import Branch, generator
    from societies.network import build_network

    graph = build_network(agents, spec, generator(seed, Branch.NETWORK))
    edges = None if graph.is_complete else np.array(sorted(graph.to_networkx().edges()), dtype=np.int64)
    return graph, Neighbours.from_edges(agents, edges)


@dataclass(frozen=True)
class Play:
    """A generation's play: each agent's payoff (as revision compares it) and its share of C moves."""

    payoff: np.ndarray
    cooperation: np.ndarray


Matches = Callable[[np.ndarray, np.ndarray], np.ndarray]


def match_edges(neighbours: Neighbours) -> np.ndarray:
    """The pairs that play a match, sorted by their first agent: the graph's edges, or every pair when complete."""
    if neighbours.complete:
        return np.array(np.triu_indices(neighbours.size, 1), dtype=np.int64).T
    return neighbours.edges


def play_edges(table: MatchTable, sa: np.ndarray, sb: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """The matches of the edges whose ends play strategies `sa` and `sb`: rows a's payoff, b's payoff, a's share of
    C moves, b's share; an edge with a stochastic strategy plays its own match with its seed from `seeds`."""
    out = np.stack([table.payoff[sa, sb], table.payoff[sb, sa], table.cooperation[sa, sb], table.cooperation[sb, sa]])
    for e in np.flatnonzero(table.stochastic[sa] | table.stochastic[sb]):
        pay_a, coop_a, pay_b, coop_b = table.play(int(sa[e]), int(sb[e]), seed=int(seeds[e]))
        out[:, e] = pay_a, pay_b, coop_a, coop_b
    return out


def play(
    strategies: np.ndarray,
    table: MatchTable,
    neighbours: Neighbours,
    *,
    self_play: bool,
    mean: bool,
    rng: np.random.Generator,
    matches: Matches | None = None,
) -> Play:
    """Every agent plays each neighbour (and itself, with `self_play`) one match; `matches(strategies, seeds)` plays
    the edges' matches elsewhere (Ray actors, `population.actors`), `play_edges` over every edge when None. The
    seeds are drawn here either way, so where the matches are played changes nothing in the result."""
    n = neighbours.size
    payoff, cooperation = np.zeros(n), np.zeros(n)
    stochastic = table.stochastic[strategies]
    if neighbours.complete and not stochastic.any():
        counts = np.bincount(strategies, minlength=len(table.names)).astype(float)
        present = counts > 0  # an absent stochastic strategy's entries are NaN, and NaN x 0 is NaN
        payoff = (table.payoff[:, present] @ counts[present])[strategies] - table.payoff[strategies, strategies]
        cooperation = (table.cooperation[:, present] @ counts[present])[strategies] - table.cooperation[
            strategies, strategies
        ]
    else:
        edges = match_edges(neighbours)
        a, b = edges[:, 0], edges[:, 1]
        seeds = np.zeros(len(edges), dtype=np.int64)
        random_edges = np.flatnonzero(stochastic[a] | stochastic[b])
        seeds[random_edges] = rng.integers(2**31, size=len(random_edges))
        if matches is None:
            ab_pay, ba_pay, ab_coop, ba_coop = play_edges(table, strategies[a], strategies[b], seeds)
        else:
            ab_pay, ba_pay, ab_coop, ba_coop = matches(strategies, seeds)
        np.add.at(payoff, a, ab_pay)
        np.add.at(payoff, b, ba_pay)
        np.add.at(cooperation, a, ab_coop)
        np.add.at(cooperation, b, ba_coop)
    matches_played = neighbours.degree().astype(float)
    if self_play:
        self_pay, self_coop = table.payoff[strategies, strategies], table.cooperation[strategies, strategies]
        if stochastic.any():
            for x in np.flatnonzero(stochastic):
                self_pay[x], self_coop[x], _, _ = table.play(
                    int(strategies[x]), int(strategies[x]), seed=int(rng.integers(2**31))
                )
        payoff, cooperation = payoff + self_pay, cooperation + self_coop
        matches_played = matches_played + 1
    cooperation = np.divide(cooperation, matches_played, out=np.zeros(n), where=matches_played > 0)
    if mean:
        payoff = np.divide(payoff, matches_played, out=np.zeros(n), where=matches_played > 0)
    return Play(payoff, cooperation)


def random_neighbour(neighbours: Neighbours, rng: np.random.Generator) -> np.ndarray:
    """For each agent, one neighbour drawn uniformly (an isolated agent draws itself)."""
    n = neighbours.size
    if neighbours.complete:
        return (np.arange(n) + rng.integers(1, n, size=n)) % n
    degree = neighbours.degree()
    pick = np.floor(rng.random(n) * np.maximum(degree, 1)).astype(np.int64)
    at = np.minimum(neighbours.indptr[:-1] + pick, len(neighbours.indices) - 1)
    return np.where(degree > 0, neighbours.indices[at], np.arange(n))


def neighbour_of(agent: int, neighbours: Neighbours, rng: np.random.Generator) -> int:
    """One neighbour of `agent`, drawn uniformly (one draw; `random_neighbour` draws one for every agent)."""
    if neighbours.complete:
        return int((agent + rng.integers(1, neighbours.size)) % neighbours.size)
    around = neighbours.indices[neighbours.indptr[agent] : neighbours.indptr[agent + 1]]
    return int(around[rng.integers(len(around))])


def _best_neighbours(payoff: np.ndarray, neighbours: Neighbours) -> tuple[np.ndarray, np.ndarray]:
    """Each agent's best-scoring neighbour (the lowest-numbered of those tied with the best: payoffs equal but for
    their last digits tie, `sandbox.base.rounding`), and whether it scored more than the agent (never an agent
    without neighbours)."""
    assert neighbours.indices is not None, "a complete network has no neighbour lists"
    n, degree, indices = neighbours.size, neighbours.degree(), neighbours.indices
    owner = np.repeat(np.arange(n), degree)
    values = payoff[indices]
    top_value = np.full(n, -np.inf)
    np.maximum.at(top_value, owner, values)
    tied = ~below(values, top_value[owner])
    top = np.full(n, n, dtype=np.int64)
    np.minimum.at(top, owner[tied], indices[tied])
    top = np.where(degree > 0, top, np.arange(n))
    return top, (degree > 0) & below(payoff, payoff[top])


def revise(
    strategies: np.ndarray,
    outcome: Play,
    neighbours: Neighbours,
    *,
    rule: str,
    beta: float,
    mutation: float,
    pool: np.ndarray,
    fixed: np.ndarray,
    rng: np.random.Generator,
    spread: float = 1.0,
) -> np.ndarray:
    """The next generation's strategies (`pool`: the strategy indices mutation draws from; `spread`: the game's
    payoff range D of the proportional rule)."""
    n, payoff = neighbours.size, outcome.payoff
    new = strategies.copy()
    if rule == "imitate":
        model = random_neighbour(neighbours, rng)
        with np.errstate(over="ignore"):
            adopt = rng.random(n) < 1.0 / (1.0 + np.exp(-beta * (payoff[model] - payoff)))
        new = np.where(adopt, strategies[model], strategies)
    elif rule == "proportional":
        model = random_neighbour(neighbours, rng)
        degree = neighbours.degree()
        scale = np.maximum(degree, degree[model]) * spread
        gain = payoff[model] - payoff
        adopt = (gain > 0) & (rng.random(n) < np.divide(gain, scale, out=np.zeros(n), where=scale > 0))
        new = np.where(adopt, strategies[model], strategies)
    elif rule == "best":
        if neighbours.complete:
            best = int(np.flatnonzero(~below(payoff, payoff.max()))[0])  # the lowest-numbered of the best
            new = np.where(below(payoff, payoff[best]), strategies[best], strategies)
        else:
            top, switch = _best_neighbours(payoff, neighbours)
            new = np.where(switch, strategies[top], strategies)
    elif rule != "mutate":  # mutate: mutation alone changes strategies
        raise ValueError(f"unknown revision rule {rule!r}")
    if mutation > 0:
        mutate = rng.random(n) < mutation
        new = np.where(mutate, pool[rng.integers(len(pool), size=n)], new)
    return np.where(fixed, strategies, new)
