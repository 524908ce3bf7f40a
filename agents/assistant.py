"""The AssistantLM: an ultimatum player that acts only from its current policy text.

It has no memory: each call sees the policy and the move asked for, never
the meta-principle, earlier interactions or earlier policies. The policy is
fixed for the assistant's lifetime; the SCAI loop builds a new assistant for
each policy version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

import prompts
from agents.turns import ask, propose_messages, respond_messages
from sandbox.games.ultimatum import Split, Stake
from sandbox.llm.contracts import CallInfo, Constraint


@lru_cache(maxsize=256)
def _system_prompt(policy: str) -> str:
    return prompts.render("scai/assistant_system.j2", policy=policy)


def library_policies() -> list[str]:
    """The library of first policies (`prompts/scai/initial_policies.j2`), one per line."""
    return [line.strip() for line in prompts.render("scai/initial_policies.j2").splitlines() if line.strip()]


@dataclass(frozen=True)
class PolicyFollowingAssistant:
    """The assistant under one policy, played by an injected chat model.

    Attributes:
        policy: The policy text, the only guide of its moves.
        model: The assistant role's chat model.
        agent_id: `assistant` when it meets users; `assistant-0`/`assistant-1` when two copies meet.
    """

    policy: str
    model: BaseChatModel
    agent_id: str = "assistant"
    remarks: bool = False

    def _system(self) -> SystemMessage:
        return SystemMessage(_system_prompt(self.policy))

    async def propose(
        self,
        stake: Stake,
        *,
        seed: int,
        call: CallInfo,
        constraint: Constraint | None,
        feedback: Sequence[tuple[str, str]] = (),
    ) -> str:
        messages = propose_messages(self._system(), (), stake, remark=self.remarks, feedback=feedback)
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
        messages = respond_messages(self._system(), (), stake, proposal, split, remark=self.remarks, feedback=feedback)
        return await ask(self.model, messages, seed=seed, call=call, constraint=constraint)

    async def reason(self, stake: Stake, proposal: str, *, seed: int, call: CallInfo) -> str:
        """Why it proposed `proposal` (asked after the move, so the move itself stays constrained)."""
        messages = propose_messages(self._system(), (), stake, remark=False)
        messages += [AIMessage(proposal), HumanMessage(prompts.render("scai/reason.j2"))]
        return await ask(self.model, messages, seed=seed, call=call, constraint=None)
