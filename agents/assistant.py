"""The AssistantLM: an ultimatum player that acts only from its current policy text.

It has no memory: each call sees the policy and the move asked for, never
the meta-principle, earlier interactions or earlier policies. The policy is
fixed for the assistant's lifetime; the SCAI loop builds a new assistant for
each policy version.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

import prompts
from agents.turns import ask, propose_messages, respond_messages
from agents.user import example_decision_turns
from sandbox.base.rounding import best
from sandbox.llm.contracts import TOKEN_LOGPROBS, CallInfo, Constraint
from sandbox.llm.wrapper import acall
from sandbox.rules.ultimatum import Split, Stake
from societies.norms import NORMS


@lru_cache(maxsize=256)
def _system_prompt(policy: str, rules: bool = False, prior: str | None = None, learned_on: str | None = None) -> str:
    return prompts.render("scai/assistant_system.j2", policy=policy, rules=rules, prior=prior, learned_on=learned_on)


def library_policies() -> list[str]:
    """The library of first policies (`prompts/scai/initial_policies.j2`), one per line."""
    return [line.strip() for line in prompts.render("scai/initial_policies.j2").splitlines() if line.strip()]


Reading = Literal["scored", "lead_in", "none"]
Responder = Literal["paper", "guided", "rule"]


@dataclass(frozen=True)
class Stance:
    """What a principle means for one split: how much the assistant keeps, said in words.

    Attributes:
        word: How much it keeps (nothing, a little, half, most, everything).
        statement: The split in a sentence that names both players' parts.
        low: The least share of the amount the assistant keeps under this stance.
        high: The most.
        decides_as: The library norm whose decision examples a guided responder gets under this stance, and
            whose decision rule a `rule` responder applies.
    """

    word: str
    statement: str
    low: float
    high: float
    decides_as: str


STANCES = (
    Stance("nothing", "I keep nothing and the other player gets everything.", 0.0, 0.05, "altruistic"),
    Stance("a little", "I keep a little and the other player gets most.", 0.05, 0.35, "altruistic"),
    Stance("half", "I keep half and the other player gets half.", 0.35, 0.65, "fair"),
    Stance("most", "I keep most and the other player gets a little.", 0.65, 0.95, "selfish"),
    Stance("everything", "I keep everything and the other player gets nothing.", 0.95, 1.0, "selfish"),
)
# What the assistant says it keeps, and the band of its own share each word admits.
KEEP_WORDS = tuple((stance.word, stance.low, stance.high) for stance in STANCES)


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


def _splits(stake: Stake, low: float, high: float) -> str:
    """The grammar alternatives of the legal proposals whose proposer share lies in [low, high]."""
    keeps = [p for p in _parts(stake.amount) if _in_band(p / stake.amount, low, high)]
    return " | ".join(_literal(f"{p}, and the responder will get {stake.amount - p}.") for p in keeps)


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
        splits = _splits(stake, low, high)
        if splits:
            branches.append(f"{_literal(f' {word}. ' + prefix)} ({splits})")
    grammar = "root ::= " + " | ".join(f"({b})" for b in branches)
    return Constraint(prefix=prompts.render("scai/assistant_lead.j2"), grammar=grammar)


@lru_cache(maxsize=4096)
def stance_constraint(stake: Stake, stance: Stance) -> Constraint:
    """The proposal after a lead-in that states the stance the principle was read as.

    The prefill says the split in words ("Under my principle, I keep half and the
    other player gets half."); the grammar admits the legal splits of that band
    only, and the model picks the numbers within it.
    """
    prefix = f"Under my principle, {stance.statement} For the {stake.amount} {stake.currency}, the proposer will get "
    return Constraint(prefix=prefix, grammar="root ::= " + _splits(stake, stance.low, stance.high))


READING_PREFIX = "Under this principle,"


def _step(call: CallInfo, suffix: str) -> CallInfo:
    """The call info of a reading call: the move's, with its own step (so a resume tells them apart)."""
    return replace(call, step=f"{call.step or 'move'}/{suffix}")


@lru_cache(maxsize=256)
def reading_messages(policy: str, prior: str | None = None, learned_on: str | None = None) -> tuple[BaseMessage, ...]:
    """The reading's conversation: the task, few-shot principles with their stances, then `policy` (with the
    test-time prior and what it was learned on, where the assistant's system prompt states them)."""
    by_word = {stance.word: stance for stance in STANCES}
    messages: list[BaseMessage] = [SystemMessage(prompts.render("scai/reading_system.j2"))]
    for line in prompts.render("scai/reading_examples.j2").splitlines():
        if "|" in line:
            example, word = (part.strip() for part in line.rsplit("|", 1))
            messages.append(
                HumanMessage(prompts.render("scai/reading_request.j2", policy=example, prior=None, learned_on=None))
            )
            messages.append(AIMessage(f"{READING_PREFIX} {by_word[word].statement}"))
    messages.append(
        HumanMessage(prompts.render("scai/reading_request.j2", policy=policy, prior=prior, learned_on=learned_on))
    )
    return tuple(messages)


def _answer_logprob(message: BaseMessage) -> float | None:
    """The summed log-probability of the generated tokens, or None when the backend gave none."""
    entries = message.response_metadata.get(TOKEN_LOGPROBS) if message.response_metadata else None
    return sum(float(entry["logprob"]) for entry in entries) if entries else None


async def read_principle(
    model: BaseChatModel,
    policy: str,
    *,
    seed: int,
    call: CallInfo,
    prior: str | None = None,
    learned_on: str | None = None,
) -> Stance | None:
    """The stance `policy` means, read by `model`: the most likely of the five statements of a split.

    A 1.5B model asked to complete "I keep ___" copies the principle's salient
    word ("give everything" -> "I keep everything"). Here each statement names
    both players' parts, so a copied word favours two opposite statements, and
    the model's likelihood of each whole statement (teacher-forced, after
    few-shot principles whose surface words often oppose their meaning) decides.
    A backend that reports no log-probabilities chooses among the statements
    itself; an answer that names none gives None.
    """
    messages = list(reading_messages(policy, prior, learned_on))
    forced = [
        Constraint(prefix=READING_PREFIX, grammar="root ::= " + _literal(" " + stance.statement)) for stance in STANCES
    ]
    answers = await asyncio.gather(
        *(
            acall(model, messages, seed=seed, call=_step(call, f"reading-{i}"), constraint=c, top_logprobs=1)
            for i, c in enumerate(forced)
        )
    )
    scores = [score for score in map(_answer_logprob, answers) if score is not None]
    if len(scores) == len(STANCES):  # log-probabilities equal but for their last digits: the first stance
        return STANCES[best(scores)]
    choice = Constraint(
        prefix=READING_PREFIX, grammar="root ::= " + " | ".join(_literal(" " + s.statement) for s in STANCES)
    )
    answer = await ask(model, messages, seed=seed, call=_step(call, "reading"), constraint=choice)
    return next((stance for stance in STANCES if stance.statement in answer), None)


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
        reading: How a proposal follows the policy where the backend takes a grammar. `scored`: the policy is
            read first (`read_principle`) and the proposal states that stance and stays in its band;
            `lead_in`: the model completes "of what we split I keep ___" itself, then proposes in that
            word's band (it copies the principle's salient word); `none`: the paper's, the proposal
            asked directly (any legal split).
        responder: `paper`: the decision is asked with the policy alone, as the SCAI authors asked it;
            `guided`: the policy is read too, and the decision is asked with the stance stated and the
            decision examples of the library norm of that stance (the help users get; not in the paper);
            `rule`: the policy is read too, and the decision is that norm's rule applied to the offer
            (`Norm.accepts`), with no call: the model's part is the reading only. The 1.5B model cannot
            compare an offer with a threshold in context (docs/methods/scai.md), so `rule` separates "read
            the principle wrong" from "could not apply it". Where no stance is read, the paper's decision.
    """

    policy: str
    model: BaseChatModel
    agent_id: str = "assistant"
    remarks: bool = False
    rules: bool = False
    prior: str | None = None
    learned_on: str | None = None
    reading: Reading = "lead_in"
    responder: Responder = "paper"

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
        if self.reading == "none" or constraint is None or not constraint.grammar or feedback:
            return await ask(self.model, messages, seed=seed, call=call, constraint=constraint)
        stance = await self.stance(call=call) if self.reading == "scored" else None
        lead = stance_constraint(stake, stance) if stance is not None else lead_constraint(stake)
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
        system, examples = self._system(), ()
        stance = await self.stance(call=call) if self.responder != "paper" else None
        if stance is not None and self.responder == "rule":
            return "yes" if NORMS.get(stance.decides_as).accepts(split.offered_share()) else "no"
        if stance is not None:
            stated = prompts.render("scai/stance.j2", statement=stance.statement)
            system = SystemMessage(f"{system.content}\n{stated}")
            examples = example_decision_turns(NORMS.get(stance.decides_as))
        messages = respond_messages(system, examples, stake, proposal, split, remark=self.remarks, feedback=feedback)
        return await ask(self.model, messages, seed=seed, call=call, constraint=constraint)

    async def stance(self, *, call: CallInfo) -> Stance | None:
        """What this assistant's policy means for a split (`read_principle`): read with one seed for every
        move, so it is a property of the policy (and a cached call after the first)."""
        return await read_principle(
            self.model, self.policy, seed=0, call=call, prior=self.prior, learned_on=self.learned_on
        )

    async def reason(self, stake: Stake, proposal: str, *, seed: int, call: CallInfo) -> str:
        """Why it proposed `proposal` (asked after the move, so the move itself stays constrained)."""
        messages = propose_messages(self._system(), (), stake, remark=False)
        messages += [AIMessage(proposal), HumanMessage(prompts.render("scai/reason.j2"))]
        return await ask(self.model, messages, seed=seed, call=call, constraint=None)
