"""Moral fine-tuning learns on a tiny model against tit-for-tat (slow: PPO on CPU, still run in CI).

The tiny model's vocabulary holds the action tokens, digits and a few
marks; every other word of the prompt is [UNK]. A random model answers a
legal token now and then from the start; it must learn which one. Its
weights start wider than GPT-2's (see `build_tiny_lm`) so that an adapter
can make one token likely at all.

Each game starts from a random state, so the first two rounds of every game
follow random moves; 20 rounds a game keep that under a tenth of the play.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.moral.ppo import PPOTrainer
from sandbox.moral.ppo_config import PPOConfig
from sandbox.moral.rewards import Schedule
from sandbox.moral.training import MoralSetup, final_action_rates, train
from tests.tiny_lm import build_tiny_lm

VOCABULARY = ["action1 action2 action3 action4 0 1 2 3 4 5 6 | , . :"]
EPISODES = 80


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_lm(tmp_path_factory.mktemp("tiny-moral"), VOCABULARY, n_embd=64, n_layer=2, init=0.1)


def learn(tiny_dir: Path, reward: str) -> dict[str, float]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    config = PPOConfig(batch_size=40, mini_batch_size=10, gradient_accumulation_steps=1, learning_rate=1e-2,
                       lora_r=8, lora_alpha=16, max_new_tokens=1, seed=0)  # fmt: skip
    trainer = PPOTrainer(AutoModelForCausalLM.from_pretrained(tiny_dir), AutoTokenizer.from_pretrained(tiny_dir), config)
    setup = MoralSetup(schedule=Schedule.parse(reward), opponent="tit_for_tat", parallel=2, rounds=20, seed=0)
    return final_action_rates(train(trainer, setup, EPISODES))


@pytest.mark.slow
def test_utilitarian_learns_mutual_cooperation(tiny_dir: Path) -> None:
    rates = learn(tiny_dir, "utilitarian")
    assert rates["C|C"] >= 0.9, rates


@pytest.mark.slow
def test_game_learns_to_defect(tiny_dir: Path) -> None:
    rates = learn(tiny_dir, "game")
    assert rates["D|C"] + rates["D|D"] >= 0.9, rates


@pytest.mark.slow
def test_deontological_stops_defecting_against_cooperators(tiny_dir: Path) -> None:
    rates = learn(tiny_dir, "deontological")
    assert rates["D|C"] <= 0.05 and rates["illegal"] <= 0.05, rates
