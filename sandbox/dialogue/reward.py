"""The LLM reward model of dialogue games whose payoffs are not a function the game can compute from text.

Two modes (`dialogue.domain.reward`):

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

An answer that cannot be read is recorded as an illegal judgment (the
payoffs are then the domain's no-agreement payoffs), never a guess.
"""

from __future__ import annotations

import re
from typing import Literal, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from sandbox.games.dialogue import Message, Outcome, Setup
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.llm.wrapper import acall

RewardMode = Literal["value", "outcome"]


class Judged(Protocol):
    """What a domain scored by the reward model supplies."""

    def value_question(self, setup: Setup, dialogue: tuple[Message, ...], player: int) -> str: ...

    def outcome_question(self, setup: Setup, dialogue: tuple[Message, ...]) -> tuple[str, Constraint]: ...

    def outcome_payoffs(self, setup: Setup, answer: str) -> Outcome: ...

    def no_deal(self, setup: Setup) -> tuple[float, ...]: ...

    def payoff_range(self) -> tuple[float, float]: ...


def integer_constraint(low: int, high: int) -> Constraint:
    """Exactly the whole numbers in [low, high]."""
    numbers = [str(n) for n in range(low, high + 1)]
    return Constraint(grammar="root ::= " + " | ".join(f'"{n}"' for n in numbers),
                      regex="(" + "|".join(re.escape(n) for n in numbers) + ")")  # fmt: skip


def _call(step: str, prompt: str) -> CallInfo:
    from sandbox.dialogue.models import call_key

    return CallInfo(role="judge", episode=call_key(prompt), step=step)


class RewardModel:
    """Scores finished dialogues of one domain with a judge model."""

    def __init__(self, domain: Judged, mode: RewardMode = "value") -> None:
        self.domain = domain
        self.mode = mode

    async def score(self, judge: BaseChatModel, setup: Setup, dialogue: tuple[Message, ...], *, seed: int) -> Outcome:
        if self.mode == "outcome":
            prompt, constraint = self.domain.outcome_question(setup, dialogue)
            answer = await acall(judge, [HumanMessage(prompt)], seed=seed, max_tokens=24, constraint=constraint,
                                 call=_call("reward", prompt))  # fmt: skip
            return self.domain.outcome_payoffs(setup, str(answer.content).strip())
        low, high = self.domain.payoff_range()
        payoffs: list[float] = []
        illegal = []
        for player in range(len(setup.players)):
            prompt = self.domain.value_question(setup, dialogue, player)
            answer = await acall(judge, [HumanMessage(prompt)], seed=seed, max_tokens=4,
                                 constraint=integer_constraint(int(low), int(high)),
                                 call=_call(f"reward/{player}", prompt))  # fmt: skip
            match = re.fullmatch(r"\s*(-?\d+)\s*\.?\s*", str(answer.content))
            if match is None or not low <= int(match.group(1)) <= high:
                illegal.append(f"{setup.players[player]}: {str(answer.content)[:40]!r}")
                payoffs.append(self.domain.no_deal(setup)[player])
            else:
                payoffs.append(float(match.group(1)))
        return Outcome(tuple(payoffs), illegal=f"reward model: {'; '.join(illegal)}" if illegal else None)


def describe(setup: Setup) -> str:
    """Every player's private information, for the judge (who sees all of it)."""
    return "\n\n".join(f"{name}:\n{setup.info_text(p)}" for p, name in enumerate(setup.players))


def choices(options: list[str]) -> Constraint:
    grammar = "root ::= " + " | ".join('"' + o.replace('"', '\\"') + '"' for o in options)
    return Constraint(grammar=grammar, regex="(" + "|".join(re.escape(o) for o in options) + ")",
                      choices=tuple(options))  # fmt: skip

