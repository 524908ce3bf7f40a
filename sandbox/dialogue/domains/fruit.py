"""Fruit trading (the paper's Section 5, after Chawla et al.): players with private endowments and valuations trade.

The instructions are tones (the paper's Appendix F: calm, assertive,
submissive, any). A player's payoff is the value, by its own valuations, of
its basket after the trade minus before; nothing without a trade. The LLM
reward model reads it (`reward: value`, the paper's) or reads the agreed
trade and the game computes the payoffs (`reward: outcome`), or each player
names the agreed trade and only the same terms from both are a trade (`reward:
selection`); a trade a player cannot pay for does not happen.
"""

from __future__ import annotations

import re
from typing import Literal

import numpy as np
from langchain_core.messages import HumanMessage
from pydantic import Field

from prompts import render
from sandbox.dialogue.domains.judged import JudgedConfig, JudgedDomain, player_prompt
from sandbox.dialogue.reward import describe
from sandbox.llm.contracts import Constraint
from sandbox.rules.dialogue import Message, Outcome, Prompt, Setup, dialogue_text

FRUITS = ("apple", "banana", "blueberry", "kiwi")


def trade_constraint(first: str) -> Constraint:
    """No trade, or one as the game reads it, from the first player's side: "Alice gives N FRUIT and gets M FRUIT"."""
    fruit = " | ".join(f'"{f}"' for f in FRUITS)
    grammar = f'root ::= "none" | "{first} gives " n " " fruit " and gets " n " " fruit\nn ::= [1-9]\nfruit ::= {fruit}'
    return Constraint(grammar=grammar, regex=rf"none|{re.escape(first)} gives \d \w+ and gets \d \w+")


class FruitConfig(JudgedConfig):
    """`dialogue.domain` for fruit trading."""

    kind: Literal["fruit"] = "fruit"
    max_count: int = Field(3, ge=1, le=9, description="Endowments are drawn from 0..max_count of each fruit.")
    max_value: int = Field(10, ge=1, le=10, description="Valuations are drawn from 1..max_value per fruit.")
    reward: Literal["value", "outcome", "selection"] = Field(
        "value",
        description="value: the judge states each player's payoff (the paper's reward model); outcome: the "
        "judge names the agreed trade and the game computes the payoffs; selection (not in the paper; Lewis et al. "
        "2017): each player names the agreed trade, and only the same trade from both is an agreement.",
    )
    max_tokens: int = Field(96, ge=8, le=1024, description="Most new tokens per message.")

    def check_instructions(self, instructions: tuple[tuple[str, ...], ...]) -> None:
        pass  # any tone

    def build(
        self, players: tuple[str, ...], count: int, rng: np.random.Generator
    ) -> tuple[FruitDomain, tuple[Setup, ...]]:
        setups = []
        for _ in range(count):
            private, endowments, values = [], [], []
            for _player in players:
                have = {f: int(rng.integers(0, self.max_count + 1)) for f in FRUITS}
                if not any(have.values()):
                    have[FRUITS[int(rng.integers(len(FRUITS)))]] = 1
                value = {f: int(rng.integers(1, self.max_value + 1)) for f in FRUITS}
                endowments.append(have)
                values.append(value)
                private.append(
                    {
                        "Fruit endowment": ", ".join(f"{f}: {n}" for f, n in have.items()),
                        "Fruit valuations": ", ".join(f"{f}: {v}" for f, v in value.items()),
                    }
                )
            setups.append(Setup(players, tuple(private), data={"endowments": endowments, "values": values}))
        return FruitDomain(self), tuple(setups)


class FruitDomain(JudgedDomain):
    """Prompts and reward-model questions of fruit trading."""

    name = "fruit"
    config: FruitConfig

    def message(self, setup: Setup, speaker: int, instruction: str, dialogue: tuple[Message, ...]) -> Prompt:
        def text(so_far: tuple[Message, ...]) -> str:
            return render(
                "dialogue/fruit/message.j2",
                me=setup.players[speaker],
                other=setup.players[1 - speaker],
                info=setup.info_text(speaker),
                dialogue=dialogue_text(setup, so_far),
                tone=instruction,
            )

        return player_prompt(self.config.messages, setup, speaker, dialogue, text, self.config.max_tokens)

    def payoff_range(self) -> tuple[float, float]:
        bound = float(self.config.max_count * self.config.max_value)
        return (-bound, bound)

    def value_question(self, setup: Setup, dialogue: tuple[Message, ...], player: int) -> str:
        low, high = self.payoff_range()
        return render(
            "dialogue/fruit/value.j2",
            info=describe(setup),
            dialogue=dialogue_text(setup, dialogue),
            player=setup.players[player],
            low=int(low),
            high=int(high),
        )

    def outcome_question(self, setup: Setup, dialogue: tuple[Message, ...]) -> tuple[str, Constraint]:
        prompt = render("dialogue/fruit/outcome.j2", players=setup.players, dialogue=dialogue_text(setup, dialogue))
        return prompt, trade_constraint(setup.players[0])

    def selection_prompt(self, setup: Setup, dialogue: tuple[Message, ...], player: int) -> Prompt:
        text = render(
            "dialogue/fruit/selection.j2",
            me=setup.players[player],
            other=setup.players[1 - player],
            first=setup.players[0],
            info=setup.info_text(player),
            dialogue=dialogue_text(setup, dialogue),
        )
        return Prompt((HumanMessage(text),), trade_constraint(setup.players[0]), 24)

    def outcome_payoffs(self, setup: Setup, answer: str) -> Outcome:
        if answer.strip().lower().startswith("none"):
            return Outcome(self.no_deal(setup))
        match = re.search(r"gives (\d+) (\w+) and gets (\d+) (\w+)", answer)
        if match is None or match.group(2) not in FRUITS or match.group(4) not in FRUITS:
            return Outcome(self.no_deal(setup), illegal=f"reward model: {answer[:60]!r} is not a trade")
        trade = (int(match.group(1)), match.group(2), int(match.group(3)), match.group(4))
        return Outcome(self.payoffs_of(setup, trade))

    def features(self, setup: Setup, player: int) -> tuple[float, ...]:
        """`player`'s private information as numbers (imitation's `parameters`): its count of each fruit over
        max_count, then its value of each over max_value."""
        have, value = setup.data["endowments"][player], setup.data["values"][player]
        return (*(have[f] / self.config.max_count for f in FRUITS), *(value[f] / self.config.max_value for f in FRUITS))

    def payoffs_of(self, setup: Setup, trade: tuple[int, str, int, str] | None) -> tuple[float, ...]:
        """The true payoffs of player 0 giving `n` of one fruit for `m` of another (None: no trade); a trade that
        either cannot pay for does not happen."""
        if trade is None:
            return self.no_deal(setup)
        give_n, give, get_n, get = trade
        (have_a, have_b), (value_a, value_b) = setup.data["endowments"], setup.data["values"]
        if have_a[give] < give_n or have_b[get] < get_n:
            return self.no_deal(setup)
        return (
            float(get_n * value_a[get] - give_n * value_a[give]),
            float(give_n * value_b[give] - get_n * value_b[get]),
        )
