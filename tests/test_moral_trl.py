"""GRPO and RLOO (TRL) behind the same rewards: the reward function, the config, a run, resume."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

from sandbox.base.errors import ScenarioError
from sandbox.core.scenario_files import parse_kind
from sandbox.moral.environment import MoralSetup
from sandbox.moral.run import resume_training, train_scenario
from sandbox.rewards.intrinsic import Schedule
from sandbox.training.hooks import TrainHooks
from sandbox.training.trl_trainers import MoralRewardFunction


def test_the_reward_function_scores_each_answer_in_its_prompts_state() -> None:
    seen: list[tuple[int, list[Any]]] = []
    setup = MoralSetup(schedule=Schedule.parse("game,deontological@3"), opponent="tit_for_tat")
    f = MoralRewardFunction(setup, lambda episode, steps: seen.append((episode, steps)))
    history = [json.dumps([["C", "C"]]), json.dumps([["C", "C"]]), json.dumps([["D", "C"]]), json.dumps([["C", "D"]])]
    completions = ["action2", "action1", "action2", "maybe"]
    # TFT answers the learner's last move: C, C, D, C.
    assert f(["p"] * 4, completions, history, trainer_state=SimpleNamespace(global_step=0)) == [4.0, 3.0, 1.0, -6.0]
    assert f(["p"] * 4, completions, history, trainer_state=SimpleNamespace(global_step=3)) == [-3.0, 0.0, -3.0, -6.0]
    assert [e for e, _ in seen] == [0, 3] and [s.own for s in seen[0][1]] == ["D", "C", "D", None]
    conversational = [[{"role": "assistant", "content": "action1"}]]
    assert f(["p"], conversational, history[:1], trainer_state=SimpleNamespace(global_step=0)) == [3.0]


@pytest.mark.parametrize(
    ("training", "message"),
    [
        (
            {"algorithm": "grpo", "trl": {"num_generation": 4}},
            "training.trl.num_generation: not a field of TRL's GRPOConfig",
        ),
        ({"algorithm": "rloo", "trl": {"learning_rate": 0.1}}, "training.trl.learning_rate is set by the sandbox"),
        ({"algorithm": "grpo", "trl": {"num_generations": 3}}, "num_generations (3) must be at least 2 and divide"),
        ({"algorithm": "ppo", "trl": {"beta": 0.1}}, "training.trl is for algorithm grpo or rloo"),
    ],
)
def test_trl_fields_are_checked(training: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as error:
        parse_kind("training", {"name": "x", "training": {"parallel": 2, "rounds": 4, **training}}, "t.yaml")
    assert message in str(error.value)


def scenario(algorithm: str, **training: Any) -> Any:
    return parse_kind(
        "training",
        {
            "name": f"tiny-{algorithm}",
            "models": {"policy": "tiny"},
            "training": {
                "algorithm": algorithm,
                "episodes": 4,
                "reward": "utilitarian",
                "parallel": 1,
                "rounds": 8,
                "checkpoint_every": 2,
                "trl": {"num_generations": 4},
                "ppo": {"learning_rate": 0.01, "lora_r": 4, "lora_alpha": 8, "max_new_tokens": 1},
                **training,
            },
        },
    )


@pytest.mark.parametrize("algorithm", ["grpo", "rloo"])
def test_a_trl_run_writes_the_run_directory(algorithm: str, tmp_path: Path) -> None:
    path = train_scenario(scenario(algorithm), tmp_path / "run")
    metrics = pd.read_csv(path / "metrics.csv")
    assert metrics["episode"].tolist() == [0, 1, 2, 3]
    assert (metrics[["C|C", "C|D", "D|C", "D|D", "illegal"]].sum(axis=1).round(9) == 1).all()
    play = pd.read_csv(path / "play.csv")
    assert len(play) == 1  # a tenth of 4 episodes, at least one
    summary = json.loads((path / "summary.json").read_text())
    assert summary["algorithm"] == algorithm and summary["final_action_rates_from"].startswith("play after training")
    assert summary["final_action_rates"]["C|C"] == pytest.approx(play["C|C"].iloc[0])
    assert (path / "adapter" / "adapter_model.safetensors").is_file()
    assert (path / "trl" / "checkpoint-4").is_dir()


def test_a_killed_grpo_run_resumes_from_its_trl_checkpoint_to_the_same_results(tmp_path: Path) -> None:
    whole = pd.read_csv(train_scenario(scenario("grpo"), tmp_path / "whole") / "metrics.csv")

    class Killed(KeyboardInterrupt):
        pass

    def kill(row: dict[str, Any]) -> None:
        if row["episode"] == 2:
            raise Killed

    with pytest.raises(Killed):
        train_scenario(scenario("grpo"), tmp_path / "cut", hooks=TrainHooks(on_episode=kill))
    assert len(pd.read_csv(tmp_path / "cut" / "metrics.csv")) == 3
    started: list[int] = []
    resume_training(tmp_path / "cut", hooks=TrainHooks(on_start=lambda total, done: started.append(done)))
    assert started == [2]  # from checkpoint-2
    resumed = pd.read_csv(tmp_path / "cut" / "metrics.csv")
    pd.testing.assert_frame_equal(resumed.drop(columns="seconds"), whole.drop(columns="seconds"))
    assert json.loads((tmp_path / "cut" / "run.json").read_text())["status"] == "complete"
