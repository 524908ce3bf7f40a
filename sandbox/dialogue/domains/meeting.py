"""Meeting scheduling (the paper's Section 5): two players with private available days and valuations agree a day.

Each player has days it can meet and a value (1-10) for each; its
instructions are days to insist on ("Insist on a meeting for Friday. Do not
accept any other day.", the wording of OpenSpiel's `schedule_meeting_w_dow`)
and the baseline "any". The payoff is each player's value of the agreed
day, nothing for either without agreement; the LLM reward model reads it
from the dialogue (`reward: value`, the paper's) or reads the agreed day and
the game computes the values (`reward: outcome`); or each player says which
day was agreed and only the same day from both is an agreement (`reward:
selection`).

Which days the `outcome` reward model asks about (`agreement`): `named`
asks about every day the emails name; `answered` (not in the paper) about at
most one, the day of the latest reply that names exactly one day and does
not copy the email before it (difflib's similarity below `COPY_RATIO`),
and only if no later email names another day: an email that accepts a day
names it ("Yes, Friday works for me"), an email that lists several days
accepts none of them, a copy of the other's email is not an answer, and a
later day reopens the choice. On the embedded model's own dialogues the
day-by-day judge with `named` read 55 agreements where two people read 4
(`scenarios/dialogue/labelled/meeting.jsonl`).
"""

from __future__ import annotations

import difflib
import re
from typing import Literal

import numpy as np
from langchain_core.messages import HumanMessage
from pydantic import Field, field_validator

from prompts import render
from sandbox.dialogue.domains.judged import JudgedConfig, JudgedDomain, player_prompt
from sandbox.dialogue.reward import Check, describe
from sandbox.llm.contracts import Constraint
from sandbox.rules.dialogue import ANY, Message, Outcome, Prompt, Setup, dialogue_text

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
NONE = "none"
COPY_RATIO = 0.6  # an email this similar to the one before it (difflib's ratio) copies it rather than answers


def days_named(text: str, *, latest_first: bool = False) -> list[str]:
    """The days `text` names, in the week's order, or the most recently named first."""
    last = {day: m.start() for day in DAYS for m in re.finditer(rf"\b{day}\b", text, re.IGNORECASE)}
    return sorted(last, key=last.__getitem__, reverse=True) if latest_first else [d for d in DAYS if d in last]


def copies(text: str, before: str) -> bool:
    """Whether `text` copies `before` (difflib's similarity of the two at least `COPY_RATIO`; without autojunk,
    which on emails of a few hundred characters rates two identical ones as unlike)."""
    return difflib.SequenceMatcher(None, before, text, autojunk=False).ratio() >= COPY_RATIO


def answered_day(dialogue: tuple[Message, ...]) -> str | None:
    """The day of the latest reply that names exactly one day and does not copy the message before it, if no
    later message names another day; None otherwise (`agreement: answered`)."""
    for k in range(len(dialogue) - 1, 0, -1):
        named = days_named(dialogue[k].text)
        if len(named) == 1 and not copies(dialogue[k].text, dialogue[k - 1].text):
            later = {day for m in dialogue[k + 1 :] for day in days_named(m.text)}
            return named[0] if later <= set(named) else None
    return None


class MeetingConfig(JudgedConfig):
    """`dialogue.domain` for meeting scheduling."""

    kind: Literal["meeting"] = "meeting"
    available: tuple[int, int] = Field((3, 5), description="Least and most days a player can meet (drawn per setup).")
    max_value: int = Field(10, ge=1, le=99, description="Day values are drawn from 1..max_value.")
    reward: Literal["value", "outcome", "selection"] = Field(
        "value",
        description="value: the judge states each player's payoff (the paper's reward model); outcome: the "
        "judge names the agreed day and the game computes the payoffs; selection (not in the paper; Lewis et al. "
        "2017): each player says which day was agreed, and only the same day from both is an agreement.",
    )
    max_tokens: int = Field(96, ge=8, le=1024, description="Most new tokens per message.")
    agreement: Literal["named", "answered"] = Field(
        "named",
        description="The days the outcome reward model asks about: named, every day the emails name; "
        "answered (not in the paper), only the day of the latest reply that names one day without copying the "
        "email before it, if no later email names another.",
    )

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

    def build(
        self, players: tuple[str, ...], count: int, rng: np.random.Generator
    ) -> tuple[MeetingDomain, tuple[Setup, ...]]:
        low, high = self.available
        setups = []
        for _ in range(count):
            private, values = [], []
            for _player in players:
                days = sorted(rng.choice(len(DAYS), size=int(rng.integers(low, high + 1)), replace=False))
                value = {DAYS[d]: int(rng.integers(1, self.max_value + 1)) for d in days}
                values.append(value)
                private.append(
                    {
                        "Days you can meet": ", ".join(value),
                        "Your value for each day": ", ".join(f"{d}: {v}" for d, v in value.items()),
                    }
                )
            setups.append(Setup(players, tuple(private), data={"values": values}))
        return MeetingDomain(self), tuple(setups)


class MeetingDomain(JudgedDomain):
    """Prompts and reward-model questions of meeting scheduling."""

    name = "meeting"
    config: MeetingConfig

    def message(self, setup: Setup, speaker: int, instruction: str, dialogue: tuple[Message, ...]) -> Prompt:
        def text(so_far: tuple[Message, ...]) -> str:
            return render(
                "dialogue/meeting/message.j2",
                me=setup.players[speaker],
                other=setup.players[1 - speaker],
                info=setup.info_text(speaker),
                dialogue=dialogue_text(setup, so_far),
                day=instruction,
            )

        return player_prompt(self.config.messages, setup, speaker, dialogue, text, self.config.max_tokens)

    def payoff_range(self) -> tuple[float, float]:
        return (0.0, float(self.config.max_value))

    def value_question(self, setup: Setup, dialogue: tuple[Message, ...], player: int) -> str:
        return render(
            "dialogue/meeting/value.j2",
            info=describe(setup),
            dialogue=dialogue_text(setup, dialogue),
            player=setup.players[player],
            max_value=self.config.max_value,
        )

    def outcome_checks(self, setup: Setup, dialogue: tuple[Message, ...]) -> tuple[Check, ...]:
        """One question per day the emails name, the most recently named first (a later day replaces an
        earlier one); no day named, no agreement and no question. With `agreement: answered` only the
        `answered_day`, if any."""
        text = dialogue_text(setup, dialogue)
        if self.config.agreement == "answered":
            day = answered_day(dialogue)
            days = [] if day is None else [day]
        else:
            days = days_named(text, latest_first=True)
        return tuple(
            Check(day, render("dialogue/meeting/outcome.j2", players=setup.players, dialogue=text, day=day))
            for day in days
        )

    def outcome_question(self, setup: Setup, dialogue: tuple[Message, ...]) -> tuple[str, Constraint]:
        raise NotImplementedError("meeting scheduling asks day by day (outcome_checks)")

    def selection_prompt(self, setup: Setup, dialogue: tuple[Message, ...], player: int) -> Prompt:
        options = [*DAYS, NONE]
        text = render(
            "dialogue/meeting/selection.j2",
            me=setup.players[player],
            other=setup.players[1 - player],
            info=setup.info_text(player),
            dialogue=dialogue_text(setup, dialogue),
        )
        grammar = "root ::= " + " | ".join(f'"{o}"' for o in options)
        return Prompt((HumanMessage(text),), Constraint(grammar=grammar, regex="|".join(options)), 4)

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
