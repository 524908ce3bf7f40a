"""Meta-games over fixed instructions, and their meta-solvers: projected replicator dynamics and Nash bargaining.

In the meta-game a player picks one instruction and follows it at every
turn (the paper's PSRO, Section 4); its payoffs are computed exactly on
the expanded tree, not by sampled rollouts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms.projected_replicator_dynamics import projected_replicator_dynamics

from sandbox.dialogue.expand import Tree
from sandbox.dialogue.solve import expected_values, infostates
from sandbox.dialogue.spiel import DialogueSpielGame


def meta_payoffs(tree: Tree) -> np.ndarray:
    """Payoff tensors, shape (players, n_0, ..., n_last): entry [p, i_0, ...] is player p's expected payoff when
    every player q always follows its instruction i_q."""
    game = pyspiel.convert_to_cached_tree(DialogueSpielGame(tree=tree))
    states = infostates(tree)
    sizes = [len(own) for own in tree.game.instructions]
    tensor = np.zeros((len(sizes), *sizes))
    for profile in np.ndindex(*sizes):
        chosen = [tree.game.instructions[p][i] for p, i in enumerate(profile)]
        table = {s.key: [(a, float(i == chosen[s.player])) for a, i in enumerate(s.instructions)] for s in states}
        tensor[(slice(None), *profile)] = expected_values(game, table)
    return tensor


def prd(payoffs: np.ndarray, *, iterations: int = 10_000, dt: float = 1e-3, gamma: float = 1e-6) -> list[np.ndarray]:
    """OpenSpiel's projected replicator dynamics (Lanctot et al., 2017): each player's meta-strategy."""
    return [
        np.asarray(s, dtype=float)
        for s in projected_replicator_dynamics(
            [payoffs[p] for p in range(payoffs.shape[0])], prd_iterations=iterations, prd_dt=dt, prd_gamma=gamma
        )
    ]


def nash_bargaining(
    payoffs: np.ndarray, *, disagreement: np.ndarray | None = None
) -> tuple[list[np.ndarray], np.ndarray]:
    """The Nash bargaining solution over joint instruction profiles: the distribution x that maximises
    sum_p log(u_p(x) - d_p) (a concave problem on the simplex, solved by scipy's SLSQP).

    Args:
        payoffs: Payoff tensors (players, n_0, ..., n_last).
        disagreement: Each player's no-deal value d_p; default one below the least payoff in the meta-game
            (the paper takes the least possible payoff minus a margin).

    Returns:
        Each player's marginal of the solution (what PSRO scores candidates against), and the joint distribution.
    """
    from scipy.optimize import minimize

    players = payoffs.shape[0]
    flat = payoffs.reshape(players, -1)
    d = flat.min(axis=1) - 1.0 if disagreement is None else np.asarray(disagreement, dtype=float)
    size = flat.shape[1]

    def objective(x: np.ndarray) -> float:
        return -float(np.log(np.maximum(flat @ x - d, 1e-300)).sum())

    def gradient(x: np.ndarray) -> np.ndarray:
        return -(flat / np.maximum(flat @ x - d, 1e-300)[:, None]).sum(axis=0)

    result = minimize(
        objective,
        np.full(size, 1.0 / size),
        jac=gradient,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * size,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1.0}],
        options={"ftol": 1e-12, "maxiter": 1000},
    )
    x = np.clip(result.x, 0.0, None)
    joint = (x / x.sum()).reshape(payoffs.shape[1:])
    marginals = [joint.sum(axis=tuple(q for q in range(players) if q != p)) for p in range(players)]
    return marginals, joint


def meta_solve(payoffs: np.ndarray, solver: str, **options: Any) -> list[np.ndarray]:
    """Each player's meta-strategy by `solver` (`prd` or `nash_bargaining`)."""
    if solver == "prd":
        return prd(payoffs, **options)
    if solver == "nash_bargaining":
        return nash_bargaining(payoffs, **options)[0]
    raise ValueError(f"unknown meta-solver {solver!r}: prd or nash_bargaining")


def value_against(payoffs: np.ndarray, player: int, strategies: list[np.ndarray]) -> np.ndarray:
    """Player `player`'s expected payoff of each of its instructions against the others' meta-strategies."""
    tensor = payoffs[player]
    for q in reversed(range(len(strategies))):
        if q != player:
            tensor = np.tensordot(tensor, strategies[q], axes=([q], [0]))
    return np.asarray(tensor, dtype=float)
