"""Contracts of the actors: what a player of the ultimatum game can be asked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from sandbox.games.ultimatum import Stake
from sandbox.llm.contracts import CallInfo, Constraint


@runtime_checkable
class UltimatumPlayer(Protocol):
    """A player of the ultimatum game. It answers in words; the game judges the words.

    `feedback` holds the player's earlier answers in this turn with the reason
    each was illegal, so the player can answer again.
    """

    agent_id: str

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
        *,
        seed: int,
        call: CallInfo,
        constraint: Constraint | None,
        feedback: Sequence[tuple[str, str]] = (),
    ) -> str: ...
