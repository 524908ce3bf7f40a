"""The base of domains paid by the LLM reward model (meeting, fruit, debate): no rule ends or pays a dialogue."""

from __future__ import annotations

from typing import Any

from sandbox.dialogue.reward import Check
from sandbox.games.dialogue import Message, Outcome, Setup


class JudgedDomain:
    """A domain whose dialogues end at the message limit (or by the judge) and are paid by the reward model;
    without an agreement every player gets nothing."""

    name = ""
    zero_sum = False

    def __init__(self, config: Any) -> None:
        self.config = config

    def over(self, setup: Setup, dialogue: tuple[Message, ...]) -> bool | None:
        return None

    def payoffs(self, setup: Setup, dialogue: tuple[Message, ...]) -> Outcome | None:
        return None  # the reward model's

    def outcome_checks(self, setup: Setup, dialogue: tuple[Message, ...]) -> tuple[Check, ...] | None:
        return None  # one outcome_question

    def no_deal(self, setup: Setup) -> tuple[float, ...]:
        return tuple(0.0 for _ in setup.players)
