"""One episode of the ultimatum game between two players, with re-asks and illegal moves.

An answer that does not parse is asked again with the parse error (up to
`max_reasks` times); if it still does not parse, the move is recorded as
illegal and the episode ends with no payoff. Nothing is guessed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import numpy as np

from sandbox.llm.contracts import CallInfo
from sandbox.llm.moves import note_move
from sandbox.rules.ultimatum import (
    Decision,
    ParseError,
    Split,
    Stake,
    UltimatumPlayer,
    decision_constraint,
    parse_decision,
    parse_proposal,
    payoffs,
    proposal_constraint,
)

T = TypeVar("T")


def call_seed(episode_seed: np.random.SeedSequence, step: int, attempt: int) -> int:
    """The seed of one LLM call, addressed by (episode, step, attempt) in the seed tree."""
    node = np.random.SeedSequence(episode_seed.entropy, spawn_key=(*episode_seed.spawn_key, step, attempt))
    return int(node.generate_state(1)[0])


async def _ask_until_legal(
    ask: Callable[[int, int, list[tuple[str, str]]], Awaitable[str]],
    parse: Callable[[str], T],
    *,
    max_reasks: int,
    call: Callable[[int], CallInfo],
) -> tuple[str, T | None, int]:
    """Ask, parse, re-ask with the error. Returns (last answer, parsed value or None, illegal answers); each
    attempt's parsed move is noted for the transcript (`note_move`; `call(attempt)` is that attempt's call)."""
    feedback: list[tuple[str, str]] = []
    answer = ""
    for attempt in range(max_reasks + 1):
        answer = await ask(attempt, len(feedback), list(feedback))
        try:
            parsed = parse(answer)
        except ParseError as error:
            note_move(call(attempt), None)
            feedback.append((answer, str(error)))
            continue
        note_move(call(attempt), parsed)
        return answer, parsed, len(feedback)
    return answer, None, len(feedback)


def _call(info: dict[str, Any], step: str, agent: str, attempt: int) -> CallInfo:
    return CallInfo(
        role="user" if agent.startswith(("user-", "guided-")) else "assistant",  # guided members: the user model
        agent=agent,
        run=info.get("run"),
        epoch=info.get("epoch"),
        episode=info.get("episode"),
        step=step,
        attempt=attempt,
    )


async def propose_move(
    proposer: UltimatumPlayer,
    stake: Stake,
    *,
    seed: np.random.SeedSequence,
    info: dict[str, Any],
    max_reasks: int = 1,
    step: str = "propose",
) -> tuple[str, Split | None, int]:
    """The proposer's move: (last answer, the split or None when illegal, illegal answers)."""

    async def ask(attempt: int, _: int, feedback: list[tuple[str, str]]) -> str:
        return await proposer.propose(
            stake,
            seed=call_seed(seed, 0, attempt),
            call=_call(info, step, proposer.agent_id, attempt),
            constraint=proposal_constraint(stake, remark=proposer.remarks),
            feedback=feedback,
        )

    return await _ask_until_legal(
        ask,
        lambda text: parse_proposal(text, stake),
        max_reasks=max_reasks,
        call=lambda attempt: _call(info, step, proposer.agent_id, attempt),
    )


async def respond_move(
    responder: UltimatumPlayer,
    stake: Stake,
    proposal: str,
    split: Split,
    *,
    seed: np.random.SeedSequence,
    info: dict[str, Any],
    max_reasks: int = 1,
    step: str = "respond",
) -> tuple[str, Decision | None, int]:
    """The responder's move on `proposal`: (last answer, accept/reject or None when illegal, illegal answers)."""

    async def ask(attempt: int, _: int, feedback: list[tuple[str, str]]) -> str:
        return await responder.respond(
            stake,
            proposal,
            split,
            seed=call_seed(seed, 1, attempt),
            call=_call(info, step, responder.agent_id, attempt),
            constraint=decision_constraint(remark=responder.remarks),
            feedback=feedback,
        )

    # a player whose answers put yes or no first (a solver-guided member, as its solved game read them) says how
    return await _ask_until_legal(
        ask,
        getattr(responder, "read_decision", parse_decision),
        max_reasks=max_reasks,
        call=lambda attempt: _call(info, step, responder.agent_id, attempt),
    )


async def play_ultimatum(
    proposer: UltimatumPlayer,
    responder: UltimatumPlayer,
    stake: Stake,
    *,
    seed: np.random.SeedSequence,
    info: dict[str, Any],
    max_reasks: int = 1,
) -> dict[str, Any]:
    """Play one episode and return its tidy record.

    Args:
        proposer: The player who splits.
        responder: The player who accepts or rejects.
        stake: The amount and currency.
        seed: The episode's node in the run's seed tree.
        info: run, epoch and episode ids, copied into the record and the calls.
        max_reasks: Re-asks after an unparseable answer.
    """
    proposal, split, proposal_illegal = await propose_move(proposer, stake, seed=seed, info=info, max_reasks=max_reasks)
    record: dict[str, Any] = {
        **info,
        "proposer": proposer.agent_id,
        "responder": responder.agent_id,
        "amount": stake.amount,
        "currency": stake.currency,
        "proposal": proposal,
        "proposal_legal": split is not None,
        "proposal_illegal_answers": proposal_illegal,
        "proposer_part": None if split is None else split.proposer,
        "responder_part": None if split is None else split.responder,
        "offered_share": None if split is None else split.offered_share(),
        "response": None,
        "decision": None,
        "decision_legal": None,
        "response_illegal_answers": 0,
        "proposer_payoff": None,
        "responder_payoff": None,
    }
    if split is None:
        return _instructions(record, proposer, responder)
    response, decision, response_illegal = await respond_move(
        responder, stake, proposal, split, seed=seed, info=info, max_reasks=max_reasks
    )
    record.update(
        response=response,
        decision=decision,
        decision_legal=decision is not None,
        response_illegal_answers=response_illegal,
    )
    if decision is not None:
        record["proposer_payoff"], record["responder_payoff"] = payoffs(split, decision)
    return _instructions(record, proposer, responder)


def _instructions(record: dict[str, Any], proposer: UltimatumPlayer, responder: UltimatumPlayer) -> dict[str, Any]:
    """The record with the style each instructed player (a solver-guided member) played under; None for others."""
    for role, player in (("proposer", proposer), ("responder", responder)):
        style = getattr(player, "instruction_for", None)
        record[f"{role}_instruction"] = style(record, role) if style is not None else None
    return record
