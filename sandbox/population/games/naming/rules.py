"""The naming game: conventions that emerge from pairwise coordination, and the committed minority that flips one.

Two forms:

* **The LLM coordination game** of Ashery, Aiello & Baronchelli (2025; code
  `Ariel-Flint-Ashery/AI-norms`): a random agent and a random neighbour both
  pick a name from `words` at once; the same name pays both `reward` (100),
  different names `penalty` (-50) (`coordination_payoff`); each agent
  remembers its last `memory` (5) interactions; the population has
  converged after `3 N` successes in a row (`Convergence`). The LLM loop
  that plays it is the population kind's to come.
* **The minimal naming game** of the theory (Baronchelli et al. 2006), the
  scripted baseline (`minimal_naming_game`): the speaker says a random name
  of its inventory (inventing one when it has none); a hearer who knows it
  agrees and both keep only that name, else the hearer adds it. With a
  committed minority (Xie et al. 2011) the others start with name A and
  the committed hold B and never change; above a committed share of about
  0.098 (complete graph) B takes over in a time that grows as log N, below
  it A holds for a time exponential in N. This loop is the small reference;
  `sandbox.population.games.naming.dynamics` plays the same rule for whole populations
  (sequentially or by disjoint pairs), which a population with
  `game: {kind: naming, play: scripted}` runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Convergence", "NamingOutcome", "coordination_payoff", "minimal_naming_game", "tipping_share"]


def coordination_payoff(a: str, b: str, reward: float = 100.0, penalty: float = -50.0) -> tuple[float, float]:
    """Both players' payoffs: `reward` each for the same name, `penalty` each for different ones.

    >>> coordination_payoff("Q", "Q")
    (100.0, 100.0)
    >>> coordination_payoff("Q", "M")
    (-50.0, -50.0)
    """
    return (reward, reward) if a == b else (penalty, penalty)


@dataclass
class Convergence:
    """Ashery et al.'s criterion: converged after `3 N` successful interactions in a row."""

    agents: int
    run: int = 0

    def update(self, success: bool) -> bool:
        """Record one interaction; True once the population has converged.

        Examples:
            >>> c = Convergence(agents=1)
            >>> [c.update(s) for s in (True, True, False, True, True, True)]
            [False, False, False, False, False, True]
        """
        self.run = self.run + 1 if success else 0
        return self.run >= 3 * self.agents


@dataclass
class NamingOutcome:
    """A minimal naming game: when the population agreed (interactions, None if not within the horizon), on which
    name, and every `N` interactions the share of agents that hold only the committed name B (or, without a
    committed minority, only the most held name)."""

    consensus: int | None
    name: int | None
    shares: list[float] = field(default_factory=list)


Pick = Callable[[int, np.random.Generator], int]


def minimal_naming_game(
    agents: int, rng: np.random.Generator, *, committed: int = 0, horizon: int, neighbour: Pick | None = None
) -> NamingOutcome:
    """Play the minimal naming game for at most `horizon` interactions (`neighbour(speaker, rng)`: a hearer; by
    default any other agent, a complete graph). With `committed` > 0, agents 0..committed-1 hold name 1 (B) and
    never change, and the others start with name 0 (A); without, everyone starts with no name and invents."""
    pick = neighbour or (lambda x, r: int((x + r.integers(1, agents)) % agents))
    inventories: list[set[int]] = (
        [{1} if i < committed else {0} for i in range(agents)] if committed else [set() for _ in range(agents)]
    )
    fixed = np.arange(agents) < committed
    invented = 1 if committed else -1
    outcome = NamingOutcome(None, None)
    for t in range(horizon):
        speaker = int(rng.integers(agents))
        hearer = pick(speaker, rng)
        own = inventories[speaker]
        if not own:
            invented += 1
            own.add(invented)
        name = sorted(own)[int(rng.integers(len(own)))]
        if name in inventories[hearer]:
            for x in (speaker, hearer):
                if not fixed[x]:
                    inventories[x] = {name}
        elif not fixed[hearer]:
            inventories[hearer].add(name)
        if (t + 1) % agents == 0:
            outcome.shares.append(_share(inventories, committed))
        if _agreed(inventories, committed, name):
            return NamingOutcome(t + 1, name, outcome.shares)
    return outcome


def _share(inventories: list[set[int]], committed: int) -> float:
    if committed:
        return sum(inv == {1} for inv in inventories) / len(inventories)
    singles = [next(iter(inv)) for inv in inventories if len(inv) == 1]
    return max(singles.count(w) for w in set(singles)) / len(inventories) if singles else 0.0


def _agreed(inventories: list[set[int]], committed: int, name: int) -> bool:
    target = {1} if committed else {name}
    return all(inv == target for inv in inventories)


def tipping_share(agents: int, shares: list[float], seeds: int, horizon_per_agent: int) -> float | None:
    """The smallest committed share (of `shares`, ascending) whose minority makes every one of `seeds` runs agree
    on B within `horizon_per_agent` x N interactions; None if none does."""
    for share in sorted(shares):
        committed = max(1, round(share * agents))
        flips = [
            minimal_naming_game(
                agents, np.random.default_rng(s), committed=committed, horizon=horizon_per_agent * agents
            ).consensus
            is not None
            for s in range(seeds)
        ]
        if all(flips):
            return share
    return None
