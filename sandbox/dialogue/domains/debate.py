"""Public debate (the paper's Section 5): two players argue for and against a topic; an LLM judge decides.

The instructions are argument styles (logos, ethos, pathos, any), "Make a
{style} style argument" as in OpenSpiel's `debate_with_style_info`. The
payoff is 1 for the winner and 0 for the loser: the judge is asked for each
player whether it won (`reward: value`, one call per player, as the paper's
reward model scored each player apart) or once who won (`reward: outcome`).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from prompts import render
from sandbox.dialogue.domains.judged import JudgedConfig, JudgedDomain, player_prompt
from sandbox.dialogue.reward import choices
from sandbox.llm.contracts import Constraint
from sandbox.rules.dialogue import Message, Outcome, Prompt, Setup, dialogue_text

TOPICS = (
    "Breakfast is the most important meal of the day.",
    "Homework should be banned.",
    "Social media does more harm than good.",
    "Zoos should be closed.",
    "Cities should ban private cars from their centres.",
    "Everyone should learn a second language at school.",
    "Video games are good for children.",
    "Space exploration is worth its cost.",
    "Working from home is better than working in an office.",
    "Professional athletes are paid too much.",
)


class DebateConfig(JudgedConfig):
    """`dialogue.domain` for public debate."""

    kind: Literal["debate"] = "debate"
    topics: tuple[str, ...] = Field(TOPICS, min_length=1, description="Topics; each setup draws one.")
    reward: Literal["value", "outcome"] = Field(
        "value", description="value: the judge is asked for each player whether it won; outcome: who won, once."
    )
    max_tokens: int = Field(96, ge=8, le=1024, description="Most new tokens per message.")

    def check_instructions(self, instructions: tuple[tuple[str, ...], ...]) -> None:
        pass

    def build(
        self, players: tuple[str, ...], count: int, rng: np.random.Generator
    ) -> tuple[DebateDomain, tuple[Setup, ...]]:
        setups = []
        for _ in range(count):
            topic = self.topics[int(rng.integers(len(self.topics)))]
            sides = ("for", "against")
            private = tuple(
                {"Your position": f"Argue {sides[p % 2]} the topic statement."} for p in range(len(players))
            )
            setups.append(Setup(players, private, public={"topic": topic}, data={"sides": sides}))
        return DebateDomain(self), tuple(setups)


class DebateDomain(JudgedDomain):
    """Prompts and judge questions of public debate."""

    name = "debate"
    config: DebateConfig

    def message(self, setup: Setup, speaker: int, instruction: str, dialogue: tuple[Message, ...]) -> Prompt:
        def text(so_far: tuple[Message, ...]) -> str:
            return render(
                "dialogue/debate/message.j2",
                me=setup.players[speaker],
                other=setup.players[1 - speaker],
                topic=setup.public["topic"],
                info=setup.info_text(speaker),
                dialogue=dialogue_text(setup, so_far),
                style=instruction,
            )

        return player_prompt(self.config.messages, setup, speaker, dialogue, text, self.config.max_tokens)

    def payoff_range(self) -> tuple[float, float]:
        return (0.0, 1.0)

    def _sides(self, setup: Setup) -> list[str]:
        return [f"{name} argued {setup.data['sides'][p % 2]}" for p, name in enumerate(setup.players)]

    def value_question(self, setup: Setup, dialogue: tuple[Message, ...], player: int) -> str:
        return render(
            "dialogue/debate/value.j2",
            topic=setup.public["topic"],
            sides=self._sides(setup),
            dialogue=dialogue_text(setup, dialogue),
            player=setup.players[player],
        )

    def outcome_question(self, setup: Setup, dialogue: tuple[Message, ...]) -> tuple[str, Constraint]:
        prompt = render(
            "dialogue/debate/outcome.j2",
            topic=setup.public["topic"],
            sides=self._sides(setup),
            dialogue=dialogue_text(setup, dialogue),
        )
        return prompt, choices(list(setup.players))

    def outcome_payoffs(self, setup: Setup, answer: str) -> Outcome:
        winner = answer.strip().strip(".")
        if winner not in setup.players:
            return Outcome(self.no_deal(setup), illegal=f"reward model: {answer[:40]!r} names no player")
        return Outcome(tuple(float(name == winner) for name in setup.players))

    def payoffs_of(self, setup: Setup, winner: int | None) -> tuple[float, ...]:
        return self.no_deal(setup) if winner is None else tuple(float(p == winner) for p in range(len(setup.players)))
