"""`sandbox train`: the training scenario, the run directory, checkpoints, resume, and bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sandbox.base.errors import ScenarioError
from sandbox.cli.runs import app
from sandbox.core.scenario_files import parse_kind
from sandbox.moral.run import resume_training, train_scenario
from sandbox.moral.scenario import apply_training_overrides
from sandbox.training.hooks import TrainHooks

runner = CliRunner()

TINY = {
    "name": "tiny-run",
    "seed": 3,
    "models": {"policy": "tiny"},
    "training": {
        "episodes": 6,
        "reward": "game,utilitarian@3",
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
}


def write(path: Path, data: Any) -> Path:
    path.write_text(yaml.safe_dump(data))
    return path


def test_training_scenario_defaults_and_overrides() -> None:
    scenario = parse_kind("training", TINY)
    config = scenario.training.ppo_config(seed=scenario.seed)
    assert (config.batch_size, config.mini_batch_size, config.seed, config.lora_r) == (5, 5, 3, 4)
    changed = apply_training_overrides(scenario, episodes=9, seed=1, ppo=["learning_rate=1e-4", "lora_r=16"])
    config = changed.training.ppo_config(seed=changed.seed)
    assert (changed.training.episodes, config.learning_rate, config.lora_r, config.seed) == (9, 1e-4, 16, 1)


@pytest.mark.parametrize(
    ("training", "field"),
    [
        ({"ppo": {"learning_rat": 1}}, "training.ppo.learning_rat: unknown field"),
        ({"ppo": {"lora_r": "many"}}, "training.ppo.lora_r"),
        ({"ppo": {"batch_size": 4}}, "training.ppo.batch_size (4) must equal parallel x rounds"),
        ({"ppo": {"mini_batch_size": 3}}, "training.ppo.mini_batch_size"),
        ({"reward": "kindness"}, "training.reward: unknown reward 'kindness'"),
        ({"reward": "game,utilitarian"}, "training.reward: schedule"),
        ({"opponent": "grudger"}, "training.opponent: unknown strategy"),
        ({"game": "poker"}, "training.game: unknown matrix game"),
        ({"tokens": ["a", "a"]}, "training.tokens: the two action tokens must differ"),
    ],
)
def test_bad_training_scenario_names_the_field(training: dict[str, Any], field: str) -> None:
    with pytest.raises(ScenarioError) as error:
        parse_kind("training", {"name": "x", "training": training}, "bad.yaml")
    assert "bad.yaml" in str(error.value) and field in str(error.value)


def test_bad_input_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    bad = write(tmp_path / "bad.yaml", {"name": "x", "models": {"policy": "gpt-5"}, "training": {}})
    result = runner.invoke(app, ["train", str(bad), "--out", str(out)])
    assert result.exit_code == 2 and "models.policy" in result.output and not out.exists()
    good = write(tmp_path / "good.yaml", TINY)
    result = runner.invoke(app, ["train", str(good), "--out", str(out), "--ppo", "cliprange=2"])
    assert result.exit_code == 2 and "training.ppo.cliprange" in result.output and not out.exists()
    missing = write(tmp_path / "missing.yaml", {"name": "x", "models": {"policy": "hf:/nowhere"}, "training": {}})
    result = runner.invoke(app, ["train", str(missing), "--out", str(out)])
    assert result.exit_code == 2 and "/nowhere" in result.output and not out.exists()
    society = write(tmp_path / "society.yaml", {"name": "s", "society": {"size": 2}})
    result = runner.invoke(app, ["train", str(society), "--out", str(out)])
    assert result.exit_code == 2 and "training" in result.output and not out.exists()


def test_validate_knows_training_scenarios(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(write(tmp_path / "t.yaml", TINY))])
    assert result.exit_code == 0 and "training tiny" in result.output


def test_train_writes_the_run_directory(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = runner.invoke(app, ["train", str(write(tmp_path / "t.yaml", TINY)), "--out", str(out), "--episodes", "4"])
    assert result.exit_code == 0, result.output
    metrics = pd.read_csv(out / "metrics.csv")
    assert metrics["episode"].tolist() == [0, 1, 2, 3]
    assert metrics["reward_kind"].tolist() == ["game", "game", "game", "utilitarian"]
    for column in (
        "reward_game",
        "reward_deontological",
        "reward_utilitarian",
        "C|C",
        "C|D",
        "D|C",
        "D|D",
        "illegal",
        "kl",
    ):
        assert column in metrics
    assert (metrics[["C|C", "C|D", "D|C", "D|D", "illegal"]].sum(axis=1).round(9) == 1).all()
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["final_action_rates"]) == ["C|C", "C|D", "D|C", "D|D"]
    last = metrics.iloc[-1]  # the last tenth of 4 episodes is the last one
    assert summary["final_action_rates"]["C|C"] == pytest.approx(last["C|C"])
    assert (out / "adapter" / "adapter_model.safetensors").is_file()
    assert json.loads((out / "checkpoint" / "state.json").read_text())["episodes"] == 4
    assert (out / "training_actions.png").stat().st_size > 0 and (out / "training_rewards.png").stat().st_size > 0
    assert json.loads((out / "run.json").read_text())["status"] == "complete"


class Killed(KeyboardInterrupt):
    pass


def test_a_killed_run_resumes_to_the_same_results(tmp_path: Path) -> None:
    scenario = parse_kind("training", TINY)
    whole = pd.read_csv(train_scenario(scenario, tmp_path / "whole") / "metrics.csv")

    def kill_after_episode_2(row: dict[str, Any]) -> None:
        if row["episode"] == 2:
            raise Killed  # episode 2's row is written; the checkpoint holds episodes 0 and 1

    with pytest.raises(Killed):
        train_scenario(scenario, tmp_path / "cut", hooks=TrainHooks(on_episode=kill_after_episode_2))
    cut = tmp_path / "cut"
    assert json.loads((cut / "run.json").read_text())["status"] == "interrupted"
    assert json.loads((cut / "checkpoint" / "state.json").read_text())["episodes"] == 2
    assert len(pd.read_csv(cut / "metrics.csv")) == 3
    with (cut / "metrics.csv").open("a") as handle:
        handle.write("3,utilitarian,-1.2")  # a line cut off by the kill

    started: list[int] = []
    resume_training(cut, hooks=TrainHooks(on_start=lambda total, done: started.append(done)))
    assert started == [2]
    resumed = pd.read_csv(cut / "metrics.csv")
    pd.testing.assert_frame_equal(resumed.drop(columns="seconds"), whole.drop(columns="seconds"))
    assert (
        json.loads((cut / "summary.json").read_text())["final_action_rates"]
        == json.loads((tmp_path / "whole" / "summary.json").read_text())["final_action_rates"]
    )


def test_a_run_killed_by_an_older_sandbox_resumes_with_its_own_columns(tmp_path: Path) -> None:
    """metrics.csv keeps the header it was started with: a newer column (here `skipped`) is left out, not
    written under the wrong name."""
    scenario = parse_kind("training", TINY)
    whole = pd.read_csv(train_scenario(scenario, tmp_path / "whole") / "metrics.csv")

    def kill_after_episode_2(row: dict[str, Any]) -> None:
        if row["episode"] == 2:
            raise Killed

    with pytest.raises(Killed):
        train_scenario(scenario, tmp_path / "cut", hooks=TrainHooks(on_episode=kill_after_episode_2))
    metrics = tmp_path / "cut" / "metrics.csv"
    pd.read_csv(metrics).drop(columns="skipped").to_csv(metrics, index=False)  # as an older sandbox wrote it
    resume_training(tmp_path / "cut")
    resumed = pd.read_csv(metrics)
    assert "skipped" in whole.columns and "skipped" not in resumed.columns
    pd.testing.assert_frame_equal(resumed.drop(columns="seconds"), whole.drop(columns=["seconds", "skipped"]))


def test_resume_command_dispatches_training_runs(tmp_path: Path) -> None:
    scenario = parse_kind("training", {**TINY, "training": {**TINY["training"], "episodes": 2}})
    path = train_scenario(scenario, tmp_path / "run")
    result = runner.invoke(app, ["resume", str(path)])
    assert result.exit_code == 0, result.output
    assert "action types over the last tenth of 2 episodes" in " ".join(result.output.split())


def test_a_failure_is_recorded_and_the_run_stays_resumable(tmp_path: Path) -> None:
    from sandbox.base.errors import RunFailedError

    def fail(row: dict[str, Any]) -> None:
        if row["episode"] == 1:
            raise RuntimeError("the disk is full")

    scenario = parse_kind("training", {**TINY, "training": {**TINY["training"], "episodes": 3}})
    with pytest.raises(RunFailedError, match="the disk is full.*sandbox resume"):
        train_scenario(scenario, tmp_path / "run", hooks=TrainHooks(on_episode=fail))
    status = json.loads((tmp_path / "run" / "run.json").read_text())
    assert status["status"] == "failed" and "the disk is full" in status["error"]
    resume_training(tmp_path / "run")
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "complete"
    assert pd.read_csv(tmp_path / "run" / "metrics.csv")["episode"].tolist() == [0, 1, 2]
