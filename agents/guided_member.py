"""Solver-guided society members: each move's instruction is drawn from a solved dialogue policy.

A `GuidedMember` plays the society's ultimatum game as the solved
instructed ultimatum game's players did (the same prompt, names and remark),
with the society's stake, under a style drawn per move from the solver's
policy (`societies.guided_policy.GuidedPolicy`): as proposer from the root state,
as responder from the tree's states nearest the offer it answers. The draw
is a function of the member's seed, the episode and the role, so a re-asked
move, a repeated run and a resumed one draw the same style; the episode
record names it (`proposer_instruction`, `responder_instruction`).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

import prompts
from agents.turns import ask, with_feedback
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.rules.dialogue import ANY
from sandbox.rules.ultimatum import Decision, Split, Stake, parse_leading_decision
from societies.guided_policy import GuidedPolicy, draw

__all__ = ["GuidedMember"]


@dataclass(frozen=True)
class GuidedMember:
    """A society member guided by a solved policy.

    Attributes:
        node: Its node in the society's network (its id is `guided-<node>`).
        policy: The solved policy.
        model: The chat model it speaks with (the society's user model).
        seed: Its root seed (from the run's seed tree).
        responder_states: How its responder state is found (`GuidedPolicy.responder_policy`).
        play: solver (styles drawn from the policy) or any (the baseline style on every move: the control).
    """

    node: int
    policy: GuidedPolicy
    model: BaseChatModel
    seed: int
    responder_states: Literal["nearest", "mean"] = "nearest"
    play: Literal["solver", "any"] = "solver"

    @property
    def agent_id(self) -> str:
        return f"guided-{self.node}"

    @property
    def remarks(self) -> bool:
        """Whether its moves carry a remark, as the solved game's did."""
        return self.policy.remark

    @staticmethod
    def read_decision(text: str) -> Decision:
        """Its answer as the solved game read it: the leading yes or no, whatever the remark after it says."""
        return parse_leading_decision(text)

    def instruction(
        self, episode: str, role: Literal["proposer", "responder"], offered_share: float | None = None
    ) -> str:
        """The style it plays under in `episode` as `role` (a responder's also depends on the share offered)."""
        if self.play == "any":
            return ANY
        rng = np.random.default_rng([self.seed, zlib.crc32(str(episode).encode()), 0 if role == "proposer" else 1])
        if role == "proposer":
            return draw(self.policy.proposer, rng)
        if offered_share is None:
            raise ValueError("a responder's style depends on the share offered")
        return draw(self.policy.responder_policy(offered_share, self.responder_states), rng)

    def instruction_for(self, record: dict[str, Any], role: Literal["proposer", "responder"]) -> str | None:
        """The style of its move as `role` in a finished episode's record; None where it made no move."""
        if role == "responder" and not record.get("proposal_legal"):
            return None
        return self.instruction(record["episode"], role, record.get("offered_share"))

    async def propose(
        self,
        stake: Stake,
        *,
        seed: int,
        call: CallInfo,
        constraint: Constraint | None,
        feedback: Sequence[tuple[str, str]] = (),
    ) -> str:
        me, other = self.policy.names
        text = prompts.render(
            "dialogue/ultimatum/propose.j2",
            me=me,
            other=other,
            stake=stake,
            remark=self.remarks,
            instruction=self.instruction(str(call.episode), "proposer"),
        )
        return await ask(
            self.model, with_feedback([HumanMessage(text)], feedback), seed=seed, call=call, constraint=constraint
        )

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
    ) -> str:
        other, me = self.policy.names
        instruction = self.instruction(str(call.episode), "responder", split.offered_share())
        text = prompts.render(
            "dialogue/ultimatum/respond.j2",
            me=me,
            other=other,
            stake=stake,
            proposal=proposal,
            split=split,
            remark=self.remarks,
            instruction=instruction,
        )
        return await ask(
            self.model, with_feedback([HumanMessage(text)], feedback), seed=seed, call=call, constraint=constraint
        )
