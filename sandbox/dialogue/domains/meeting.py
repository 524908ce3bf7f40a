"""Meeting scheduling (the paper's Section 5): two players with private available days and valuations agree a day.

Each player has days it can meet and a value (1-10) for each; its
instructions are days to insist on ("Insist on a meeting for Friday. Do not
accept any other day.", the wording of OpenSpiel's `schedule_meeting_w_dow`)
and the baseline "any". The payoff is each player's value of the agreed
day, nothing for either without agreement; the LLM reward model reads it
from the dialogue (`reward: value`, the paper's) or reads the agreed day and
the game computes the values (`reward: outcome`).
"""

from __future__ import annotations

import re
from typing import Literal

import numpy as np
from pydantic import Field, field_validator

from prompts import render
from sandbox.dialogue.domains.judged import JudgedConfig, JudgedDomain, player_prompt
from sandbox.games.dialogue import ANY, Message, Outcome, Prompt, Setup, dialogue_text
from sandbox.llm.contracts import Constraint
from sandbox.dialogue.reward import Check, describe

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
NONE = "none"


class MeetingConfig(JudgedConfig):
    """`dialogue.domain` for meeting scheduling."""

    kind: Literal["meeting"] = "meeting"
    available: tuple[int, int] = Field((3, 5), description="Least and most days a player can meet (drawn per setup).")
    max_value: int = Field(10, ge=1, le=99, description="Day values are drawn from 1..max_value.")
    reward: Literal["value", "outcome"] = Field(
        "value", description="value: the judge states each player's payoff (the paper's reward model); outcome: the "
        "judge names the agreed day and the game computes the payoffs.")  # fmt: skip
    max_tokens: int = Field(96, ge=8, le=1024, description="Most new tokens per message.")

    @field_validator("available")
    @classmethod
    def _days(cls, value: tuple[int, int]) -> tuple[int, int]:
        if not 1 <= value[0] <= value[1] <= len(DAYS):
            raise ValueError(f"give [least, most] days a player can meet, with 1 <= least <= most <= {len(DAYS)}")
        return value

    def check_instructions(self, instructions: tuple[tuple[str, ...], ...]) -> None:
        for player, own in enumerate(instructions):
            unknown = [i for i in own if i != ANY and i not in DAYS]
            if unknown:
                raise ValueError(f"player {player}'s instructions must be days ({', '.join(DAYS)}) or any: {unknown}")

    def candidate_options(self) -> tuple[str, ...]:
        """PSRO's candidates are days."""
        return DAYS

    def build(self, players: tuple[str, ...], count: int, rng: np.random.Generator) -> tuple[MeetingDomain, tuple[Setup, ...]]:
        low, high = self.available
        setups = []
        for _ in range(count):
            private, values = [], []
            for _player in players:
                days = sorted(rng.choice(len(DAYS), size=int(rng.integers(low, high + 1)), replace=False))
                value = {DAYS[d]: int(rng.integers(1, self.max_value + 1)) for d in days}
                values.append(value)
                private.append({"Days you can meet": ", ".join(value),
                                "Your value for each day": ", ".join(f"{d}: {v}" for d, v in value.items())})  # fmt: skip
            setups.append(Setup(players, tuple(private), data={"values": values}))
        return MeetingDomain(self), tuple(setups)


class MeetingDomain(JudgedDomain):
    """Prompts and reward-model questions of meeting scheduling."""

    name = "meeting"
    config: MeetingConfig

    def message(self, setup: Setup, speaker: int, instruction: str, dialogue: tuple[Message, ...]) -> Prompt:
        def text(so_far: tuple[Message, ...]) -> str:
            return render("dialogue/meeting/message.j2", me=setup.players[speaker], other=setup.players[1 - speaker],
                          info=setup.info_text(speaker), dialogue=dialogue_text(setup, so_far), day=instruction)  # fmt: skip

        return player_prompt(self.config.messages, setup, speaker, dialogue, text, self.config.max_tokens)

    def payoff_range(self) -> tuple[float, float]:
        return (0.0, float(self.config.max_value))

    def value_question(self, setup: Setup, dialogue: tuple[Message, ...], player: int) -> str:
        return render("dialogue/meeting/value.j2", info=describe(setup), dialogue=dialogue_text(setup, dialogue),
                      player=setup.players[player], max_value=self.config.max_value)  # fmt: skip

    def outcome_checks(self, setup: Setup, dialogue: tuple[Message, ...]) -> tuple[Check, ...]:
        """One question per day the emails name, the most recently named first (a later day replaces an
        earlier one); no day named, no agreement and no question."""
        text = dialogue_text(setup, dialogue)
        last = {day: match.start() for day in DAYS for match in re.finditer(rf"\b{day}\b", text, re.IGNORECASE)}
        return tuple(Check(day, render("dialogue/meeting/outcome.j2", players=setup.players, dialogue=text, day=day))
                     for day in sorted(last, key=last.__getitem__, reverse=True))  # fmt: skip

    def outcome_question(self, setup: Setup, dialogue: tuple[Message, ...]) -> tuple[str, Constraint]:
        raise NotImplementedError("meeting scheduling asks day by day (outcome_checks)")

    def outcome_payoffs(self, setup: Setup, answer: str) -> Outcome:
        day = answer.strip().strip(".").capitalize()
        if day.lower() == NONE:
            return Outcome(self.no_deal(setup))
        if day not in DAYS:
            return Outcome(self.no_deal(setup), illegal=f"reward model: {answer[:40]!r} is not a day")
        return Outcome(tuple(float(values.get(day, 0)) for values in setup.data["values"]))

    def features(self, setup: Setup, player: int) -> tuple[float, ...]:
        """`player`'s private information as numbers (imitation's `parameters`): its value of each day of the
        week over max_value, 0 for a day it cannot meet."""
        values = setup.data["values"][player]
        return tuple(values.get(day, 0) / self.config.max_value for day in DAYS)

    def payoffs_of(self, setup: Setup, day: str | None) -> tuple[float, ...]:
        """The true payoffs of an agreement on `day` (None: no agreement); the reward-model harness's truth."""
        return self.no_deal(setup) if day is None else tuple(float(v.get(day, 0)) for v in setup.data["values"])
