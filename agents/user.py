"""Norm-following users: an LLM that plays from a fixed norm and manner, with no memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

import prompts
from agents.turns import ask, propose_messages, respond_messages
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.rules.ultimatum import Split, Stake, proposal_sentence
from societies.contracts import Manner, Norm, UserProfile

# Stakes of the few-shot turns; chosen apart from the usual range so their numbers are not copied.
_EXAMPLE_STAKES = (Stake(10, "dollars"), Stake(40, "apples"), Stake(75, "coins"))


@lru_cache(maxsize=256)
def example_turns(norm: Norm) -> tuple[BaseMessage, ...]:
    """Few-shot proposal turns: a request and an answer that follows `norm`, per example share."""
    turns: list[BaseMessage] = []
    for stake, share in zip(_EXAMPLE_STAKES, norm.example_shares):
        responder = round(stake.amount * share)
        turns.append(HumanMessage(prompts.render("ultimatum/propose.j2", stake=stake, remark=False)))
        turns.append(AIMessage(proposal_sentence(stake, Split(stake.amount - responder, responder))))
    return tuple(turns)


@lru_cache(maxsize=256)
def example_decision_turns(norm: Norm) -> tuple[BaseMessage, ...]:
    """Few-shot decision turns: a proposal and the answer `norm` gives it, per example decision."""
    turns: list[BaseMessage] = []
    for stake, (share, accept) in zip(_EXAMPLE_STAKES, norm.example_decisions):
        responder = round(stake.amount * share)
        split = Split(stake.amount - responder, responder)
        proposal = proposal_sentence(stake, split)
        turns.append(
            HumanMessage(
                prompts.render("ultimatum/respond.j2", proposal=proposal, split=split, stake=stake, remark=False)
            )
        )
        turns.append(AIMessage("yes" if accept else "no"))
    return tuple(turns)


@lru_cache(maxsize=1024)
def _system_prompt(norm: Norm, manner: Manner, rules: bool = False) -> str:
    # Thousands of users share a handful of (norm, manner) pairs: render each once.
    return prompts.render("ultimatum/user_system.j2", norm=norm, manner=manner, rules=rules)


@dataclass
class NormFollowingUser:
    """A user with a fixed norm and manner, played by an injected chat model.

    It acts only from its norm and manner: no memory of earlier episodes.
    `rules` states the game's rules in its system prompt (`game.rules`).
    """

    profile: UserProfile
    model: BaseChatModel
    rules: bool = False

    @property
    def agent_id(self) -> str:
        return f"user-{self.profile.agent_id}"

    @property
    def remarks(self) -> bool:
        """Whether the user adds a remark in its manner after each move."""
        return self.profile.manner.name != "neutral"

    def _system(self) -> SystemMessage:
        return SystemMessage(_system_prompt(self.profile.norm, self.profile.manner, self.rules))

    async def propose(
        self,
        stake: Stake,
        *,
        seed: int,
        call: CallInfo,
        constraint: Constraint | None,
        feedback: Sequence[tuple[str, str]] = (),
    ) -> str:
        examples = example_turns(self.profile.norm)
        messages = propose_messages(self._system(), examples, stake, remark=self.remarks, feedback=feedback)
        return await ask(self.model, messages, seed=seed, call=call, constraint=constraint)

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
        examples = example_decision_turns(self.profile.norm)
        messages = respond_messages(
            self._system(), examples, stake, proposal, split, remark=self.remarks, feedback=feedback
        )
        return await ask(self.model, messages, seed=seed, call=call, constraint=constraint)
