"""How agents revise a strategy held as a number (a scripted population): every agent compares its payoff with its
neighbours' after a generation's play.

The revision is synchronous: every agent decides on the same generation's
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

from typing import NamedTuple

import numpy as np

from sandbox.base.rounding import below
from sandbox.population.network import Neighbours, random_neighbour

__all__ = ["Revision", "fermi", "revise"]


class Revision(NamedTuple):
    """A revision's next strategies, and each agent's source: the agent whose strategy it took (-1: none)."""

    strategies: np.ndarray
    sources: np.ndarray


def fermi(beta: float, gain: np.ndarray) -> np.ndarray:
    """The Fermi rule's adoption probability 1/(1+exp(-beta gain)) (Szabo & Toke 1998), overflow-safe."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-beta * gain))


def _best_neighbours(payoff: np.ndarray, neighbours: Neighbours) -> tuple[np.ndarray, np.ndarray]:
    """Each agent's best-scoring neighbour (the lowest-numbered of those tied with the best: payoffs equal but for
    their last digits tie, `sandbox.base.rounding`), and whether it scored more than the agent (never an agent
    without neighbours)."""
    _, _, indices = neighbours.csr()
    n, degree = neighbours.size, neighbours.degree()
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
    payoff: np.ndarray,
    neighbours: Neighbours,
    *,
    rule: str,
    beta: float,
    mutation: float,
    pool: np.ndarray,
    fixed: np.ndarray,
    rng: np.random.Generator,
    spread: float = 1.0,
) -> Revision:
    """The next generation's strategies, from each agent's `payoff` (`pool`: the strategy indices mutation draws
    from; `spread`: the game's payoff range D of the proportional rule), and for each agent the agent whose strategy
    it took (-1: it kept its own, or mutated): the network view's lineage."""
    n = neighbours.size
    new = strategies.copy()
    source = np.full(n, -1, dtype=np.int64)
    if rule == "imitate":
        model = random_neighbour(neighbours, rng)
        adopt = rng.random(n) < fermi(beta, payoff[model] - payoff)
        new = np.where(adopt, strategies[model], strategies)
        source = np.where(adopt, model, -1)
    elif rule == "proportional":
        model = random_neighbour(neighbours, rng)
        degree = neighbours.degree()
        scale = np.maximum(degree, degree[model]) * spread
        gain = payoff[model] - payoff
        adopt = (gain > 0) & (rng.random(n) < np.divide(gain, scale, out=np.zeros(n), where=scale > 0))
        new = np.where(adopt, strategies[model], strategies)
        source = np.where(adopt, model, -1)
    elif rule == "best":
        if neighbours.complete:
            best = int(np.flatnonzero(~below(payoff, payoff.max()))[0])  # the lowest-numbered of the best
            switch = below(payoff, payoff[best])
            new = np.where(switch, strategies[best], strategies)
            source = np.where(switch, best, -1)
        else:
            top, switch = _best_neighbours(payoff, neighbours)
            new = np.where(switch, strategies[top], strategies)
            source = np.where(switch, top, -1)
    elif rule != "mutate":  # mutate: mutation alone changes strategies
        raise ValueError(f"unknown revision rule {rule!r}")
    if mutation > 0:
        mutate = rng.random(n) < mutation
        new = np.where(mutate, pool[rng.integers(len(pool), size=n)], new)
        source = np.where(mutate, -1, source)
    return Revision(np.where(fixed, strategies, new), np.where(fixed, -1, source))
