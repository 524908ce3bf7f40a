"""`reward: selection` (each player says what was agreed) and the dialogue headline over seeds."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sandbox.dialogue.domains import FruitConfig, MeetingConfig
from sandbox.dialogue.domains.meeting import DAYS
from sandbox.dialogue.reward import RewardModel
from sandbox.llm import scripted
from sandbox.rules.dialogue import Message


def _meeting_setup() -> Any:
    domain, setups = MeetingConfig().build(("Alice", "Bob"), 1, np.random.default_rng(0))
    return domain, setups[0]


def test_the_selection_reward_asks_each_player_in_its_own_context() -> None:
    """`reward: selection` (Lewis et al. 2017): no judge; each player, with its own private information and
    instruction, says what was agreed, greedily; the same day from both is an agreement, anything else is not,
    and an answer the game cannot read is that player's illegal move."""
    domain, setup = _meeting_setup()
    values = setup.data["values"]
    day = next(iter(values[0]))
    dialogue = (Message(0, day, f"Shall we meet on {day}?"), Message(1, "any", f"Yes, {day} works for me."))
    seen: list[tuple[str, dict[str, Any]]] = []

    def says(answers: dict[str, str]) -> Any:
        def answer(messages: list[Any], kwargs: dict[str, Any]) -> str:
            text = "\n".join(str(m.content) for m in messages)
            seen.append((text, kwargs))
            return next(a for name, a in answers.items() if f"You are {name}" in text)

        return scripted([(r"both agree to meet", answer)])

    reward = RewardModel(domain, "selection")
    outcome = asyncio.run(reward.score(None, setup, dialogue, seed=1, players=says({"Alice": day, "Bob": day})))
    assert outcome.payoffs == (float(values[0][day]), float(values[1].get(day, 0))) and outcome.illegal is None
    alice = next(text for text, _ in seen if "You are Alice" in text)
    assert setup.info_text(0) in alice and setup.info_text(1) not in alice  # her own information only
    assert f"Yes, {day} works for me." in alice and alice.rstrip().endswith("did not both agree to one day.")
    assert "Insist" not in alice  # no instruction: the payoff is a function of the words said, as the tree keys it
    assert all(kwargs["temperature"] == 0.0 and kwargs["constraint"].grammar for _, kwargs in seen)
    other_instructions = (Message(0, "Monday", dialogue[0].text), Message(1, "Friday", dialogue[1].text))
    chat = MeetingConfig(messages="chat").build(("Alice", "Bob"), 1, np.random.default_rng(0))[0]
    assert (
        domain.selection_prompt(setup, dialogue, 0)
        == domain.selection_prompt(setup, other_instructions, 0)
        == chat.selection_prompt(setup, dialogue, 0)
    )
    assert reward.calls(setup, dialogue) == 2
    other = next(d for d in DAYS if d != day)
    differ = asyncio.run(reward.score(None, setup, dialogue, seed=1, players=says({"Alice": day, "Bob": other})))
    assert differ.payoffs == (0.0, 0.0) and differ.illegal is None
    none = asyncio.run(reward.score(None, setup, dialogue, seed=1, players=says({"Alice": "none", "Bob": "none"})))
    assert none.payoffs == (0.0, 0.0) and none.illegal is None
    garbage = asyncio.run(reward.score(None, setup, dialogue, seed=1, players=says({"Alice": day, "Bob": "soon"})))
    assert garbage.payoffs == (0.0, 0.0) and "Bob" in (garbage.illegal or "") and "Alice" not in (garbage.illegal or "")
    with pytest.raises(ValueError, match="players' model"):
        asyncio.run(reward.score(scripted([]), setup, dialogue, seed=1))


def test_a_fruit_selection_agrees_on_the_terms_of_a_trade() -> None:
    domain, setups = FruitConfig(reward="selection").build(("Alice", "Bob"), 1, np.random.default_rng(3))
    setup = setups[0]
    have_a, have_b = setup.data["endowments"]
    give = next(f for f, n in have_a.items() if n > 0)
    get = next(f for f, n in have_b.items() if n > 0 and f != give)
    dialogue = (Message(0, "calm", f"My {give} for your {get}?"), Message(1, "any", "Deal."))
    same = scripted(
        [
            (r"You are Alice", f"Alice gives 1 {give} and gets 1 {get}"),
            (r"You are Bob", f"Alice gives 1 {give} and gets 1 {get}."),
        ]
    )
    agreed, outcome = asyncio.run(RewardModel(domain, "selection").read_selection(same, setup, dialogue, seed=1))
    assert agreed == f"Alice gives 1 {give} and gets 1 {get}"
    assert outcome.payoffs == domain.payoffs_of(setup, (1, give, 1, get))
    more = scripted(
        [
            (r"You are Alice", f"Alice gives 1 {give} and gets 1 {get}"),
            (r"You are Bob", f"Alice gives 2 {give} and gets 1 {get}"),
        ]
    )
    assert asyncio.run(RewardModel(domain, "selection").read_selection(more, setup, dialogue, seed=1))[0] is None
    # Bob answering from his own side is outside the grammar: his illegal move, not a reading of his words
    mirrored = scripted(
        [
            (r"You are Alice", f"Alice gives 1 {give} and gets 1 {get}"),
            (r"You are Bob", f"Bob gives 1 {give} and gets 1 {get}"),
        ]
    )
    agreed, outcome = asyncio.run(RewardModel(domain, "selection").read_selection(mirrored, setup, dialogue, seed=1))
    assert agreed is None and outcome.payoffs == (0.0, 0.0) and "Bob" in (outcome.illegal or "")


def test_the_seeds_table_says_when_cfr_gain_clears_nashconv(tmp_path: Path) -> None:
    """Issue 29's dialogue target: CFR Gain above NashConv with 95% intervals that do not overlap."""
    from sandbox.dialogue.plots import plot_seeds, seeds_table

    def sweep(name: str, rows: list[dict[str, Any]]) -> Path:
        (tmp_path / name).mkdir()
        pd.DataFrame(rows).to_csv(tmp_path / name / "seeds.csv", index=False)
        return tmp_path / name

    def figures(nc: tuple[float, float, float], gain: tuple[float, float, float]) -> dict[str, Any]:
        return {
            "seeds": 3,
            **{f"summary.nash_conv.{k}": v for k, v in zip(("mean", "ci_low", "ci_high"), nc)},
            **{f"summary.cfr_gain_mean.{k}": v for k, v in zip(("mean", "ci_low", "ci_high"), gain)},
        }

    table = seeds_table(
        {
            "meeting": sweep(
                "m",
                [
                    {"dialogue.domain.reward": "outcome", **figures((0.01, 0.0, 0.02), (0.8, -2.7, 4.4))},
                    {"dialogue.domain.reward": "selection", **figures((0.01, 0.0, 0.02), (0.5, 0.1, 0.9))},
                ],
            ),
            "debate": sweep("d", [figures((0.2, 0.1, 0.3), (0.25, 0.15, 0.35))]),
        }
    )
    assert list(table["setting"]) == ["meeting, reward outcome", "meeting, reward selection", "debate"]
    assert list(table["separated"]) == [False, True, False]  # overlapping; clear; overlapping though higher
    plot_seeds(table, tmp_path / "seeds.png")
    assert (tmp_path / "seeds.png").stat().st_size > 10_000
