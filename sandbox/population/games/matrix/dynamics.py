"""One generation of a scripted matrix-game population's play: every agent plays a match with each neighbour (and
itself, with `self_play`); the payoffs are accumulated over the neighbours (Nowak & May 1992; Santos & Pacheco
2005), or averaged per neighbour (`revision.payoff: mean`). Revision follows (`sandbox.population.revision.rules`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sandbox.population.games.matrix.strategies import MatchTable
from sandbox.population.network import Neighbours, match_edges

__all__ = ["Matches", "Play", "play", "play_edges"]


@dataclass(frozen=True)
class Play:
    """A generation's play: each agent's payoff (as revision compares it) and its share of C moves."""

    payoff: np.ndarray
    cooperation: np.ndarray


Matches = Callable[[np.ndarray, np.ndarray], np.ndarray]


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
