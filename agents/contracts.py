"""Contracts of the actors: what a player of the ultimatum game can be asked, and a matrix-game strategy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from sandbox.games.matrix import Move
from sandbox.games.ultimatum import Split, Stake
from sandbox.llm.contracts import CallInfo, Constraint


@runtime_checkable
class UltimatumPlayer(Protocol):
    """A player of the ultimatum game. It answers in words; the game judges the words.

    `remarks` says whether the player adds a remark in its manner after each
    move (structured output leaves room for one). `feedback` holds the player's earlier answers in this turn with the reason
    each was illegal, so the player can answer again.
    """

    agent_id: str
    remarks: bool

    async def propose(
        self,
        stake: Stake,
        *,
        seed: int,
        call: CallInfo,
        constraint: Constraint | None,
        feedback: Sequence[tuple[str, str]] = (),
    ) -> str: ...

    async def respond(
        self,
        stake: Stake,
        proposal: str,
        split: Split,
        *,
        seed: int,
        call: CallInfo,
        constraint: Constraint | None,
        feedback: Sequence[tuple[str, str]] = (),
    ) -> str: ...


@runtime_checkable
class MatrixStrategy(Protocol):
    """A fixed strategy in an iterated 2x2 game: a move from the opponent's last move and its own."""

    name: str

    def move(self, opponent_last: Move | None, own_last: Move | None, rng: np.random.Generator) -> Move: ...
