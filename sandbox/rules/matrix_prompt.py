"""The implicit prompt of an iterated matrix game (the paper's Fig. 6), and the parser of its answers.

The prompt names no game and no move: the two moves are neutral tokens
(`action1`/`action2` in training, `action3`/`action4` at test, any pair
from a scenario), the order in which the sentence offers them is drawn per
prompt, and the state is the last moves of both players (one by default).
An answer is legal only if it is exactly one of the two tokens; anything
else is an illegal move, never a guess.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

import prompts
from sandbox.rules.matrix import MOVES, Move, PayoffTable

TRAIN_TOKENS = ("action1", "action2")
TEST_TOKENS = ("action3", "action4")

# The order of the payoff table's rows and columns, written ROWS-COLUMNS: the paper's prompt shows C, D both
# ways; the others are the authors' permuted-matrix check (Figs. 9, 22, 23; their `--order_CD` reversed,
# permuted1 and permuted2 are DC-DC, CD-DC and DC-CD).
TABLE_ORDERS = ("CD-CD", "DC-DC", "CD-DC", "DC-CD")


@dataclass(frozen=True)
class ActionTokens:
    """The tokens that stand for cooperate and defect.

    >>> ActionTokens.of(("action2", "action1")).by_move()
    {'C': 'action2', 'D': 'action1'}
    """

    cooperate: str = TRAIN_TOKENS[0]
    defect: str = TRAIN_TOKENS[1]

    def __post_init__(self) -> None:
        for token in (self.cooperate, self.defect):
            if not re.fullmatch(r"[A-Za-z0-9_]+", token):
                raise ValueError(f"an action token is one word of letters, digits or _: {token!r}")
        if self.cooperate == self.defect:
            raise ValueError(f"the two action tokens must differ: {self.cooperate!r}")

    @classmethod
    def of(cls, pair: Sequence[str]) -> ActionTokens:
        """From `(cooperate token, defect token)`."""
        cooperate, defect = pair
        return cls(cooperate, defect)

    def by_move(self) -> dict[Move, str]:
        return {"C": self.cooperate, "D": self.defect}

    def reversed(self) -> ActionTokens:
        """The same tokens with their meanings swapped (the paper's reversed-token check)."""
        return ActionTokens(self.defect, self.cooperate)


def matrix_prompt(
    game: PayoffTable,
    history: Sequence[tuple[Move, Move]],
    tokens: ActionTokens,
    rng: np.random.Generator,
    table_order: str = "CD-CD",
) -> str:
    """The prompt for one move.

    Args:
        game: The payoff table.
        history: The last (own move, opponent's move) pairs, oldest first; empty on a first move.
        tokens: The action tokens.
        rng: Draws the order in which the sentence offers the two tokens.
        table_order: The order of the table's rows and columns (`TABLE_ORDERS`; the paper's is CD-CD).
    """
    if table_order not in TABLE_ORDERS:
        raise ValueError(f"unknown table order {table_order!r}; one of {', '.join(TABLE_ORDERS)}")
    reverse = bool(rng.random() < 0.5)
    cells = tuple(sorted(game.table.items()))
    return _prompt_text(game.name, cells, tuple(tuple(h) for h in history), tokens, reverse, table_order)


@functools.lru_cache(maxsize=4096)
def _prompt_text(
    name: str,
    cells: tuple[tuple[tuple[Move, Move], tuple[float, float]], ...],
    history: tuple[tuple[Move, Move], ...],
    tokens: ActionTokens,
    reverse: bool,
    table_order: str,
) -> str:
    """The prompt's text, rendered once for each table, history, tokens and order: a population asks the same few
    prompts thousands of times, and Jinja's render took a fifth of the CPU of an LLM population's call."""
    rows, columns = table_order.split("-")
    by_move = tokens.by_move()
    order = [by_move[m] for m in MOVES]
    if reverse:
        order.reverse()
    return prompts.render(
        "moral/matrix_game.j2",
        game=PayoffTable(name, dict(cells)),
        history=[tuple(h) for h in history],
        tokens=by_move,
        order=order,
        rows=list(rows),
        columns=list(columns),
    )


def parse_action(answer: str, tokens: ActionTokens) -> Move | None:
    """The move an answer names, or None (illegal) unless it is exactly one token, punctuation aside.

    >>> t = ActionTokens()
    >>> parse_action(" action2.", t), parse_action("action1 or action2", t), parse_action("I cooperate", t)
    ('D', None, None)
    """
    words = re.findall(r"[A-Za-z0-9_]+", answer)
    if len(words) != 1:
        return None
    moves: Mapping[str, Move] = {token: move for move, token in tokens.by_move().items()}
    return moves.get(words[0])
