"""Scripted strategies from the `axelrod` library, found by name, and the payoffs of their matches.

Within a generation every pair of neighbours plays a match of `turns` turns.
Two deterministic strategies always play the same match, so the payoffs are
computed once per pair of strategies (`MatchTable`) and looked up per edge;
a pair with a stochastic strategy plays each of its edges' matches with a
seed drawn from the run's seed tree.
"""

from __future__ import annotations

import difflib
import functools
from typing import Any

import numpy as np

from sandbox.games.matrix import MATRIX_GAMES, PayoffTable

__all__ = [
    "MatchTable",
    "axelrod_game",
    "canonical",
    "is_stochastic",
    "payoff_table",
    "strategy_class",
    "strategy_names",
    "symmetric",
]


@functools.cache
def _strategies() -> dict[str, Any]:
    import axelrod as axl

    found: dict[str, Any] = {}
    for cls in axl.all_strategies:
        found.setdefault(cls.name, cls)
        found.setdefault(cls.__name__, cls)
    return found


def strategy_names() -> list[str]:
    """Every axelrod strategy's display name (`axl.TitForTat.name == "Tit For Tat"`)."""
    return sorted({cls.name for cls in _strategies().values()})


def strategy_class(name: str) -> Any:
    """The axelrod strategy class called `name` (its display name or its class name)."""
    try:
        return _strategies()[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_strategies()), n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"unknown axelrod strategy {name!r}{hint}") from None


def canonical(name: str) -> str:
    """The display name of the strategy `name` names."""
    return strategy_class(name).name


def payoff_table(name: str, temptation: float | None = None) -> PayoffTable:
    """The 2x2 table a population plays: a registered matrix game or the weak prisoner's dilemma (T = b)."""
    if name == "weak_prisoners_dilemma":
        b = float(temptation if temptation is not None else 1.5)
        return PayoffTable.from_rows(name, [[[1, 1], [0, b]], [[b, 0], [0, 0]]])
    return MATRIX_GAMES.get(name)


def symmetric(table: PayoffTable) -> bool:
    """Whether both players face the same payoffs (what `axelrod.Game` describes)."""
    return all(table.payoffs(a, b) == table.payoffs(b, a)[::-1] for a in "CD" for b in "CD")


def is_stochastic(name: str) -> bool:
    """Whether the strategy `name` draws random moves (axelrod's `stochastic` classifier)."""
    import axelrod as axl

    return bool(axl.Classifiers["stochastic"](strategy_class(name)()))


def axelrod_game(table: PayoffTable) -> Any:
    """The table as an `axelrod.Game(r, s, t, p)`; a table that is not symmetric is refused."""
    import axelrod as axl

    if not symmetric(table):
        raise ValueError(f"game {table.name!r} is not symmetric; a population plays symmetric games")
    r, s = table.payoffs("C", "C")[0], table.payoffs("C", "D")[0]
    t, p = table.payoffs("D", "C")[0], table.payoffs("D", "D")[0]
    return axl.Game(r=r, s=s, t=t, p=p)


class MatchTable:
    """Payoffs and cooperation of `turns`-turn matches between the population's strategies.

    `payoff[i, j]` is what strategy i scores in total against strategy j, and
    `cooperation[i, j]` the share of i's moves that were C; both exact for two
    deterministic strategies (one match stands for all of them).
    """

    def __init__(self, names: list[str], table: PayoffTable, turns: int) -> None:
        import axelrod as axl

        self.names, self.turns, self.game = names, turns, axelrod_game(table)
        self.classes = [strategy_class(n) for n in names]
        self.stochastic = np.array([axl.Classifiers["stochastic"](c()) for c in self.classes])
        k = len(names)
        self.payoff = np.full((k, k), np.nan)
        self.cooperation = np.full((k, k), np.nan)
        for i in range(k):
            for j in range(k):
                if not (self.stochastic[i] or self.stochastic[j]):
                    self.payoff[i, j], self.cooperation[i, j], _, _ = self.play(i, j, seed=0)

    def play(self, i: int, j: int, seed: int) -> tuple[float, float, float, float]:
        """One match of strategy i against strategy j: i's total payoff and share of C moves, then j's."""
        import axelrod as axl

        match = axl.Match((self.classes[i](), self.classes[j]()), turns=self.turns, game=self.game, seed=seed)
        moves = match.play()
        scores = match.scores()
        own = sum(a for a, _ in scores), sum(b for _, b in scores)
        cooperated = [sum(1 for m in moves if m[side] == axl.Action.C) / len(moves) for side in (0, 1)]
        return float(own[0]), cooperated[0], float(own[1]), cooperated[1]
