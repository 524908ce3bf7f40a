"""Moral fine-tuning learns on the tiny model against tit-for-tat (slow: training on CPU, still run in CI).

Each test trains a shipped tiny scenario file end to end (`sandbox train`'s
path: scenario, run directory, summary) with fixed seeds. The tiny model's
vocabulary holds the action tokens, digits and a few marks; every other word
of the prompt is [UNK]. A random model answers a legal token now and then from
the start; it must learn which one. Its weights start wider than GPT-2's (see
`sandbox.llm.tiny_model`) so that an adapter can make one token likely at all.

Each game starts from a random state, so the first round of every game follows
a random move; 20 rounds a game keep that under a tenth of the play. PPO's
rates are those of the last tenth of training; GRPO's come from 8 episodes the
trained policy plays afterwards (GRPO trains on prompts of random states).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.core.scenario_files import load_scenario
from sandbox.moral.run import train_scenario

TINY = Path(__file__).parent.parent / "scenarios" / "moral" / "tiny"


def learn(name: str, out: Path) -> dict[str, float]:
    summary = json.loads(
        (train_scenario(load_scenario(TINY / f"{name}.yaml", kind="training"), out) / "summary.json").read_text()
    )
    return {**summary["final_action_rates"], "illegal": summary["final_illegal_rate"]}


@pytest.mark.parametrize(
    "prefix",
    [pytest.param("", marks=pytest.mark.slow(seconds=165)), pytest.param("grpo_", marks=pytest.mark.slow(seconds=41))],
)
def test_utilitarian_learns_mutual_cooperation(prefix: str, tmp_path: Path) -> None:
    rates = learn(f"{prefix}utilitarian_vs_tft", tmp_path / "run")
    assert rates["C|C"] >= 0.9, rates


@pytest.mark.parametrize(
    "prefix",
    [pytest.param("", marks=pytest.mark.slow(seconds=128)), pytest.param("grpo_", marks=pytest.mark.slow(seconds=42))],
)
def test_game_learns_to_defect(prefix: str, tmp_path: Path) -> None:
    rates = learn(f"{prefix}game_vs_tft", tmp_path / "run")
    assert rates["D|C"] + rates["D|D"] >= 0.9, rates


@pytest.mark.parametrize(
    "prefix",
    [pytest.param("", marks=pytest.mark.slow(seconds=133)), pytest.param("grpo_", marks=pytest.mark.slow(seconds=48))],
)
def test_deontological_stops_defecting_against_cooperators(prefix: str, tmp_path: Path) -> None:
    rates = learn(f"{prefix}deontological_vs_tft", tmp_path / "run")
    assert rates["D|C"] <= 0.05 and rates["illegal"] <= 0.05, rates
