"""Matrix games, zero-shot (Kwon et al. §4.2): a 2x2 game as four options, and the set the judge names.

Option A, B, C, D is always "action1/action1", "action1/action2",
"action2/action1", "action2/action2"; the payoffs shown under them are the
game's cells in the regular order or in a scrambled one, which re-assigns
the payoff pairs to the options. The ground truth is computed on what is
shown, so a scrambled listing is judged as the game it displays.

Examples:
    >>> item = matrix_item("kwon_prisoners_dilemma", "scrambled", np.random.default_rng(0))
    >>> [item.shown(letter) for letter in "ABCD"]
    [(5.0, 0.0), (0.0, 5.0), (1.0, 1.0), (3.0, 3.0)]
    >>> sorted(item.truth("welfare"))
    ['D']
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

import prompts
from sandbox.rewards.objectives import JOINT_OUTCOMES, MATRIX_OBJECTIVES, JointOutcome
from sandbox.rewards.parse import OPTION_LETTERS
from sandbox.rules.matrix import MATRIX_GAMES, PayoffTable

__all__ = ["KWON_SCRAMBLED", "MatrixItem", "matrix_item", "random_baseline", "set_score"]

# The paper's fixed scrambled listings (zs_matrix_prompts.py): the game's cell shown under A, B, C, D.
KWON_SCRAMBLED: dict[str, tuple[JointOutcome, ...]] = {
    "kwon_battle_of_the_sexes": (("C", "D"), ("D", "C"), ("C", "C"), ("D", "D")),
    "kwon_prisoners_dilemma": (("D", "C"), ("C", "D"), ("D", "D"), ("C", "C")),
    "kwon_stag_hunt": (("D", "D"), ("C", "C"), ("D", "C"), ("C", "D")),
    "kwon_chicken": (("D", "C"), ("C", "C"), ("C", "D"), ("D", "D")),
}
_ACTION = {"C": "action1", "D": "action2"}


@dataclass(frozen=True)
class MatrixItem:
    """One game as listed to the judge: `order[i]` is the game's cell shown under option letter i."""

    game: PayoffTable
    order: tuple[JointOutcome, ...]

    def shown(self, letter: str) -> tuple[float, float]:
        """The payoff pair listed under `letter`."""
        return self.game.table[self.order[OPTION_LETTERS.index(letter)]]

    def displayed(self) -> PayoffTable:
        """The game the listing shows (payoff pairs re-assigned to the options' action pairs)."""
        return PayoffTable(
            self.game.name, {JOINT_OUTCOMES[i]: self.game.table[cell] for i, cell in enumerate(self.order)}
        )

    def truth(self, objective: str) -> frozenset[str]:
        """The option letters that satisfy `objective` (ties all correct)."""
        cells = MATRIX_OBJECTIVES.get(objective)(self.displayed())
        return frozenset(OPTION_LETTERS[JOINT_OUTCOMES.index(cell)] for cell in cells)

    def options_text(self) -> str:
        """rho1: the multiple-choice listing."""
        options = [
            {
                "letter": letter,
                "p1": _ACTION[JOINT_OUTCOMES[i][0]],
                "p2": _ACTION[JOINT_OUTCOMES[i][1]],
                "u1": f"{self.shown(letter)[0]:g}",
                "u2": f"{self.shown(letter)[1]:g}",
            }
            for i, letter in enumerate(OPTION_LETTERS)
        ]
        return prompts.render("proxy/matrix/options.j2", options=options)

    def question_text(self, objective: str, description: str | None = None) -> str:
        """rho2 + rho4 for `objective` ("none" for the No-Objective baseline)."""
        return prompts.render("proxy/matrix/question.j2", objective=objective, description=description)


def matrix_item(game: str | PayoffTable, order: str, rng: np.random.Generator) -> MatrixItem:
    """The game (a registered name or a table) listed in the regular order, or scrambled (the paper's permutation
    for its games, else one from `rng`)."""
    table = MATRIX_GAMES.get(game) if isinstance(game, str) else game
    if order == "regular":
        return MatrixItem(table, JOINT_OUTCOMES)
    if table.name in KWON_SCRAMBLED:
        return MatrixItem(table, KWON_SCRAMBLED[table.name])
    while True:
        permutation = tuple(JOINT_OUTCOMES[i] for i in rng.permutation(4))
        if permutation != JOINT_OUTCOMES:
            return MatrixItem(table, permutation)


def set_score(answer: frozenset[str] | None, truth: frozenset[str]) -> float:
    """The labeling score of an answer set (inferred from the paper's random baselines, which it reproduces).

    |S ∩ C| / |C| when S is a non-empty subset of C, else 0; an unparsed answer scores 0. Where no option is
    correct (C empty), only the answer "None" scores 1.

    >>> set_score(frozenset("A"), frozenset("AD")), set_score(frozenset("AB"), frozenset("AD"))
    (0.5, 0.0)
    """
    if answer is None:
        return 0.0
    if not truth:
        return 1.0 if not answer else 0.0
    if not answer or not answer <= truth:
        return 0.0
    return len(answer & truth) / len(truth)


def random_baseline(truth: frozenset[str]) -> float:
    """The expected score of an answer drawn uniformly from the 16 subsets of {A, B, C, D} (the empty one included).

    >>> round(sum(random_baseline(t) for t in (frozenset("AD"), frozenset("A"), frozenset("A"), frozenset("ABC"))) / 4, 3)
    0.125
    """
    subsets = [frozenset(c) for k in range(5) for c in combinations(OPTION_LETTERS, k)]
    return sum(set_score(s, truth) for s in subsets) / len(subsets)
