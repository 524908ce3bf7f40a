"""A proxy reward trains the matrix-game policy: the judge's table, PPO on it, resume, bad blocks (issue 11, part 5)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sandbox.base.errors import UsageError
from sandbox.cli.runs import app
from sandbox.core.scenario_files import load_scenario, parse_kind
from sandbox.llm.scripted import scripted
from sandbox.moral.run import resume_training, train_scenario
from sandbox.rewards.intrinsic import RewardParams, Schedule, Step
from sandbox.rewards.proxy import PROXY_TABLE, ProxyRewardSpec, proxy_rewards
from sandbox.rules.matrix import MATRIX_GAMES

runner = CliRunner()
SHIPPED = Path("scenarios/proxy/train/welfare_ppo_tiny.yaml")
PD = MATRIX_GAMES.get("kwon_prisoners_dilemma")

TINY = {
    "name": "proxy-tiny",
    "seed": 1,
    "models": {"policy": "tiny"},
    "training": {
        "episodes": 4,
        "game": "kwon_prisoners_dilemma",
        "opponent": "always_cooperate",
        "reward": "proxy:welfare",
        "proxies": {"welfare": {"objective": "welfare"}},
        "illegal": -1,
        "parallel": 1,
        "rounds": 5,
        "checkpoint_every": 2,
        "ppo": {
            "learning_rate": 0.01,
            "lora_r": 4,
            "lora_alpha": 8,
            "max_new_tokens": 1,
            "ppo_epochs": 1,
            "gradient_accumulation_steps": 1,
        },
    },
}


def judge_naming(letters: str) -> Any:
    """A scripted judge that reasons, then names `letters` (the options of the regular listing)."""
    return scripted([(r"Therefore, which option", letters), (r"Let's think step by step", "Option A totals 6.")])


def never_called() -> Any:
    def fail(messages: list[Any], kwargs: dict[str, Any]) -> str:
        raise AssertionError("the judge was asked again")

    return scripted([(r".", fail)])


def test_the_table_holds_the_judges_set_and_the_truth(tmp_path: Path) -> None:
    specs = {"welfare": ProxyRewardSpec(objective="welfare"), "fair": ProxyRewardSpec(objective="equality")}
    judge = judge_naming("A, C")  # CC and DC: right on CC, wrong on DC (welfare is CC only; equality CC and DD)
    rewards = proxy_rewards(specs, PD, "embedded", tmp_path, seed=0, judge=judge)
    assert sorted(rewards) == ["proxy:fair", "proxy:welfare", "truth:fair", "truth:welfare"]
    params = RewardParams()
    for own, other, proxy, truth in [("C", "C", 1, 1), ("D", "C", 1, 0), ("C", "D", 0, 0), ("D", "D", 0, 0)]:
        step = Step(own, other, None, PD)
        assert (rewards["proxy:welfare"](step, params), rewards["truth:welfare"](step, params)) == (proxy, truth)
    assert rewards["truth:fair"](Step("D", "D", None, PD), params) == 1.0
    table = pd.read_csv(tmp_path / PROXY_TABLE)
    assert len(table) == 8 and set(table["judge_options"]) == {"A,C"}
    assert judge.calls == 4  # two stages per proxy reward: one rendered game each
    again = proxy_rewards(specs, PD, "embedded", tmp_path, seed=0, judge=never_called())  # read back, not asked
    assert {k: dict(v.table) for k, v in again.items()} == {k: dict(v.table) for k, v in rewards.items()}


def test_a_scrambled_listing_maps_letters_back_to_outcomes(tmp_path: Path) -> None:
    # the paper's scrambled PD shows DC, CD, DD, CC under A, B, C, D: "D" is mutual cooperation
    rewards = proxy_rewards(
        {"w": ProxyRewardSpec(objective="welfare", order="scrambled")},
        PD,
        "embedded",
        tmp_path,
        seed=0,
        judge=judge_naming("D"),
    )
    assert dict(rewards["proxy:w"].table) == {("C", "C"): 1.0, ("C", "D"): 0.0, ("D", "C"): 0.0, ("D", "D"): 0.0}
    assert dict(rewards["truth:w"].table) == dict(rewards["proxy:w"].table)


def test_training_on_a_proxy_reward_asks_once_and_resumes_without_asking(tmp_path: Path) -> None:
    judge = judge_naming("A")
    path = train_scenario(parse_kind("training", TINY), tmp_path / "run", judge=judge)
    assert judge.calls == 2
    metrics = pd.read_csv(path / "metrics.csv")
    assert (metrics["reward"] == metrics["reward_proxy:welfare"]).all()
    # a legal round earns 1 exactly when the learner cooperated (the partner always does); illegal ones -1
    expected = metrics["C|C"] + metrics["C|D"] - metrics["illegal"]
    assert ((metrics["reward_proxy:welfare"] - expected).abs() < 1e-9).all()
    summary = json.loads((path / "summary.json").read_text())
    proxy = summary["proxy"]
    assert (proxy["distinct_episodes"], proxy["judge_calls"], proxy["judge_calls_in_training"]) == (1, 2, 0)
    welfare = proxy["objectives"]["welfare"]
    assert (welfare["labeling_score"], welfare["judge_options"], welfare["true_options"]) == (1.0, "A", "A")
    # agent accuracy: the share of the final rounds with a true outcome, an illegal round counting as wrong
    tail = metrics.tail(max(1, len(metrics) // 10))
    assert welfare["agent_accuracy"] == pytest.approx((tail["C|C"] + tail["C|D"]).mean())
    assert 0 <= welfare["agent_accuracy"] <= 1
    assert "proxy:welfare" in summary["final_rewards"] and "truth:welfare" in summary["final_rewards"]

    # a run killed after its first checkpoint resumes from the table, with the same rows
    cut = tmp_path / "cut"
    train_scenario(
        parse_kind("training", {**TINY, "training": {**TINY["training"], "episodes": 2}}), cut, judge=judge_naming("A")
    )
    scenario_file = cut / "scenario.yaml"
    data = yaml.safe_load(scenario_file.read_text())
    data["training"]["episodes"] = 4
    scenario_file.write_text(yaml.safe_dump(data))
    resumed = resume_training(cut, judge=never_called())
    columns = [c for c in metrics.columns if c != "seconds"]
    pd.testing.assert_frame_equal(pd.read_csv(resumed / "metrics.csv")[columns], metrics[columns])


def test_a_judge_that_names_no_options_fails_the_run_before_training(tmp_path: Path) -> None:
    judge = scripted([(r"Therefore, which option", "I cannot say"), (r"step by step", "Hmm.")])
    with pytest.raises(UsageError, match="names no options.*start a new run"):
        train_scenario(parse_kind("training", TINY), tmp_path / "run", judge=judge)
    assert not (tmp_path / "run" / PROXY_TABLE).exists()
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "failed"


def test_an_empty_set_is_an_answer_and_names_survive_the_csv(tmp_path: Path) -> None:
    # "None" (no outcome meets the objective) is a valid, wrong answer: every outcome pays 0
    specs = {"NA": ProxyRewardSpec(objective="welfare")}  # a name pandas would read as missing
    data = copy.deepcopy(TINY)
    data["training"].update({"reward": "proxy:NA", "proxies": {"NA": {"objective": "welfare"}}, "episodes": 2})
    path = train_scenario(parse_kind("training", data), tmp_path / "run", judge=judge_naming("None"))
    assert dict(proxy_rewards(specs, PD, "embedded", path, seed=1).pop("proxy:NA").table) == {
        ("C", "C"): 0.0,
        ("C", "D"): 0.0,
        ("D", "C"): 0.0,
        ("D", "D"): 0.0,
    }
    figures = json.loads((path / "summary.json").read_text())["proxy"]["objectives"]["NA"]
    assert (figures["judge_options"], figures["labeling_score"]) == ("None", 0.0)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"reward": "proxy:kindness"}, "training.reward: proxy:kindness is not declared"),
        ({"reward": "game,truth:welfare@2"}, None),  # the ground truth may be trained on (a baseline)
        ({"proxies": {"welfare": {"objective": "kindness"}}}, "training.proxies.welfare.objective"),
        ({"proxies": {"welfare": {"objective": "welfare", "colour": 1}}}, "training.proxies.welfare.colour"),
        ({"opponent": "llm"}, "training.proxies: proxy rewards train against a fixed strategy"),
        (
            {"opponent": "learner", "proxies": {}, "reward": "game", "opponent_reward": "game,proxy:welfare@2"},
            "training.opponent_reward: a learning opponent takes the registered rewards only",
        ),
    ],
)
def test_bad_proxy_training_blocks_exit_2_naming_the_field(tmp_path: Path, change: dict, field: str | None) -> None:
    data = copy.deepcopy(TINY)
    data["training"].update(change)
    file = tmp_path / "bad.yaml"
    file.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["validate", str(file)])
    if field is None:
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code == 2, result.output
    assert "bad.yaml" in result.output and field in result.output.replace("\n", " ")


def test_the_shipped_scenario_and_the_judge_override() -> None:
    scenario = load_scenario(SHIPPED, kind="training")
    assert scenario.models.judge == "embedded" and scenario.training.reward == "proxy:welfare"
    assert Schedule.parse("game,proxy:welfare@10").at(10) == "proxy:welfare"
    result = runner.invoke(app, ["train", str(SHIPPED), "--model", "judge=scripted"])
    assert result.exit_code == 2 and "tests only" in result.output
    result = runner.invoke(app, ["train", str(SHIPPED), "--model", "user=embedded"])
    assert result.exit_code == 2 and "policy or judge" in result.output


@pytest.mark.slow(seconds=51)
@pytest.mark.parametrize(("letters", "learns"), [("A", "C"), ("C", "D")])
def test_ppo_learns_what_the_judge_rewards(tmp_path: Path, letters: str, learns: str) -> None:
    """The shipped scenario on a scripted judge: naming CC teaches cooperation (agent accuracy high); naming DC
    (a wrong welfare set) teaches defection, and the truth then scores the agent low."""
    path = train_scenario(load_scenario(SHIPPED, kind="training"), tmp_path / "run", judge=judge_naming(letters))
    summary = json.loads((path / "summary.json").read_text())
    rates = summary["final_action_rates"]
    assert rates[f"{learns}|C"] >= 0.85, rates
    agent = summary["proxy"]["objectives"]["welfare"]["agent_accuracy"]
    assert agent >= 0.85 if learns == "C" else agent <= 0.1, summary["proxy"]
