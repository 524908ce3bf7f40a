"""The LLM reward model of dialogue games whose payoffs are not a function the game can compute from text.

Three modes (`dialogue.domain.reward`):

* `value` (the paper's): the judge is shown every player's private
  information and the dialogue, and asked what the outcome is worth to one
  player; one call per player, answered as a whole number in the domain's
  payoff range under a grammar. (The paper's prompts asked for a chain of
  thought and then a second call to extract the number; a constrained number
  is one call and cannot come back unreadable on the embedded backend.)
* `outcome`: the judge is asked only what was agreed (a day, a trade, a
  winner), under a grammar of the domain's outcomes, and the payoffs are
  computed from the private valuations. A small model reads an agreement far
  better than it does the arithmetic; `sandbox reward-model` measures both.
  A domain may instead ask a yes/no question per candidate outcome named in
  the dialogue (`outcome_checks`): meeting scheduling asks, for each day the
  emails name, the most recently named first, whether both agreed to meet on
  it; the first yes is the outcome, no yes is no agreement. Asked which day
  was agreed, the embedded judge answered "none" to 9 of 10 templated
  agreements; asked day by day it read all 30 templated dialogues right.

* `selection` (not in the paper; Lewis et al. 2017, "Deal or No Deal?",
  ask each agent for its selection after the dialogue): no judge. Each player,
  shown its own private information and the dialogue (not its instruction:
  the payoffs stay a function of the words said), is asked what was agreed,
  under the same grammar of outcomes, greedily; the two answers agree, or
  nothing was agreed, and the game computes the payoffs of an agreed outcome. Agreement is then the players' own, as in a signed
  contract, and a judge's misreading cannot create one.

An answer that cannot be read is recorded as an illegal judgment (the
payoffs are then the domain's no-agreement payoffs), never a guess.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Literal, Protocol, get_args

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from sandbox.dialogue.llm_calls import YES_NO, call_key
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.llm.wrapper import acall
from sandbox.rules.dialogue import Message, Outcome, Prompt, Setup

RewardMode = Literal["value", "outcome", "selection"]
REWARD_MODES: tuple[str, ...] = get_args(RewardMode)
READ_MODES = ("outcome", "selection")  # the modes that name what was agreed


@dataclass(frozen=True)
class Check:
    """A yes/no question of the `outcome` reward model: was `candidate` (an outcome as `outcome_payoffs` reads
    it) agreed?"""

    candidate: str
    prompt: str


class Judged(Protocol):
    """What a domain scored by the reward model supplies."""

    def value_question(self, setup: Setup, dialogue: tuple[Message, ...], player: int) -> str: ...

    def outcome_checks(self, setup: Setup, dialogue: tuple[Message, ...]) -> tuple[Check, ...] | None:
        """The candidate outcomes to ask about one by one, in order; None: ask one `outcome_question`."""
        ...

    def outcome_question(self, setup: Setup, dialogue: tuple[Message, ...]) -> tuple[str, Constraint]: ...

    def outcome_payoffs(self, setup: Setup, answer: str) -> Outcome: ...

    def selection_prompt(self, setup: Setup, dialogue: tuple[Message, ...], player: int) -> Prompt:
        """`player`'s own prompt asking what was agreed, with the constraint of an answer `outcome_payoffs` reads."""
        ...

    def no_deal(self, setup: Setup) -> tuple[float, ...]: ...

    def payoff_range(self) -> tuple[float, float]: ...


def integer_constraint(low: int, high: int) -> Constraint:
    """Exactly the whole numbers in [low, high]."""
    numbers = [str(n) for n in range(low, high + 1)]
    return Constraint(
        grammar="root ::= " + " | ".join(f'"{n}"' for n in numbers),
        regex="(" + "|".join(re.escape(n) for n in numbers) + ")",
    )


def _call(step: str, prompt: str) -> CallInfo:
    return CallInfo(role="judge", episode=call_key(prompt), step=step)


class RewardModel:
    """Scores finished dialogues of one domain with a judge model."""

    def __init__(self, domain: Judged, mode: RewardMode = "value") -> None:
        self.domain = domain
        self.mode = mode

    def calls(self, setup: Setup, dialogue: tuple[Message, ...]) -> int:
        """How many judge calls scoring `dialogue` takes."""
        if self.mode in ("value", "selection"):
            return len(setup.players)
        checks = self.domain.outcome_checks(setup, dialogue)
        return 1 if checks is None else len(checks)

    async def score(
        self,
        judge: BaseChatModel | None,
        setup: Setup,
        dialogue: tuple[Message, ...],
        *,
        seed: int,
        players: BaseChatModel | None = None,
    ) -> Outcome:
        """The payoffs of a finished dialogue: read by `judge`, or (`selection`) by the `players`' model."""
        if self.mode == "selection":
            if players is None:
                raise ValueError("reward: selection asks the players' model what was agreed")
            return (await self.read_selection(players, setup, dialogue, seed=seed))[1]
        if judge is None:
            raise ValueError(f"reward: {self.mode} needs a judge model")
        if self.mode == "outcome":
            return (await self.read_outcome(judge, setup, dialogue, seed=seed))[1]
        low, high = self.domain.payoff_range()
        payoffs: list[float] = []
        illegal = []
        for player in range(len(setup.players)):
            prompt = self.domain.value_question(setup, dialogue, player)
            answer = await acall(
                judge,
                [HumanMessage(prompt)],
                seed=seed,
                max_tokens=4,
                constraint=integer_constraint(int(low), int(high)),
                call=_call(f"reward/{player}", prompt),
            )
            match = re.fullmatch(r"\s*(-?\d+)\s*\.?\s*", str(answer.content))
            if match is None or not low <= int(match.group(1)) <= high:
                illegal.append(f"{setup.players[player]}: {str(answer.content)[:40]!r}")
                payoffs.append(self.domain.no_deal(setup)[player])
            else:
                payoffs.append(float(match.group(1)))
        return Outcome(tuple(payoffs), illegal=f"reward model: {'; '.join(illegal)}" if illegal else None)

    async def reading(
        self, judge: BaseChatModel, players: BaseChatModel, setup: Setup, dialogue: tuple[Message, ...], *, seed: int
    ) -> tuple[str | None, Outcome]:
        """What this mode reads as agreed (None for `value`, which names no outcome) and the payoffs."""
        if self.mode == "outcome":
            return await self.read_outcome(judge, setup, dialogue, seed=seed)
        if self.mode == "selection":
            return await self.read_selection(players, setup, dialogue, seed=seed)
        return None, await self.score(judge, setup, dialogue, seed=seed)

    async def read_outcome(
        self, judge: BaseChatModel, setup: Setup, dialogue: tuple[Message, ...], *, seed: int
    ) -> tuple[str | None, Outcome]:
        """What the judge reads as agreed (a day, a trade, a winner; None: nothing, or an unreadable answer) and
        the payoffs the game computes from it (the `outcome` mode, whatever `self.mode` is)."""
        checks = self.domain.outcome_checks(setup, dialogue)
        if checks is not None:
            return await self._checked(judge, setup, checks, seed=seed)
        prompt, constraint = self.domain.outcome_question(setup, dialogue)
        answer = str(
            (
                await acall(
                    judge,
                    [HumanMessage(prompt)],
                    seed=seed,
                    max_tokens=24,
                    constraint=constraint,
                    call=_call("reward", prompt),
                )
            ).content
        ).strip()
        outcome = self.domain.outcome_payoffs(setup, answer)
        agreed = None if outcome.illegal or answer.lower().startswith("none") else answer
        return agreed, outcome

    async def read_selection(
        self, players: BaseChatModel, setup: Setup, dialogue: tuple[Message, ...], *, seed: int
    ) -> tuple[str | None, Outcome]:
        """What both players say was agreed (None: they differ, or say none) and its payoffs (the `selection` mode,
        whatever `self.mode` is). Each player answers greedily from its own private information and the dialogue;
        an answer outside the grammar, or one the domain cannot read, is an illegal move of that player, and no
        agreement."""
        prompts = [self.domain.selection_prompt(setup, dialogue, p) for p in range(len(setup.players))]
        answers = await asyncio.gather(
            *(
                acall(
                    players,
                    list(prompt.messages),
                    seed=seed,
                    temperature=0.0,
                    max_tokens=prompt.max_tokens,
                    constraint=prompt.constraint,
                    call=CallInfo(
                        role="players", agent=setup.players[p], episode=call_key(prompt.key()), step="selection"
                    ),
                )
                for p, prompt in enumerate(prompts)
            )
        )
        said = [str(a.content).strip() for a in answers]
        # an answer outside the grammar (a backend that does not enforce it: an email, a trade from Bob's side) is
        # unreadable, not read loosely
        unreadable = [
            f"{setup.players[p]}: {text[:40]!r}"
            for p, (prompt, text) in enumerate(zip(prompts, said))
            if (prompt.constraint is not None and re.fullmatch(prompt.constraint.regex, text.rstrip(".")) is None)
            or self.domain.outcome_payoffs(setup, text).illegal
        ]
        if unreadable:
            return None, Outcome(self.domain.no_deal(setup), illegal=f"selection: {'; '.join(unreadable)}")
        first = canonical_outcome(said[0])
        if first == "none" or any(canonical_outcome(text) != first for text in said[1:]):
            return None, Outcome(self.domain.no_deal(setup))
        return said[0], self.domain.outcome_payoffs(setup, said[0])

    async def _checked(
        self, judge: BaseChatModel, setup: Setup, checks: tuple[Check, ...], *, seed: int
    ) -> tuple[str | None, Outcome]:
        """The first candidate the judge says yes to (every question in flight at once); no yes: no agreement."""
        answers = await asyncio.gather(
            *(
                acall(
                    judge,
                    [HumanMessage(c.prompt)],
                    seed=seed,
                    max_tokens=4,
                    constraint=YES_NO,
                    call=_call("reward/check", c.prompt),
                )
                for c in checks
            )
        )
        for check, answer in zip(checks, answers):
            word = str(answer.content).strip().strip(".").lower()
            if word not in ("yes", "no"):
                return None, Outcome(
                    self.domain.no_deal(setup),
                    illegal=f"reward model: {str(answer.content)[:40]!r} to {check.candidate!r}",
                )
            if word == "yes":
                return check.candidate, self.domain.outcome_payoffs(setup, check.candidate)
        return None, Outcome(self.domain.no_deal(setup))


def canonical_outcome(text: str | None) -> str | tuple[str, ...] | None:
    """An outcome as two readings of it are compared: case, spacing and a final full stop aside; a trade by its
    terms ("Alice gives 1 apple and gets 2 kiwi" anywhere in the text)."""
    if text is None:
        return None
    plain = " ".join(text.strip().rstrip(".").split()).casefold()
    trade = re.search(r"gives (\d+) (\w+) and gets (\d+) (\w+)", plain)
    return trade.groups() if trade else plain


def describe(setup: Setup) -> str:
    """Every player's private information, for the judge (who sees all of it)."""
    return "\n\n".join(f"{name}:\n{setup.info_text(p)}" for p, name in enumerate(setup.players))


def choices(options: list[str]) -> Constraint:
    grammar = "root ::= " + " | ".join('"' + o.replace('"', '\\"') + '"' for o in options)
    return Constraint(
        grammar=grammar, regex="(" + "|".join(re.escape(o) for o in options) + ")", choices=tuple(options)
    )
