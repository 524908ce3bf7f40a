"""Moral fine-tuning over several seeds, the authors' training settings, and the device field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import torch
import yaml
from typer.testing import CliRunner

from sandbox.cli.runs import app
from sandbox.core.scenario_files import load_scenario, parse_kind
from sandbox.moral.across_seeds import aggregate_evaluations, resume_seeds, train_seeds
from sandbox.training.hooks import TrainHooks

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]

TINY = {
    "name": "tiny-seeds",
    "seed": 5,
    "models": {"policy": "tiny"},
    "training": {
        "episodes": 4,
        "reward": "utilitarian",
        "parallel": 1,
        "rounds": 4,
        "checkpoint_every": 2,
        "ppo": {
            "learning_rate": 0.01,
            "lora_r": 4,
            "lora_alpha": 8,
            "max_new_tokens": 1,
            "ppo_epochs": 2,
            "gradient_accumulation_steps": 1,
        },
        "evaluation": {"games": ["prisoners_dilemma", "chicken"], "games_per_game": 3, "rounds": 2},
    },
}


class Killed(KeyboardInterrupt):
    pass


def test_a_killed_group_of_seeds_resumes_to_the_same_results(tmp_path: Path) -> None:
    scenario = parse_kind("training", TINY)
    whole = train_seeds(scenario, 2, tmp_path / "whole")
    assert json.loads((whole / "seeds.json").read_text()) == {"seeds": [5, 6]}

    def kill(row: dict[str, Any]) -> None:
        if row["episode"] == 2:
            raise Killed

    calls = {"n": 0}

    def hooks(seed: int) -> TrainHooks:  # the second seed is killed after its checkpoint at 2 episodes
        calls["n"] += 1
        return TrainHooks(on_episode=kill if seed == 6 else None)

    with pytest.raises(Killed):
        train_seeds(scenario, 2, tmp_path / "cut", hooks=hooks)
    cut = tmp_path / "cut"
    assert not (cut / "seeds.csv").exists() and (cut / "seed-5" / "summary.json").is_file()
    started: list[tuple[int, int]] = []
    resume_seeds(cut, hooks=lambda seed: TrainHooks(on_start=lambda total, done: started.append((seed, done))))
    assert started == [(6, 2)]  # seed 5 is finished and skipped; seed 6 resumes from its checkpoint
    for seed in (5, 6):
        a, b = (pd.read_csv(d / f"seed-{seed}" / "metrics.csv").drop(columns="seconds") for d in (whole, cut))
        pd.testing.assert_frame_equal(a, b)
    a, b = (pd.read_csv(d / "seeds.csv").drop(columns="seconds_per_episode") for d in (whole, cut))
    pd.testing.assert_frame_equal(a, b)
    assert not a.drop(columns="seed").iloc[0].equals(a.drop(columns="seed").iloc[1])  # the seeds differ
    actions = pd.read_csv(cut / "action_types.csv").set_index("action_type")
    assert actions.loc["C|C", "mean"] == pytest.approx(a["C|C"].mean()) and actions.loc["C|C", "seeds"] == 2
    assert (cut / "training_actions.png").stat().st_size > 0


def test_the_cli_trains_resumes_and_evaluates_a_group_of_seeds(tmp_path: Path) -> None:
    file = tmp_path / "tiny.yaml"
    file.write_text(yaml.safe_dump({**TINY, "training": {**TINY["training"], "episodes": 2}}))
    out = tmp_path / "group"
    result = runner.invoke(app, ["train", str(file), "--seeds", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 seeds" in " ".join(result.output.split()) and (out / "seed-6" / "adapter").is_dir()
    result = runner.invoke(app, ["resume", str(out)])  # nothing left to train: the aggregate again
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["evaluate-moral", str(out)])
    assert result.exit_code == 0, result.output
    regret = pd.read_csv(out / "moral_regret.csv")
    per_seed = [pd.read_csv(out / f"seed-{s}" / "moral_regret.csv") for s in (5, 6)]

    def cell(frame: pd.DataFrame) -> float:
        return frame.query(
            "policy == 'fine-tuned' and condition == 'test' and metric == 'moral' and "
            "kind == 'utilitarian' and game == 'chicken'"
        )["mean"].item()

    assert cell(regret) == pytest.approx((cell(per_seed[0]) + cell(per_seed[1])) / 2)
    assert regret["seeds"].eq(2).all() and (out / "moral_regret.png").stat().st_size > 0
    entry = aggregate_evaluations(out)
    assert len(entry["regret"]) == len(regret) and entry["seeds"] == [5, 6] and "normal" in entry["ci"]
    assert json.loads((out / "summary.json").read_text())["evaluation"]["regret"] == entry["regret"]
    actions = pd.read_csv(out / "test_action_types.csv").set_index(["policy", "condition", "order", "game"])
    per_seed = [pd.read_csv(out / f"seed-{s}" / "test_action_types.csv").set_index(actions.index.names) for s in (5, 6)]
    key = ("fine-tuned", "test", "CD-CD", "chicken")
    values = [frame.loc[key, "illegal"] for frame in per_seed]
    mean, half = sum(values) / 2, 1.96 * abs(values[0] - values[1]) / 2  # sd of two values: |a - b| / sqrt(2)
    assert actions.loc[key, "illegal"] == pytest.approx(mean)  # the mean across seeds, and the authors' interval
    assert actions.loc[key, "illegal_ci_high"] == pytest.approx(min(1.0, mean + half))
    assert (out / "test_action_types.png").stat().st_size > 0


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_resume_takes_another_device(tmp_path: Path) -> None:
    """A run started on a GPU (its scenario.yaml says cuda) resumes on a CPU with --device cpu."""
    from sandbox.moral.run import train_scenario

    def kill(row: dict[str, Any]) -> None:
        if row["episode"] == 2:
            raise Killed

    run = tmp_path / "run"
    with pytest.raises(Killed):
        train_scenario(parse_kind("training", TINY), run, hooks=TrainHooks(on_episode=kill))
    data = yaml.safe_load((run / "scenario.yaml").read_text())
    data["models"]["device"] = "cuda"
    (run / "scenario.yaml").write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["resume", str(run)])  # the run's own device is absent: exit 2, nothing written
    assert result.exit_code == 2 and "no CUDA device" in " ".join(result.output.split()), result.output
    assert not (run / "summary.json").exists()
    result = runner.invoke(app, ["resume", str(run), "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert len(pd.read_csv(run / "metrics.csv")) == 4 and (run / "adapter").is_dir()
    assert yaml.safe_load((run / "scenario.yaml").read_text())["models"]["device"] == "cuda"  # as it was started
    society = tmp_path / "society"
    society.mkdir()
    (society / "scenario.yaml").write_text("name: a-society\n")
    result = runner.invoke(app, ["resume", str(society), "--device", "cpu"])
    assert (
        result.exit_code == 2 and "--device: not an option for" in result.output and "a society run" in result.output
    ), result.output


def test_seeds_are_two_or_more_and_a_model_that_fails_to_load_leaves_nothing(tmp_path: Path) -> None:
    file = tmp_path / "tiny.yaml"
    file.write_text(yaml.safe_dump(TINY))
    result = runner.invoke(app, ["train", str(file), "--seeds", "1", "--out", str(tmp_path / "one")])
    assert result.exit_code == 2 and "2 or more seeds" in result.output and not (tmp_path / "one").exists()
    result = runner.invoke(
        app, ["train", str(file), "--seeds", "2", "--policy", "hf:/nowhere", "--out", str(tmp_path / "none")]
    )
    assert result.exit_code == 2 and not (tmp_path / "none").exists(), result.output
    mine = tmp_path / "mine"  # a directory the researcher made stays, as empty as it was
    mine.mkdir()
    result = runner.invoke(app, ["train", str(file), "--seeds", "2", "--policy", "hf:/nowhere", "--out", str(mine)])
    assert result.exit_code == 2 and mine.is_dir() and not any(mine.iterdir()), result.output


def test_a_learning_opponent_is_not_seeded_as_the_next_seed_s_learner() -> None:
    from sandbox.moral.run import load_trainer, opponent_seed

    scenario = parse_kind("training", TINY)
    assert opponent_seed(scenario.seed) not in (scenario.seed, scenario.seed + 1)
    opponent = load_trainer(scenario.model_copy(update={"seed": opponent_seed(scenario.seed)}))
    next_learner = load_trainer(scenario.model_copy(update={"seed": scenario.seed + 1}))
    weights = [dict(t.model.named_parameters()) for t in (opponent, next_learner)]
    lora = [name for name in weights[0] if "lora_A" in name]
    assert lora and any(not torch.equal(weights[0][n], weights[1][n]) for n in lora)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_the_device_field_refuses_cuda_on_a_machine_without_it(tmp_path: Path) -> None:
    file = tmp_path / "tiny.yaml"
    file.write_text(yaml.safe_dump(TINY))
    for args in (["--device", "cuda"], ["--device", "cuda", "--seeds", "2"]):
        out = tmp_path / "run"
        result = runner.invoke(app, ["train", str(file), *args, "--out", str(out)])
        assert result.exit_code == 2, result.output
        assert "no CUDA device" in " ".join(result.output.split()) and not out.exists()
    result = runner.invoke(app, ["train", str(file), "--device", "gpu", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and "models.device" in result.output and not (tmp_path / "run").exists()


def test_presets_of_the_ppo_fields_and_the_real_scenario_files() -> None:
    authors = parse_kind(
        "training", {**TINY, "training": {**TINY["training"], "ppo_preset": "authors", "ppo": {"lora_r": 4}}}
    ).training.ppo_config(0)
    assert (
        authors.mini_batch_size,
        authors.gradient_accumulation_steps,
        authors.lora_alpha,
        authors.max_grad_norm,
        authors.ppo_epochs,
    ) == (4, 4, 32, 0.0, 4)
    multi = parse_kind(
        "training", {**TINY, "training": {**TINY["training"], "ppo_preset": "multi_step", "ppo": {"lora_alpha": 64}}}
    ).training.ppo_config(0)
    assert (multi.mini_batch_size, multi.max_grad_norm, multi.lora_alpha) == (1, 1.0, 64)  # the ppo block wins
    files = sorted((ROOT / "scenarios" / "moral" / "real").glob("*.yaml"))
    assert len(files) >= 12
    for path in files:
        scenario = load_scenario(path, kind="training")
        config = scenario.training.ppo_config(scenario.seed)
        batch = 3 if scenario.training.opponent == "learner" else 5
        assert (
            config.batch_size,
            config.mini_batch_size,
            config.gradient_accumulation_steps,
            config.ppo_epochs,
            config.lora_alpha,
            config.lora_r,
            config.max_grad_norm,
        ) == (batch, batch, 4, 4, 32, 64, 0.0), path.name


def test_the_authors_settings_take_one_optimiser_step_per_episode_at_ratio_one() -> None:
    from sandbox.moral.run import load_trainer

    scenario = parse_kind(
        "training",
        {
            **TINY,
            "training": {
                **TINY["training"],
                "ppo_preset": "authors",
                "ppo": {"lora_r": 4, "max_new_tokens": 1, "learning_rate": 0.01},
            },
        },
    )
    trainer = load_trainer(scenario)
    steps = {"n": 0}
    step = trainer.optimizer.step

    def counted(*args: Any, **kwargs: Any) -> Any:
        steps["n"] += 1
        return step(*args, **kwargs)

    trainer.optimizer.step = counted  # type: ignore[method-assign]
    queries = [torch.tensor(trainer.tokenizer(t)["input_ids"]) for t in ("action1 action2", "action2", "3 , 4", "1")]
    answers = [torch.tensor(trainer.tokenizer(a)["input_ids"]) for a in ("action1", "action2", "action1", "action2")]
    stats = trainer.step(queries, answers, [1.0, -1.0, 0.5, 2.0])
    assert steps["n"] == 1  # four PPO epochs, one accumulated optimiser step
    assert stats["ratio_mean"] == pytest.approx(1.0, abs=1e-6) and stats["clipfrac"] == 0.0


def test_an_unconditional_opponent_starts_from_its_own_move() -> None:
    import numpy as np

    from agents.strategies import STRATEGIES
    from sandbox.moral.iterated import IteratedGame
    from sandbox.rules.matrix import MATRIX_GAMES

    game = MATRIX_GAMES.get("prisoners_dilemma")
    for name, move in (("always_defect", "D"), ("always_cooperate", "C")):
        starts = set()
        for seed in range(8):
            g = IteratedGame(game, STRATEGIES.get(name), history_length=2)
            g.reset(np.random.default_rng(seed))
            starts |= {theirs for _, theirs in g.history}
            assert len(g.history) == 2
        assert starts == {move}
    tft = set()
    for seed in range(8):
        g = IteratedGame(game, STRATEGIES.get("tit_for_tat"))
        g.reset(np.random.default_rng(seed))
        tft.add(g.history[0][1])
    assert tft == {"C", "D"}  # any other opponent starts from a random state
