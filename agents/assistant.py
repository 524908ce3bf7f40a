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
def _system_prompt(policy: str, rules: bool = False, prior: str | None = None, learned_on: str | None = None) -> str:
    return prompts.render("scai/assistant_system.j2", policy=policy, rules=rules, prior=prior, learned_on=learned_on)


def library_policies() -> list[str]:
    """The library of first policies (`prompts/scai/initial_policies.j2`), one per line."""
    return [line.strip() for line in prompts.render("scai/initial_policies.j2").splitlines() if line.strip()]


# What the assistant says it keeps, and the band of its own share each word admits.
KEEP_WORDS = (("nothing", 0.0, 0.05), ("a little", 0.05, 0.35), ("half", 0.35, 0.65), ("most", 0.65, 0.95),
              ("everything", 0.95, 1.0))  # fmt: skip


def _in_band(share: float, low: float, high: float) -> bool:
    return low <= share <= high and (share > low or low == 0.0)


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


ENUMERATED = 2000  # amounts up to this offer every whole split; above, whole percents


def _parts(amount: int) -> list[int]:
    """The proposer's parts the lead-in admits: every whole number, or whole percents of a large amount."""
    if amount <= ENUMERATED:
        return list(range(amount + 1))
    return sorted({round(amount * k / 100) for k in range(101)})


@lru_cache(maxsize=4096)
def lead_constraint(stake: Stake) -> Constraint:
    """A proposal grammar behind a lead-in that first says, in words, how much the assistant keeps.

    A small model maps a principle to a word (nothing ... everything) far more
    faithfully than to a number. The grammar admits, after each word, only the
    legal splits whose proposer share lies in that word's band, so the numbers
    agree with what the model itself just said. Above `ENUMERATED` the
    proposer's part moves in whole percents of the amount (2.22 billion splits
    in steps of 22.2 million), so a large amount keeps the same scaffold.
    """
    prefix = f"For the {stake.amount} {stake.currency}, the proposer will get "
    branches = []
    for word, low, high in KEEP_WORDS:
        keeps = [p for p in _parts(stake.amount) if _in_band(p / stake.amount, low, high)]
        if keeps:
            splits = " | ".join(_literal(f"{p}, and the responder will get {stake.amount - p}.") for p in keeps)
            branches.append(f"{_literal(f' {word}. ' + prefix)} ({splits})")
    grammar = "root ::= " + " | ".join(f"({b})" for b in branches)
    return Constraint(prefix=prompts.render("scai/assistant_lead.j2"), grammar=grammar)


@dataclass(frozen=True)
class PolicyFollowingAssistant:
    """The assistant under one policy, played by an injected chat model.

    Attributes:
        policy: The policy text, the only guide of its moves.
        model: The assistant role's chat model.
        agent_id: `assistant` when it meets users; `assistant-0`/`assistant-1` when two copies meet.
        rules: State the game's rules in the system prompt (`game.rules`).
        prior: A prior stated before the principle at test time ("before even playing the game, your
            prior was that you must ..."), as the SCAI authors' generalisation test did; None in training.
        learned_on: What the principle was learned on ("dollars, with amounts from 10 to 100"), stated
            after it with the authors' request to consider how relevant it is; None in training.
    """

    policy: str
    model: BaseChatModel
    agent_id: str = "assistant"
    remarks: bool = False
    rules: bool = False
    prior: str | None = None
    learned_on: str | None = None

    def _system(self) -> SystemMessage:
        return SystemMessage(_system_prompt(self.policy, self.rules, self.prior, self.learned_on))

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
        lead = lead_constraint(stake) if constraint is not None and constraint.grammar else None
        if lead is None or feedback:
            return await ask(self.model, messages, seed=seed, call=call, constraint=constraint)
        answer = await ask(self.model, messages, seed=seed, call=call, constraint=lead)
        # The lead-in grounds the numbers; the move itself is the proposal sentence after it.
        start = answer.find("For the ")
        return answer[start:] if start >= 0 else answer

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
