"""Norm-following users: an LLM that plays from a fixed norm and manner, with no memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

import prompts
from sandbox.games.ultimatum import Split, Stake, proposal_sentence
from sandbox.llm.contracts import CallInfo, Constraint
from societies.contracts import UserProfile

# Amounts of the few-shot examples; chosen apart from the usual range so they are not copied.
_EXAMPLE_STAKES = (Stake(10, "dollars"), Stake(40, "apples"), Stake(75, "coins"))


def example_proposals(shares: Sequence[float]) -> list[str]:
    """Few-shot proposals that give the responder each of `shares`."""
    sentences = []
    for stake, share in zip(_EXAMPLE_STAKES, shares):
        responder = round(stake.amount * share)
        sentences.append(proposal_sentence(stake, Split(stake.amount - responder, responder)))
    return sentences


@dataclass
class NormFollowingUser:
    """A user with a fixed norm and manner, played by an injected chat model."""

    profile: UserProfile
    model: BaseChatModel

    @property
    def agent_id(self) -> str:
        return f"user-{self.profile.agent_id}"

    def _system(self) -> SystemMessage:
        return SystemMessage(
            prompts.render("ultimatum/user_system.j2", norm=self.profile.norm, manner=self.profile.manner)
        )

    @staticmethod
    def _with_feedback(messages: list[BaseMessage], feedback: Sequence[tuple[str, str]]) -> list[BaseMessage]:
        for answer, error in feedback:
            messages.append(AIMessage(answer))
            messages.append(HumanMessage(prompts.render("ultimatum/reask.j2", error=error)))
        return messages

    async def _ask(self, messages: list[BaseMessage], *, seed: int, call: CallInfo, constraint: Constraint | None) -> str:
        answer = await self.model.ainvoke(messages, seed=seed, call=call, constraint=constraint)
        return str(answer.content).strip()

    async def propose(
        self,
        stake: Stake,
        *,
        seed: int,
        call: CallInfo,
        constraint: Constraint | None,
        feedback: Sequence[tuple[str, str]] = (),
    ) -> str:
        norm, manner = self.profile.norm, self.profile.manner
        prompt = prompts.render(
            "ultimatum/propose.j2",
            stake=stake,
            norm=norm,
            manner=manner,
            examples=example_proposals(norm.example_shares),
        )
        messages = self._with_feedback([self._system(), HumanMessage(prompt)], feedback)
        return await self._ask(messages, seed=seed, call=call, constraint=constraint)

    async def respond(
        self,
        stake: Stake,
        proposal: str,
        *,
        seed: int,
        call: CallInfo,
        constraint: Constraint | None,
        feedback: Sequence[tuple[str, str]] = (),
    ) -> str:
        prompt = prompts.render(
            "ultimatum/respond.j2", proposal=proposal, norm=self.profile.norm, manner=self.profile.manner
        )
        messages = self._with_feedback([self._system(), HumanMessage(prompt)], feedback)
        return await self._ask(messages, seed=seed, call=call, constraint=constraint)
