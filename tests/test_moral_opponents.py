"""LLM opponents: the column player's prompt, illegal answers, a fixed LLM, a second LLM that learns, resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch

from sandbox.core.scenario_files import parse_kind
from sandbox.moral.environment import MoralSetup
from sandbox.moral.iterated import IteratedGame
from sandbox.moral.opponents import BaseOfAdapter, FrozenLLM
from sandbox.moral.run import resume_training, train_scenario
from sandbox.rules.matrix import MATRIX_GAMES
from sandbox.rules.matrix_prompt import ActionTokens
from sandbox.training.hooks import TrainHooks
from sandbox.training.rollout import play_episode
from tests.test_moral_training import StandIn, WordTokenizer

PD = MATRIX_GAMES.get("prisoners_dilemma")


def test_the_llm_opponent_answers_first_and_its_illegal_answer_is_recorded_not_seen() -> None:
    learner = StandIn(["action1", "action1", "action1", "action1"], WordTokenizer())
    opponent = FrozenLLM(StandIn(["action2", "action2", "junk", "action1"], WordTokenizer()), ActionTokens())
    setup = MoralSetup(parallel=2, rounds=2, seed=0, opponent=opponent)
    _, _, steps = play_episode(learner, setup, 0)  # type: ignore[arg-type]
    # Round 0: the opponent defects in both games; round 1: an illegal answer (game 0) and C (game 1).
    assert [s.other for s in steps[:2]] == ["D", "D"]
    assert steps[2].other == "D"  # the illegal answer: the learner is scored against the opponent's last legal D
    assert steps[3].other == "C"
    seen = opponent.experiences
    assert [s.own for _, _, s in seen] == ["D", "D", None, "C"]  # the opponent's own view: its moves ...
    assert all(s.other == "C" for _, _, s in seen)  # ... against the learner's C
    assert opponent.finish_episode(0) == {"opponent_illegal": 0.25} and opponent.experiences == []


def test_the_opponent_reads_the_game_from_its_own_side() -> None:
    table = MATRIX_GAMES.get("chicken")
    game = IteratedGame(table, None)
    game.history = [("C", "D")]  # learner C, opponent D

    class Capture:
        tokenizer = WordTokenizer()

        def generate(self, queries: list[torch.Tensor]) -> list[torch.Tensor]:
            return [torch.tensor([0]) for _ in queries]

    opponent = FrozenLLM(Capture(), ActionTokens())
    import sandbox.moral.opponents as module

    rendered: list[tuple[Any, Any]] = []
    original = module.matrix_prompt
    module.matrix_prompt = lambda t, h, tokens, rng: rendered.append((t, h)) or original(t, h, tokens, rng)  # type: ignore[assignment]
    try:
        opponent.moves([game], np.random.default_rng(0))
    finally:
        module.matrix_prompt = original
    view, history = rendered[0]
    assert history == [("D", "C")]  # its own move first
    assert view.payoffs("D", "C") == table.payoffs("C", "D")[::-1]  # its payoffs first


@pytest.fixture(scope="module")
def learner_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    scenario = parse_kind(
        "training",
        {
            "name": "tiny-learner",
            "models": {"policy": "tiny"},
            "training": {
                "episodes": 4,
                "opponent": "learner",
                "reward": "utilitarian",
                "opponent_reward": "game",
                "parallel": 1,
                "rounds": 5,
                "checkpoint_every": 2,
                "ppo": {
                    "learning_rate": 0.01,
                    "lora_r": 4,
                    "lora_alpha": 8,
                    "max_new_tokens": 1,
                    "ppo_epochs": 2,
                    "gradient_accumulation_steps": 1,
                },
            },
        },
    )
    return scenario, train_scenario(scenario, tmp_path_factory.mktemp("learner") / "run")


def test_a_learning_opponent_learns_with_its_own_reward(learner_run: tuple[Any, Path]) -> None:
    from safetensors.torch import load_file

    _, path = learner_run
    metrics = pd.read_csv(path / "metrics.csv")
    assert {"opponent_reward", "opponent_kl", "opponent_illegal"} <= set(metrics.columns)
    assert metrics["opponent_kl"].iloc[-1] != 0  # its adapter moved away from the base model
    learner = load_file(str(path / "adapter" / "adapter_model.safetensors"))
    opponent = load_file(str(path / "opponent_adapter" / "adapter_model.safetensors"))
    assert learner.keys() == opponent.keys()
    assert any(not torch.equal(learner[k], opponent[k]) for k in learner)  # two adapters, trained apart
    assert (path / "checkpoint" / "opponent" / "trainer.pt").is_file()


def test_a_killed_run_with_a_learning_opponent_resumes_to_the_same_results(
    learner_run: tuple[Any, Path], tmp_path: Path
) -> None:
    scenario, whole = learner_run

    class Killed(KeyboardInterrupt):
        pass

    def kill(row: dict[str, Any]) -> None:
        if row["episode"] == 2:
            raise Killed

    with pytest.raises(Killed):
        train_scenario(scenario, tmp_path / "cut", hooks=TrainHooks(on_episode=kill))
    resume_training(tmp_path / "cut")
    resumed, expected = (pd.read_csv(p / "metrics.csv").drop(columns="seconds") for p in (tmp_path / "cut", whole))
    pd.testing.assert_frame_equal(resumed, expected)
    assert json.loads((tmp_path / "cut" / "summary.json").read_text())["episodes"] == 4


def test_a_fixed_llm_is_the_base_model_with_the_adapter_off() -> None:
    from sandbox.moral.run import load_trainer, make_opponent

    scenario = parse_kind(
        "training",
        {
            "name": "x",
            "models": {"policy": "tiny"},
            "training": {"opponent": "llm", "ppo": {"lora_r": 4, "lora_alpha": 8}},
        },
    )
    trainer = load_trainer(scenario)
    opponent = make_opponent(scenario, trainer)
    assert isinstance(opponent, FrozenLLM) and isinstance(opponent.policy, BaseOfAdapter)
    for p in trainer.model.parameters():  # move the adapter far from zero
        if p.requires_grad:
            p.data.fill_(0.5)
    query = [torch.tensor(trainer.tokenizer("action1 , action2 :")["input_ids"])]
    with torch.no_grad(), trainer.model.disable_adapter():
        base = trainer.model(query[0][None]).logits
    with torch.no_grad():
        tuned = trainer.model(query[0][None]).logits
    assert not torch.allclose(base, tuned)
    torch.manual_seed(0)
    with trainer.model.disable_adapter():
        expected = trainer.generate(query)
    torch.manual_seed(0)
    assert torch.equal(opponent.policy.generate(query)[0], expected[0])


def test_llm_opponents_are_validated() -> None:
    from sandbox.base.errors import ScenarioError

    with pytest.raises(ScenarioError, match="opponent_reward is the reward of a learning opponent"):
        parse_kind("training", {"name": "x", "training": {"opponent_reward": "game"}})
    with pytest.raises(ScenarioError, match="grpo plays fixed strategies"):
        parse_kind(
            "training",
            {"name": "x", "training": {"algorithm": "grpo", "opponent": "learner", "parallel": 8, "rounds": 1}},
        )
    with pytest.raises(ScenarioError, match="or an LLM: llm, learner"):
        parse_kind("training", {"name": "x", "training": {"opponent": "grudger"}})
