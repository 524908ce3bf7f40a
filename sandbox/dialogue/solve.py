"""Solving an expanded dialogue game with OpenSpiel's C++ solvers, and the paper's metrics.

CFR (or CFR+) runs on `pyspiel.convert_to_cached_tree` of the binding, so
the Python states are walked once. The metrics are those of the paper's
Table 1: NashConv of the solved profile, and CFR Gain, the gain of one
player switching from the all-"any" profile to the solver's policy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pyspiel

from sandbox.dialogue.expand import Tree
from sandbox.dialogue.spiel import DialogueSpielGame
from sandbox.rules.dialogue import ANY

Algorithm = Literal["cfr", "cfr_plus"]
# A policy table: information state -> [(action, probability)], as pyspiel.TabularPolicy takes it.
Table = dict[str, list[tuple[int, float]]]


@dataclass(frozen=True)
class InfoState:
    """One information state of the tree: its string, player, instructions and a node where it is reached."""

    key: str
    player: int
    instructions: tuple[str, ...]
    node: int


def infostates(tree: Tree) -> list[InfoState]:
    """Every information state of the tree, in the order the expansion reached them."""
    seen: dict[str, InfoState] = {}
    for node in tree.nodes:
        if node.kind == "decision":
            key = tree.game.infostate(node.setup, node.dialogue, node.player)
            seen.setdefault(key, InfoState(key, node.player, tree.game.choices(node.dialogue, node.player), node.id))
    return list(seen.values())


def fixed_table(tree: Tree, choose: Callable[[InfoState], Mapping[int, float]]) -> Table:
    """A policy table that gives each information state the distribution `choose` returns."""
    return {s.key: sorted(choose(s).items()) for s in infostates(tree)}


def any_table(tree: Tree) -> Table:
    """Every player always follows the baseline instruction "any" (uniform where a player has none)."""

    def choose(state: InfoState) -> dict[int, float]:
        if ANY in state.instructions:
            return {a: float(i == ANY) for a, i in enumerate(state.instructions)}
        return {a: 1.0 / len(state.instructions) for a in range(len(state.instructions))}

    return fixed_table(tree, choose)


def mix(tree: Tree, tables: Sequence[Table]) -> Table:
    """Player p plays `tables[p]` (each table may cover every player; only p's states are taken from it)."""
    return {s.key: tables[s.player][s.key] for s in infostates(tree)}


@dataclass
class Solution:
    """A solved game: the average policy table and what the solver and the metrics measured."""

    table: Table
    iterations: int
    nash_conv: float
    values: list[float]  # the solved profile's expected payoffs
    any_values: list[float]  # all players on "any"
    solver_vs_any: list[float]  # per player p: p's payoff playing the solver's policy, the others "any"
    cfr_gain: list[float]  # per player: solver_vs_any[p] - any_values[p]


def expected_values(game: Any, table: Table) -> list[float]:
    """The profile's expected payoffs (exact, over the whole tree)."""
    return list(pyspiel.expected_returns(game.new_initial_state(), pyspiel.TabularPolicy(table), -1, True))


def solve(
    tree: Tree,
    *,
    algorithm: Algorithm = "cfr",
    iterations: int = 1000,
    on_iteration: Callable[[int], None] | None = None,
) -> Solution:
    """Run CFR (or CFR+) on the tree's cached pyspiel game; measure NashConv and CFR Gain against "any"."""
    game = pyspiel.convert_to_cached_tree(DialogueSpielGame(tree=tree))
    solver = pyspiel.CFRPlusSolver(game) if algorithm == "cfr_plus" else pyspiel.CFRSolver(game)
    for i in range(iterations):
        solver.evaluate_and_update_policy()
        if on_iteration:
            on_iteration(i + 1)
    average = solver.average_policy()
    table: Table = {
        s.key: [(a, float(average.get_state_policy(s.key)[a][1])) for a in range(len(s.instructions))]
        for s in infostates(tree)
    }
    table = {key: _normalised(probs) for key, probs in table.items()}
    return evaluate(tree, table, iterations=iterations, game=game)


def _normalised(probs: list[tuple[int, float]]) -> list[tuple[int, float]]:
    total = sum(p for _, p in probs)
    return [(a, p / total) for a, p in probs] if total > 0 else [(a, 1.0 / len(probs)) for a, _ in probs]


def evaluate(tree: Tree, table: Table, *, iterations: int = 0, game: Any = None) -> Solution:
    """NashConv of `table`, its values, and its CFR Gain against the all-"any" profile."""
    game = game or pyspiel.convert_to_cached_tree(DialogueSpielGame(tree=tree))
    baseline = any_table(tree)
    players = tree.game.num_players
    values = expected_values(game, table)
    any_values = expected_values(game, baseline)
    solver_vs_any = []
    for p in range(players):
        tables = [table if q == p else baseline for q in range(players)]
        solver_vs_any.append(expected_values(game, mix(tree, tables))[p])
    nash_conv = float(pyspiel.nash_conv(game, pyspiel.TabularPolicy(table), True))
    return Solution(
        table,
        iterations,
        nash_conv,
        values,
        any_values,
        solver_vs_any,
        [solver_vs_any[p] - any_values[p] for p in range(players)],
    )
