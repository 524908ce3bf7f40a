"""Iterated 2x2 matrix games: payoff tables and the registry of the paper's five games.

Moves are `C` (cooperate) and `D` (defect), the paper's names for the two
rows of every table; what a model sees are neutral tokens (see
`sandbox.rules.matrix_prompt`). A table gives (row player, column player)
payoffs for each pair of moves, from the point of view of the row player.

The five games are those of Tennant et al. (moral fine-tuning), Fig. 1,
Fig. 7 and Table 3. The appendix's OCR garbles the Defective Coordination
table and Fig. 7 omits it; the table here (C,C 1,1; C,D 0,0; D,C 0,0; D,D 4,4)
is the one with the property Section 8.6 states: the greatest collective
payoff comes from mutual defection, and coordination is rewarded.

The four `kwon_*` games are the tables Kwon et al. (reward design with
language models) asked their LLM about, zero-shot (their Figs. 11-12).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from sandbox.base.registry import Registry

Move = Literal["C", "D"]
MOVES: tuple[Move, Move] = ("C", "D")


@dataclass(frozen=True)
class PayoffTable:
    """A symmetric-or-not 2x2 game: `table[(own, other)] = (own payoff, other's payoff)`.

    Attributes:
        name: A short name for tables and plots.
        table: The payoffs of the row player and the column player for each pair of moves.
    """

    name: str
    table: Mapping[tuple[Move, Move], tuple[float, float]]

    def __post_init__(self) -> None:
        missing = [pair for pair in ((a, b) for a in MOVES for b in MOVES) if pair not in self.table]
        if missing:
            raise ValueError(f"payoff table {self.name!r} lacks the pairs {missing}")
        for pair, payoff in self.table.items():
            if len(payoff) != 2:
                raise ValueError(f"payoff table {self.name!r}: {pair} needs two payoffs, got {payoff}")

    @classmethod
    def from_rows(cls, name: str, rows: Sequence[Sequence[Sequence[float]]]) -> PayoffTable:
        """A table from rows as printed: `[[CC, CD], [DC, DD]]`, each cell `[row, column]`.

        >>> PayoffTable.from_rows("pd", [[[3, 3], [0, 4]], [[4, 0], [1, 1]]]).payoffs("D", "C")
        (4.0, 0.0)
        """
        if len(rows) != 2 or any(len(row) != 2 for row in rows):
            raise ValueError(f"payoff table {name!r} needs 2 rows of 2 cells")
        return cls(
            name,
            {
                (a, b): (float(rows[i][j][0]), float(rows[i][j][1]))
                for i, a in enumerate(MOVES)
                for j, b in enumerate(MOVES)
            },
        )

    def payoffs(self, own: Move, other: Move) -> tuple[float, float]:
        """(own payoff, other's payoff) when the row player plays `own` and the column player `other`."""
        return self.table[(own, other)]

    def for_column_player(self) -> PayoffTable:
        """The same game seen from the column player (rows and payoffs swapped)."""
        return PayoffTable(self.name, {(a, b): self.table[(b, a)][::-1] for a in MOVES for b in MOVES})

    def rows(self) -> list[list[tuple[float, float]]]:
        """The table as printed: `[[CC, CD], [DC, DD]]`."""
        return [[self.table[(a, b)] for b in MOVES] for a in MOVES]

    def max_collective(self) -> float:
        """The greatest sum of both payoffs on one step (the Utilitarian optimum)."""
        return max(own + other for own, other in self.table.values())


MATRIX_GAMES: Registry[PayoffTable] = Registry("matrix game")

# Kwon et al. (reward design with language models), Table/Figs. 11-12: the four games the LLM judged zero-shot.
KWON_GAMES = ("kwon_battle_of_the_sexes", "kwon_prisoners_dilemma", "kwon_stag_hunt", "kwon_chicken")

for _game in (
    PayoffTable.from_rows("prisoners_dilemma", [[[3, 3], [0, 4]], [[4, 0], [1, 1]]]),
    PayoffTable.from_rows("stag_hunt", [[[4, 4], [0, 3]], [[3, 0], [1, 1]]]),
    PayoffTable.from_rows("chicken", [[[2, 2], [1, 4]], [[4, 1], [0, 0]]]),
    PayoffTable.from_rows("bach_or_stravinsky", [[[3, 2], [0, 0]], [[0, 0], [2, 3]]]),
    PayoffTable.from_rows("defective_coordination", [[[1, 1], [0, 0]], [[0, 0], [4, 4]]]),
    PayoffTable.from_rows("kwon_battle_of_the_sexes", [[[2, 1], [0, 0]], [[0, 0], [1, 2]]]),
    PayoffTable.from_rows("kwon_prisoners_dilemma", [[[3, 3], [0, 5]], [[5, 0], [1, 1]]]),
    PayoffTable.from_rows("kwon_stag_hunt", [[[2, 2], [-3, 1]], [[1, -3], [1, 1]]]),
    PayoffTable.from_rows("kwon_chicken", [[[2, 2], [1, 3]], [[3, 1], [0, 0]]]),
):
    MATRIX_GAMES.add(_game.name, _game)


@runtime_checkable
class MatrixStrategy(Protocol):
    """A fixed strategy in an iterated 2x2 game: a move from the opponent's last move and its own."""

    name: str

    def move(self, opponent_last: Move | None, own_last: Move | None, rng: np.random.Generator) -> Move: ...
