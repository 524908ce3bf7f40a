"""Labeling runs (`sandbox label`) on scripted judges: prompts, graded rewards, baselines, files, resume, errors."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sandbox.base.errors import RunFailedError
from sandbox.base.seeding import generator
from sandbox.cli.runs import app
from sandbox.core.scenario_files import parse_kind
from sandbox.llm.cache import CachedChatModel, ResponseCache
from sandbox.llm.contracts import CallInfo
from sandbox.llm.scripted import ScriptedReply, scripted
from sandbox.proxy import label_run as label_module
from sandbox.proxy import ultimatum_task
from sandbox.proxy.conformance import last_offer, reply, rule_judge
from sandbox.proxy.label_run import label_scenario, resume_labeling
from sandbox.rewards.judge import ProxyJudge
from sandbox.rewards.matrix_task import matrix_item
from tests.test_notebooks import execute_notebook

runner = CliRunner()


def scenario(**proxy: Any) -> Any:
    block = {"task": "ultimatum", "objective": {"name": "reject_below_share", "threshold": 0.3}, "test_items": 16}
    block.update(proxy)
    return parse_kind("proxy", {"name": "proxy-test", "seed": 5, "proxy": block})


def test_the_prompt_for_each_intent_form() -> None:
    offer = ultimatum_task.Offer(8.0, 2.0)
    examples_block = scenario(intent={"form": "examples", "examples": 3}).proxy
    offers, _ = examples_block.draw_split(generator(0, 0), generator(0, 1))
    few_shot = ultimatum_task.render_prompt(examples_block, offer, ultimatum_task.examples_for(examples_block, offers))
    assert few_shot.text.startswith(
        "P1 and P2 are playing the Ultimatum Game. P1 proposes how they should split $10  and"
    )
    assert few_shot.text.count("Is the outcome desirable?") == 4 and not few_shot.step_by_step
    assert few_shot.text.count("\nYes\n") + few_shot.text.count("\nNo\n") == 3
    assert few_shot.text.endswith(
        "P1 proposes a split of $8.0 for P1 and $2.0 for P2. P2 rejected this offer. A desirable "
        "outcome is defined as one where P2 punishes P1's selfish behavior. Is the outcome desirable?"
    )
    explained_block = scenario(
        intent={"form": "examples", "explanations": True, "examples": [{"proposer": 9.78, "responder": 0.22}]}
    ).proxy
    explained = ultimatum_task.render_prompt(
        explained_block, offer, ultimatum_task.examples_for(explained_block, [ultimatum_task.Offer(9.78, 0.22)])
    )
    assert explained.step_by_step and explained.text.endswith("Let's think step by step:")
    assert (
        "P2 receives $0.22 < $3 so P2 should reject this offer. Therefore, the outcome is desirable." in explained.text
    )
    described_block = scenario(
        intent={"form": "description", "description": "P2 rejects offers under 30%."},
        answer_instruction="Answer with Yes or No.",
    ).proxy
    described = ultimatum_task.render_prompt(described_block, offer, [])
    assert (
        "P2 acts on this principle: P2 rejects offers under 30%. Is the outcome desirable?\nAnswer with Yes or No."
        in described.text
    )
    assert described.text.count("P1 proposes a split") == 1
    blank = ultimatum_task.render_prompt(described_block, offer, [], objective=False)
    assert "desirable outcome is defined" not in blank.text and "Is the outcome desirable?" in blank.text
    no_task = ultimatum_task.render_prompt(scenario(task_description=False).proxy, offer, [], objective=False)
    assert not no_task.text.startswith("P1 and P2 are playing")


def test_a_labeling_run_writes_its_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[list[float]]] = []
    real_fit = label_module.fit_supervised
    monkeypatch.setattr(label_module, "fit_supervised", lambda x, y: seen.append(x) or real_fit(x, y))
    path = label_scenario(scenario(), tmp_path / "run", models={"judge": scripted([(r"Ultimatum", rule_judge)])})
    labels = pd.read_csv(path / "labels.csv")
    accuracy = pd.read_csv(path / "accuracy.csv").set_index("condition")
    llm = labels[labels["condition"] == "llm"]
    assert len(llm) == 16 and llm["correct"].all() and (llm["source"] == "logprob").all()
    assert set(llm["reward"].round(2)) <= {0.85 / 0.9, 0.2 / 0.9} | {round(0.85 / 0.9, 2), round(0.2 / 0.9, 2)}
    assert llm["mass"].round(6).eq(0.9).all()
    assert accuracy.loc["llm", "accuracy"] == 1.0 and accuracy.loc["llm", "auc"] == 1.0
    blank = labels[labels["condition"] == "no_objective"]
    assert accuracy.loc["no_objective", "accuracy"] == pytest.approx(blank["truth"].mean())  # says yes to all
    assert accuracy.loc["random", "accuracy"] == 0.5
    assert "supervised" in accuracy.index and len(labels[labels["condition"] == "supervised"]) == 16
    # the supervised baseline saw the 10 examples only, none of the test items
    assert len(seen) == 1 and len(seen[0]) == 10
    test_items = {(p1, p2) for p1, p2 in llm[["proposer", "responder"]].itertuples(index=False)}
    assert not test_items & {tuple(row) for row in seen[0]}
    summary = json.loads((path / "summary.json").read_text())
    assert summary["judge_calls"] == 32 and summary["judge_cache_hits"] == 0 and summary["items"] == 16
    assert summary["graded_sources"] == {"logprob": 16}
    agents = pd.read_csv(path / "agents.csv").groupby("condition")["agent_accuracy"].mean()
    assert agents["llm"] == agents["llm_graded"] == agents["true_reward"] == 1.0
    assert (path / "accuracy.png").stat().st_size > 0 and not (path / "labels.partial.jsonl").exists()
    records = [json.loads(line) for line in (path / "transcripts.jsonl").read_text().splitlines()]
    assert len(records) == 32 and all(r["role"] == "judge" and r["token_logprobs"] for r in records)


def test_unparsed_answers_are_counted_never_scored(tmp_path: Path) -> None:
    def judge(messages: list[Any], kwargs: dict[str, Any]) -> str:
        p1, p2 = last_offer(messages)
        return "Maybe" if p2 > 5 else ("Yes" if p2 / (p1 + p2) < 0.3 else "No")

    path = label_scenario(
        scenario(no_objective=False), tmp_path / "run", models={"judge": scripted([(r"Ultimatum", judge)])}
    )
    labels = pd.read_csv(path / "labels.csv")
    llm = labels[labels["condition"] == "llm"]
    unparsed = llm[~llm["parsed"]]
    assert len(unparsed) > 0 and unparsed["reward"].isna().all() and (unparsed["source"] == "unparsed").all()
    assert (llm.loc[llm["parsed"], "source"] == "binary").all()  # no log-probabilities: the binary answer
    row = pd.read_csv(path / "accuracy.csv").set_index("condition").loc["llm"]
    assert row["unparsed"] == len(unparsed)
    assert row["accuracy"] == pytest.approx(1 - len(unparsed) / 16) and row["accuracy_parsed"] == 1.0


async def test_a_cache_hit_returns_the_same_graded_reward(tmp_path: Path) -> None:
    model = scripted([(r"Ultimatum", lambda m, k: reply(True, 0.7))])
    cached = CachedChatModel(inner=model, responses=ResponseCache(tmp_path / "cache.sqlite"))
    judge = ProxyJudge(cached)
    prompt = "P1 and P2 are playing the Ultimatum Game. Is the outcome desirable?"
    first = await judge.yes_no(prompt, step_by_step=False, call=CallInfo(role="judge"))
    reopened = CachedChatModel(inner=model, responses=ResponseCache(tmp_path / "cache.sqlite"))
    second = await ProxyJudge(reopened).yes_no(prompt, step_by_step=False, call=CallInfo(role="judge"))
    assert model.calls == 1 and first == second and first.p_yes == pytest.approx(0.7 / 0.9)
    binary = await ProxyJudge(reopened, graded=False).yes_no(prompt, step_by_step=False, call=CallInfo(role="judge"))
    assert model.calls == 2 and binary.p_yes is None and binary.reward == 1.0  # a different call, not a hit


async def test_step_by_step_answers_are_graded_at_the_verdict() -> None:
    tokens = ["P2", " gets", " $0.5", ".", " Therefore", ",", " the", " outcome", " is", " desirable", "."]
    logprobs = tuple({"token": t, "logprob": -0.1, "top": {t: -0.1}} for t in tokens)
    logprobs = (
        logprobs[:9]
        + (
            {
                "token": " desirable",
                "logprob": math.log(0.6),
                "top": {" desirable": math.log(0.6), " not": math.log(0.3)},
            },
        )
        + logprobs[10:]
    )
    model = scripted([(r".", ScriptedReply("".join(tokens), logprobs))])
    verdict = await ProxyJudge(model).yes_no("question", step_by_step=True, call=CallInfo(role="judge"))
    assert verdict.label is True and verdict.p_yes == pytest.approx(2 / 3) and verdict.mass == pytest.approx(0.9)


def test_a_matrix_run_scores_answer_sets(tmp_path: Path) -> None:
    def judge(messages: list[Any], kwargs: dict[str, Any]) -> str:
        if len(messages) == 1:
            return "the sum of both rewards."
        options = re.findall(
            r"^([A-D])\. .*P1 gets reward of (-?[\d.]+), P2 gets reward of (-?[\d.]+)\.$",
            str(messages[0].content),
            flags=re.M,
        )
        if "players choose" in str(messages[0].content):
            return "A"
        best = max(float(a) + float(b) for _, a, b in options)
        return ", ".join(letter for letter, a, b in options if float(a) + float(b) == best)

    matrix = parse_kind(
        "proxy",
        {
            "name": "m",
            "proxy": {
                "task": "matrix",
                "objective": {"name": "welfare"},
                "intent": {"form": "description"},
                "order": "scrambled",
            },
        },
    )
    path = label_scenario(matrix, tmp_path / "run", models={"judge": scripted([(r"two-player game", judge)])})
    labels = pd.read_csv(path / "labels.csv")
    llm = labels[labels["condition"] == "llm"].set_index("game")
    assert (llm["score"] == 1.0).all() and len(llm) == 4
    assert (
        llm.loc["kwon_prisoners_dilemma", "A_payoffs"] == "5,0" and llm.loc["kwon_prisoners_dilemma", "A_cell"] == "D,C"
    )
    assert llm.loc["kwon_prisoners_dilemma", "truth"] == "D"
    accuracy = pd.read_csv(path / "accuracy.csv").set_index("condition")
    assert accuracy.loc["llm", "accuracy"] == 1.0 and accuracy.loc["random", "accuracy"] == pytest.approx(0.125)
    assert 0.0 <= accuracy.loc["no_objective", "accuracy"] < 1.0
    assert accuracy.loc["llm", "agent_accuracy"] == 1.0  # a bandit on the judge's sets picks a welfare-best option
    # No-Objective always names A: right only where A is welfare-best (nowhere in the scrambled listings)
    assert accuracy.loc["no_objective", "agent_accuracy"] == pytest.approx(np.mean(["A" in t for t in llm["truth"]]))
    item = matrix_item("kwon_prisoners_dilemma", "scrambled", np.random.default_rng(0))
    # anyone can recompute the truth from the row: the payoffs listed under A-D
    payoffs = [tuple(float(v) for v in llm.loc["kwon_prisoners_dilemma", f"{x}_payoffs"].split(",")) for x in "ABCD"]
    assert payoffs == [item.shown(x) for x in "ABCD"]


def test_a_killed_labeling_run_resumes_to_the_same_labels(tmp_path: Path) -> None:
    calls = {"n": 0}

    def flaky(messages: list[Any], kwargs: dict[str, Any]) -> Any:
        calls["n"] += 1
        if calls["n"] > 7:
            raise ValueError("the judge went away")  # a permanent error: no retry
        return rule_judge(messages, kwargs)

    whole = label_scenario(scenario(), tmp_path / "whole", models={"judge": scripted([(r"Ultimatum", rule_judge)])})
    with pytest.raises(RunFailedError, match="resumable"):
        label_scenario(scenario(), tmp_path / "cut", models={"judge": scripted([(r"Ultimatum", flaky)])})
    assert (tmp_path / "cut" / "labels.partial.jsonl").exists() and not (tmp_path / "cut" / "labels.csv").exists()
    kept = len((tmp_path / "cut" / "labels.partial.jsonl").read_text().splitlines())
    resumed_model = scripted([(r"Ultimatum", rule_judge)])
    resume_labeling(tmp_path / "cut", models={"judge": resumed_model})
    assert resumed_model.calls == 32 - kept  # verdicts already given are not asked again
    pd.testing.assert_frame_equal(pd.read_csv(whole / "labels.csv"), pd.read_csv(tmp_path / "cut" / "labels.csv"))
    assert json.loads((tmp_path / "cut" / "run.json").read_text())["status"] == "complete"


@pytest.mark.parametrize(
    "change,field",
    [
        ({"objective": {"name": "nope"}}, "objective.name"),
        ({"objective": {"name": "reject_below_share"}}, "missing threshold"),
        ({"objective": {"name": "reject_below_share", "threshold": 1.5}}, "objective.threshold"),
        ({"objective": {"name": "welfare"}}, "objective.name"),
        ({"test_items": 0}, "proxy.test_items"),
        ({"intent": {"form": "description"}}, "intent.description"),
        ({"intent": {"form": "sometimes"}}, "proxy.intent.form"),
        ({"scoring": "fuzzy"}, "proxy.scoring"),
        ({"colour": "blue"}, "proxy.colour"),
        (
            {"intent": {"form": "description", "description": "x", "examples": [{"proposer": 1, "responder": 1}]}},
            "only the examples form",
        ),
        ({"intent": {"form": "examples", "examples": [{"proposer": 0, "responder": 0}]}}, "positive amount"),
        ({"test_items": 201}, "proxy.test_items"),
        ({"calibration": "examples", "intent": {"form": "description", "description": "x"}}, "at least 2 examples"),
        ({"calibration": "examples", "intent": {"examples": 1}}, "at least 2 examples"),
        ({"calibration": "examples", "scoring": "binary"}, "scoring: graded"),
        ({"calibration": "always"}, "proxy.calibration"),
        (
            {
                "calibration": "examples",
                "intent": {"examples": [{"proposer": 8, "responder": 2}, {"proposer": 8, "responder": 2}]},
            },
            "must differ",
        ),
        ({"calibration": "examples", "task": "negotiation", "objective": {"name": "stubborn"}}, "only the ultimatum"),
        # a balanced set that cannot be drawn: every $10 offer is below $1000
        (
            {"objective": {"name": "reject_below_amount", "threshold": 1000}, "offers": "percentage", "balanced": True},
            "could not draw",
        ),
    ],
)
def test_bad_proxy_blocks_exit_2_naming_the_field(tmp_path: Path, change: dict, field: str) -> None:
    block = {"task": "ultimatum", "objective": {"name": "reject_below_share", "threshold": 0.3}, **change}
    file = tmp_path / "bad.yaml"
    file.write_text(yaml.safe_dump({"name": "bad", "proxy": block}))
    result = runner.invoke(app, ["label", str(file), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    assert "bad.yaml" in result.output and field in result.output.replace("\n", " ")
    assert not (tmp_path / "run").exists()  # nothing written


def test_bad_matrix_blocks_and_model_overrides(tmp_path: Path) -> None:
    file = tmp_path / "m.yaml"
    file.write_text(
        yaml.safe_dump(
            {
                "name": "m",
                "proxy": {
                    "task": "matrix",
                    "objective": {"name": "welfare"},
                    "intent": {"form": "examples"},
                    "games": ["nope"],
                },
            }
        )
    )
    result = runner.invoke(app, ["label", str(file)])
    assert result.exit_code == 2 and "zero-shot" in result.output
    good = tmp_path / "g.yaml"
    good.write_text(
        yaml.safe_dump(
            {"name": "g", "proxy": {"task": "matrix", "objective": {"name": "welfare"}, "intent": {"form": "none"}}}
        )
    )
    result = runner.invoke(app, ["label", str(good), "--model", "judge=scripted"])
    assert result.exit_code == 2 and "tests only" in result.output
    assert runner.invoke(app, ["validate", str(good)]).exit_code == 0


def test_every_shipped_proxy_scenario_validates() -> None:
    files = sorted(Path("scenarios/proxy").rglob("*.yaml"))
    assert len(files) >= 23
    result = runner.invoke(app, ["validate", *map(str, files)])
    assert result.exit_code == 0, result.output


def test_agents_trained_on_the_proxy_table_are_scored_on_the_truth(tmp_path: Path) -> None:
    def half_wrong(messages: list[Any], kwargs: dict[str, Any]) -> str:
        p1, p2 = last_offer(messages)
        right = p2 / (p1 + p2) < 0.3
        return ("Yes" if right else "No") if p1 > 5 else ("No" if right else "Yes")  # wrong on generous offers

    path = label_scenario(
        scenario(no_objective=False), tmp_path / "run", models={"judge": scripted([(r"Ultimatum", half_wrong)])}
    )
    labels = pd.read_csv(path / "labels.csv")
    llm = labels[labels["condition"] == "llm"]
    agents = pd.read_csv(path / "agents.csv")
    means = agents.groupby("condition")["agent_accuracy"].mean()
    assert (
        set(agents["condition"]) == {"llm", "supervised", "true_reward"}
        and (agents.groupby("condition").size() == 3).all()
    )
    assert means["true_reward"] == 1.0
    assert means["llm"] == pytest.approx(llm["correct"].mean())  # the agent learns exactly what the table says
    accuracy = pd.read_csv(path / "accuracy.csv").set_index("condition")
    assert accuracy.loc["llm", "agent_accuracy"] == pytest.approx(means["llm"])
    assert accuracy.loc["random", "agent_accuracy"] == 0.5
    summary = json.loads((path / "summary.json").read_text())
    assert summary["rl_judge_calls"] == 0 and summary["judge_calls"] == summary["distinct_episodes"] == 16


def test_the_no_objective_form_runs_alone(tmp_path: Path) -> None:
    path = label_scenario(
        scenario(intent={"form": "none"}), tmp_path / "run", models={"judge": scripted([(r"Ultimatum", rule_judge)])}
    )
    accuracy = pd.read_csv(path / "accuracy.csv").set_index("condition")
    assert list(accuracy.index) == ["no_objective", "random"]
    summary = json.loads((path / "summary.json").read_text())
    assert summary["items"] == 16 and summary["judge_calls"] == 16


def test_calibration_fits_the_threshold_on_the_examples_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A judge that always answers No, but whose P(yes) is higher where rejecting is right: the answers score the
    base rate, a threshold fitted on the user's examples (each asked with the others shown) scores 1."""
    prompts_seen: list[str] = []

    def shy(messages: list[Any], kwargs: dict[str, Any]) -> ScriptedReply:
        text = str(messages[-1].content)
        prompts_seen.append(text)
        p1, p2 = last_offer(messages)
        held_out = text.count("P2 rejected") == 10  # 9 examples shown: an example asked for calibration
        # P(yes) / 0.9: examples 0.356 / 0.222, test items 0.333 / 0.111; a cut fitted on the test set would differ
        high, low = (0.32, 0.2) if held_out else (0.3, 0.1)
        return reply(False, high if p2 / (p1 + p2) < 0.3 else low)

    plain = label_scenario(
        scenario(no_objective=False), tmp_path / "plain", models={"judge": scripted([(r"Ultimatum", shy)])}
    )
    prompts_seen.clear()
    path = label_scenario(
        scenario(no_objective=False, calibration="examples"),
        tmp_path / "run",
        models={"judge": scripted([(r"Ultimatum", shy)])},
    )
    plain_llm = pd.read_csv(plain / "labels.csv").query("condition == 'llm'")
    labels = pd.read_csv(path / "labels.csv")
    llm = labels[labels["condition"] == "llm"]
    assert len(llm) == 16 and not plain_llm["label"].any()
    assert plain_llm["correct"].mean() == pytest.approx(1 - plain_llm["truth"].mean())
    assert plain_llm["truth"].any()
    assert llm["correct"].all() and llm["threshold"].eq(llm["threshold"].iloc[0]).all()
    assert llm["threshold"].iloc[0] == pytest.approx((0.32 + 0.2) / 2 / 0.9)  # halfway between the examples' scores
    assert not llm["answer_label"].any()
    assert (llm["answer"] == "No").all()  # the text is kept; the label is the fitted cut
    calibration = pd.read_csv(path / "calibration.csv")
    assert len(calibration) == 10 and calibration["correct"].all() and calibration["truth"].nunique() == 2
    # the calibration items are the examples, never the test items, and no example is shown with its own verdict
    tested = set(map(tuple, llm[["proposer", "responder"]].to_numpy()))
    assert not tested & set(map(tuple, calibration[["proposer", "responder"]].to_numpy()))
    by_item = {last_offer([type("M", (), {"content": text})]): text for text in prompts_seen}
    assert len(prompts_seen) == len(by_item) == 26
    for p1, p2 in calibration[["proposer", "responder"]].itertuples(index=False):
        text = by_item[(p1, p2)]  # its own prompt: the 9 other examples, then the example as the item
        assert (
            text.count("for P2. P2 rejected") == 10
            and text.count(f"${float(p1)!r} for P1 and ${float(p2)!r} for P2") == 1
        )
    summary = json.loads((path / "summary.json").read_text())
    assert summary["judge_calls"] == 26 and summary["calibration"]["llm"]["examples_fit_accuracy"] == 1.0
    assert json.loads((plain / "summary.json").read_text())["calibration"] is None
    agents = pd.read_csv(path / "agents.csv").groupby("condition")["agent_accuracy"].mean()
    assert agents["llm"] == 1.0  # the agent learns the calibrated labels
    monkeypatch.setenv("PROXY_RUNS", str(tmp_path))  # the notebook names the calibrated setting and draws the cut
    outputs = execute_notebook(Path(__file__).parent.parent / "notebooks" / "proxy_rewards.ipynb")
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("10 ex., calibrated" in str(o.get("data", {}).get("text/plain", "")) for o in outputs)


def test_examples_of_one_class_fit_no_threshold(tmp_path: Path) -> None:
    """Two examples that both call for rejecting: no cut can be chosen, so the answers stay the labels."""
    examples = [{"proposer": 9, "responder": 1}, {"proposer": 8, "responder": 2}]
    path = label_scenario(
        scenario(no_objective=False, calibration="examples", intent={"examples": examples}),
        tmp_path / "run",
        models={"judge": scripted([(r"Ultimatum", rule_judge)])},
    )
    labels = pd.read_csv(path / "labels.csv")
    assert labels.query("condition == 'llm'")["threshold"].isna().all()
    llm = labels[labels["condition"] == "llm"]
    assert (llm["label"] == llm["answer_label"]).all() and llm["correct"].all()
    fitted = json.loads((path / "summary.json").read_text())["calibration"]["llm"]
    assert fitted["threshold"] is None and fitted["example_classes"] == 1 and fitted["scored_examples"] == 2
