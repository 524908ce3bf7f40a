"""Norm distillation: the principle's sources, the judge's table (one call per distinct move), runs and resume,
and bad `distill:` blocks (exit 2, naming the field, nothing written)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from sandbox.base.errors import ScenarioError
from sandbox.base.files import read_yaml
from sandbox.cli.runs import app
from sandbox.core.scenario_files import parse_kind
from sandbox.distill.conformance import generous_judge, tiny_distillation
from sandbox.distill.judge_table import JudgeTable
from sandbox.distill.planning import plan
from sandbox.distill.run import DistillHooks, distill_scenario, resume_distill
from sandbox.distill.source import resolve_principles
from sandbox.llm.scripted import scripted
from sandbox.rewards.judge import ProxyJudge
from sandbox.rules.ultimatum import Split, Stake
from sandbox.training.ultimatum_env import UltimatumOutcome, UltimatumState

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def proposal(amount: int, keep: int) -> UltimatumOutcome:
    return UltimatumOutcome(UltimatumState(Stake(amount, "apples"), "proposer"), Split(keep, amount - keep))


def test_the_judge_is_asked_once_per_distinct_move_and_its_table_is_read_back(tmp_path: Path) -> None:
    model = generous_judge()
    table = JudgeTable(
        tmp_path / "judge_table.csv",
        ["Give everything away."],
        ProxyJudge(model, graded=False),
        resolution=0.05,
        currency="apples",
        seed=0,
        scoring="binary",
        truth="altruistic",
    )
    moves = [proposal(10, 0), proposal(20, 0), proposal(10, 5), proposal(100, 50), proposal(52, 40)]  # 3 distinct
    table.prefetch(moves)
    table.prefetch(moves)
    assert model.calls == 3 == len(table)
    assert [table.reward(m) for m in moves] == [1.0, 1.0, 0.0, 0.0, 0.0]
    prompt = table.prompt(next(iter(table.rows)).move, 0)
    assert "The principle of this society: Give everything away." in prompt and "100 apples" in prompt
    assert "principle" not in table.prompt(next(iter(table.rows)).move, -1)  # the no-principle control
    again = JudgeTable(
        tmp_path / "judge_table.csv",
        ["Give everything away."],
        ProxyJudge(model, graded=False),
        resolution=0.05,
        currency="apples",
        seed=0,
        scoring="binary",
    )
    again.prefetch(moves)
    assert model.calls == 3 and [again.reward(m) for m in moves] == [1.0, 1.0, 0.0, 0.0, 0.0]
    table.prefetch(moves, variants=("no_principle",))
    assert model.calls == 6
    rows = pd.read_csv(tmp_path / "judge_table.csv")
    assert len(rows) == 6 and set(rows["variant"]) == {"principle", "no_principle"}
    assert rows.loc[rows["variant"] == "principle", "truth_label"].tolist() == [True, False, False]


def scenario(**distill: Any) -> Any:
    return tiny_distillation("tiny-distill", **distill)


def test_a_killed_distillation_resumes_to_the_same_metrics_without_asking_twice(tmp_path: Path) -> None:
    whole_judge = generous_judge()
    whole = distill_scenario(scenario(), tmp_path / "whole", judge=whole_judge, evaluate=False)

    def stop_after_three(row: dict[str, Any]) -> None:
        if row["episode"] == 2:
            raise KeyboardInterrupt

    first, second = generous_judge(), generous_judge()
    with pytest.raises(KeyboardInterrupt):
        distill_scenario(
            scenario(),
            tmp_path / "killed",
            judge=first,
            hooks=DistillHooks(on_episode=stop_after_three),
            evaluate=False,
        )
    assert json.loads((tmp_path / "killed" / "run.json").read_text())["status"] == "interrupted"
    resume_distill(tmp_path / "killed", judge=second, evaluate=False)
    drop = ["seconds"]
    pd.testing.assert_frame_equal(
        pd.read_csv(whole / "metrics.csv").drop(columns=drop),
        pd.read_csv(tmp_path / "killed" / "metrics.csv").drop(columns=drop),
    )
    table = pd.read_csv(tmp_path / "killed" / "judge_table.csv")
    assert first.calls + second.calls == len(table) == whole_judge.calls > 0  # no move asked twice
    assert first.calls > 0 and second.calls < len(table)  # the resumed run read the first part's verdicts back
    assert not table.duplicated(["variant", "principle", "role", "offered_share", "decision"]).any()
    summary = json.loads((tmp_path / "killed" / "summary.json").read_text())
    assert summary["judge"]["table_entries"] == len(table) and summary["judge"]["moves_played"] == 6 * 8
    assert summary["principles"] == ["Give the other player everything."] and summary["truth"] == "altruistic"
    assert (tmp_path / "killed" / "adapter" / "adapter_config.json").is_file()
    assert (tmp_path / "killed" / "training_shares.png").is_file()


@pytest.mark.parametrize("reward", ["truth", "no_principle", "flipped"])
def test_the_controls_train_on_their_own_reward(reward: str, tmp_path: Path) -> None:
    model = generous_judge()
    run = distill_scenario(scenario(reward=reward), tmp_path / reward, judge=model, evaluate=False)
    metrics = pd.read_csv(run / "metrics.csv")
    kind = {"truth": "truth:norm", "no_principle": "proxy:no_principle", "flipped": "proxy:flipped"}[reward]
    assert (metrics["reward_kind"] == kind).all() and (metrics["reward"] == metrics[f"reward_{kind}"]).all()
    legal = metrics["illegal"] < 1
    if reward == "flipped":  # a legal move's flipped reward is 1 - the judge's
        both = metrics[legal & (metrics["illegal"] == 0)]
        assert np.allclose(both["reward_proxy:flipped"], 1 - both["reward_proxy:judge"])
    table = pd.read_csv(run / "judge_table.csv")
    assert ("no_principle" in set(table["variant"])) == (reward == "no_principle")


def scai_run(tmp_path: Path, *, policies: bool = True) -> Path:
    """A finished SCAI run directory as `sandbox run` leaves it (two runs of a selfish society)."""
    run = tmp_path / "scai"
    run.mkdir()
    data = read_yaml(ROOT / "scenarios" / "scai" / "one_group_selfish.yaml")
    (run / "scenario.yaml").write_text(json.dumps(data))
    if policies:
        records = [{"run": r, "version": v, "policy": f"policy {r}.{v}"} for r in (0, 1) for v in (0, 1)]
        (run / "policies.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        pd.DataFrame(
            {"run": [0, 1], "version": [1, 1], "policy": ["policy 0.1", "policy 1.1"], "bin": ["selfish", "fair"]}
        ).to_csv(run / "final_policies.csv", index=False)
    return run


def test_principles_come_from_a_scai_run_directory(tmp_path: Path) -> None:
    run = scai_run(tmp_path)

    def principles(**source: Any) -> list[str]:
        return [p.text for p in resolve_principles(scenario(source={"run": str(run), **source}).distill, "f.yaml")]

    assert principles() == ["policy 0.1"] and principles(run_index=1) == ["policy 1.1"]
    assert principles(pick="all") == ["policy 0.1", "policy 1.1"]
    assert principles(pick="bin") == ["policy 0.1"] and principles(pick="bin", bin="fair") == ["policy 1.1"]
    resolved = plan(parse_kind("distill", {"name": "x", "distill": {"source": {"run": str(run)}}}), "f.yaml")
    assert resolved.truth == "selfish" and resolved.currencies == [
        "apples",
        "blankets",
        "dollars",
    ]  # from the source's society
    assert set(resolved.train_amounts).isdisjoint(resolved.held_out_amounts) and len(resolved.held_out_amounts) == 18


def write_scenario(tmp_path: Path, source: dict[str, Any]) -> Path:
    file = tmp_path / "distill.yaml"
    file.write_text(json.dumps({"name": "bad", "distill": {"source": source}}))
    return file


@pytest.mark.parametrize(
    ("case", "field", "message"),
    [
        ("no policies", "distill.source.run", "has no policies.jsonl"),
        ("unknown run", "distill.source.run_index", "run 5 is not in"),
        ("missing run", "distill.source.run", "is not a directory"),
        ("not a run", "distill.source.run", "is not a run directory"),
        ("empty bin", "distill.source.bin", "no run of"),
        ("text and run", "distill.source", "give either run"),
        ("missing file", "", "cannot read the file"),
    ],
)
def test_bad_distill_blocks_exit_2_naming_the_field_and_write_nothing(
    case: str, field: str, message: str, tmp_path: Path
) -> None:
    run = scai_run(tmp_path, policies=case != "no policies")
    source: dict[str, Any] = {
        "no policies": {"run": str(run)},
        "unknown run": {"run": str(run), "run_index": 5},
        "missing run": {"run": str(tmp_path / "nowhere")},
        "not a run": {"run": str(tmp_path)},
        "empty bin": {"run": str(run), "pick": "bin", "bin": "altruistic"},
        "text and run": {"run": str(run), "text": "Be kind."},
        "missing file": {"text": "Be kind."},
    }[case]
    file = write_scenario(tmp_path, source) if case != "missing file" else tmp_path / "absent.yaml"
    out = tmp_path / "out"
    result = runner.invoke(app, ["distill", str(file), "--out", str(out)])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert f"{field}:" in text if field else str(file) in text
    assert message in text
    assert not out.exists()


def test_a_tiny_student_is_refused_amounts_beyond_its_vocabulary(tmp_path: Path) -> None:
    file = tmp_path / "big.yaml"
    file.write_text(
        json.dumps({"name": "big", "distill": {"source": {"text": "Be kind."}, "amounts": {"min": 10, "max": 5000}}})
    )
    result = runner.invoke(app, ["distill", str(file), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "distill.amounts.max" in result.output and not (tmp_path / "out").exists()


def test_a_control_without_a_known_truth_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="distill"):
        parse_kind("distill", {"name": "x", "distill": {"source": {"text": "Be kind."}, "reward": "truth"}})
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["ppo", "grpo"])
def test_the_tiny_student_learns_the_one_share_a_scripted_judge_rewards(algorithm: str, tmp_path: Path) -> None:
    """The judge says Yes only when the responder gets everything; from a random start the student learns to keep 0."""
    model = generous_judge(at_least=100)
    data = {
        "name": f"learn-{algorithm}",
        "seed": 0,
        "models": {"student": "tiny"},
        "distill": {
            "source": {"text": "Give the other player everything."},
            "truth": "altruistic",
            "scoring": "binary",
            "amounts": {"min": 10, "max": 20},
        },
        "training": {
            "algorithm": algorithm,
            "episodes": 60,
            "parallel": 4,
            "rounds": 8,
            "checkpoint_every": 30,
            "ppo": {"learning_rate": 0.01, "lora_r": 8, "lora_alpha": 16, "max_new_tokens": 1, "init_kl_coef": 0.0},
            **({"trl": {"num_generations": 8}} if algorithm == "grpo" else {}),
        },
    }
    run = distill_scenario(parse_kind("distill", data), tmp_path / algorithm, judge=model, evaluate=False)
    metrics = pd.read_csv(run / "metrics.csv")
    summary = json.loads((run / "summary.json").read_text())
    assert metrics["reward_proxy:judge"].head(5).mean() < 0.2  # the random start rarely keeps nothing
    assert summary["final"]["offered_share"] >= 0.9 and summary["final_rewards"]["proxy:judge"] >= 0.6
    assert summary["judge"]["judge_target_share"] == 1.0
    assert model.calls == summary["judge"]["table_entries"] <= 21  # 21 proposals at a resolution of 0.05


def test_the_distilled_student_answers_through_the_llm_layer_as_base_plus_adapter(tmp_path: Path) -> None:
    from langchain_core.messages import HumanMessage

    from sandbox.base.sync import run_sync
    from sandbox.llm.resolve import ModelStack, build_backend, check_spec
    from sandbox.llm.wrapper import acall

    run = distill_scenario(scenario(), tmp_path / "run", judge=generous_judge(), evaluate=False)
    spec = json.loads((run / "summary.json").read_text())["assistant_spec"]
    assert spec == f"hf:{(run / 'student_base').resolve()}+adapter:{(run / 'adapter').resolve()}"
    check_spec(spec)
    model = ModelStack(cache=None, sinks=[], concurrency=1).for_role("assistant", spec, {"temperature": 0.0})
    answer = run_sync(acall(model, [HumanMessage("proposer split 12 keep ?")], seed=0, max_tokens=1))
    assert re.fullmatch(r"\d+|\?|yes|no|proposer|responder|split|keep|get|accept|\[UNK\]|", str(answer.content).strip())
    from sandbox.base.errors import ModelUnavailableError

    with pytest.raises(ModelUnavailableError, match="no LoRA adapter"):
        build_backend(f"tiny+adapter:{tmp_path / 'nowhere'}")
    with pytest.raises(ValueError, match="unknown base model"):
        check_spec("gpt9+adapter:/x")


def test_the_distilled_student_plays_as_a_societys_assistant_with_no_policy(tmp_path: Path) -> None:
    from peft import PeftModel

    from sandbox import run as run_society
    from sandbox.llm.resolve import build_backend
    from tests.conftest import scai_models, scai_scenario

    student = distill_scenario(scenario(), tmp_path / "student", judge=generous_judge(), evaluate=False)
    spec = json.loads((student / "summary.json").read_text())["assistant_spec"]
    backend = build_backend(spec)
    assert isinstance(backend._load()[1], PeftModel)  # type: ignore[attr-defined]
    models = scai_models()
    del models["assistant"]  # the assistant is the spec: the tiny base with the distilled adapter
    sampling = {"spec": spec, "sampling": {"max_tokens": 1, "temperature": 1.0}}

    # Under SCAI's policy prompt, the tiny student's numbers are not the society's sentence: illegal proposals.
    society = scai_scenario(runs=1, epochs=1, models={"assistant": sampling})
    episodes = pd.read_csv(run_society(society, out=tmp_path / "policy", models=models).path / "episodes.csv")
    assert not episodes.loc[episodes["proposer"] == "assistant", "proposal_legal"].astype(bool).any()

    # With no policy (prompt: none), it is asked its training prompt and its number becomes the society's sentence.
    society = scai_scenario(
        runs=1, epochs=2, models={"assistant": sampling}, assistant={"prompt": "none", "answer": "number"}
    )
    result = run_society(society, out=tmp_path / "none", models=models)
    calls = [json.loads(line) for line in (result.path / "transcripts.jsonl").read_text().splitlines()]
    assistant = [c for c in calls if c["role"] == "assistant"]
    assert assistant and all(c["model"] == spec for c in assistant)
    assert not [c for c in calls if c["role"] == "meta"]  # no MetaLM: there is no policy to revise
    for call in assistant:
        assert [m["role"] for m in call["messages"]] == ["user"]  # no system prompt
        assert re.fullmatch(
            r"(proposer split \d+ keep|responder split \d+ get \d+ accept) \?", call["messages"][0]["content"]
        )
    episodes = pd.read_csv(result.path / "episodes.csv")
    proposals = episodes[episodes["proposer"] == "assistant"]
    assert len(proposals) == 2
    for _, episode in proposals.iterrows():  # legal exactly when its last answer is a number up to the amount
        last = [c for c in assistant if c["episode"] == episode["episode"] and c["step"] == "propose"][-1]
        number = re.fullmatch(r"\d+", last["answer"].strip())
        assert bool(episode["proposal_legal"]) == (number is not None and int(last["answer"]) <= episode["amount"])
    policies = [json.loads(line) for line in (result.path / "policies.jsonl").read_text().splitlines()]
    assert [p["policy"] for p in policies] == ["", ""] and {p["source"] for p in policies} == {"none"}
    refused = runner.invoke(app, ["evaluate", str(result.path)])  # no policy to replay
    assert refused.exit_code == 2 and "no policy" in refused.output
    refused = runner.invoke(app, ["evaluate", str(student), "--currency", "gold"])  # a distillation's own conditions
    assert refused.exit_code == 2 and "distill.conditions" in refused.output
    with pytest.raises(ScenarioError, match="prompt none"):
        scai_scenario(assistant={"prompt": "none", "initial_policy": "Be kind."})
    with pytest.raises(ScenarioError, match="needs prompt none"):
        scai_scenario(assistant={"answer": "number"})


def test_the_evaluation_plays_without_the_policy_beside_assistant_users_and_base(tmp_path: Path) -> None:
    from sandbox.distill.evaluate import evaluate_distill
    from tests.conftest import scai_models

    models = scai_models()
    subjects = {"assistant": models["assistant"], "users": models["user"]}
    run = distill_scenario(scenario(trials=3), tmp_path / "run", judge=generous_judge(), evaluation_models=subjects)
    table = pd.read_csv(run / "distillation.csv")
    assert set(table["subject"]) == {"users", "assistant", "student", "base"}
    assert list(dict.fromkeys(table["condition"])) == ["training", "held-out", "medicine", "billions"]
    moves = pd.read_csv(run / "evaluation.csv")
    assert len(moves) == 4 * 4 * 3 * 2  # subjects x conditions x trials x (a proposal and an answer)
    # Every subject met the same stakes.
    stakes = moves.groupby("subject")[["condition", "trial", "role", "amount", "currency", "offer_to_responder"]].apply(
        lambda f: f.sort_values(["condition", "trial", "role"]).fillna(-1).to_numpy().tolist()
    )
    assert all(s == stakes["student"] for s in stakes)
    assert (moves.loc[moves["condition"] == "billions", "amount"] == 2_220_000_000).all()
    assert (moves.loc[moves["condition"] == "medicine", "currency"] == "grams of medicine").all()
    principle = "Give the other player everything."
    calls = [json.loads(line) for line in (run / "evaluation_transcripts.jsonl").read_text().splitlines()]
    by_role = {role: [c for c in calls if c["role"] == role] for role in ("student", "base", "assistant", "users")}
    assert all(by_role.values())
    for call in by_role["student"] + by_role["base"]:  # no policy in any prompt of the student or the base
        assert [m["role"] for m in call["messages"]] == ["user"]
        assert principle not in json.dumps(call["messages"]) and "principle" not in json.dumps(call["messages"])
    # the assistant plays as a society's assistant does: each call (its reading of the policy, its move) holds it
    assert all(principle in json.dumps(call["messages"]) for call in by_role["assistant"])
    assert any(call["step"].endswith("reading") for call in by_role["assistant"])
    summary = json.loads((run / "summary.json").read_text())
    assert len(summary["evaluation"]["table"]) == 16 and (run / "distillation.png").is_file()
    # Evaluated again (as after a kill): the same table from the cache, no new calls.
    asked = models["assistant"].calls, models["user"].calls
    again = evaluate_distill(run, models=subjects)
    assert (models["assistant"].calls, models["user"].calls) == asked
    pd.testing.assert_frame_equal(again, table, check_dtype=False)
    # Played afresh (no cache), the same seeds give the same moves: the student's and the base's draws do not
    # depend on how their calls interleave.
    fresh = tmp_path / "fresh"
    shutil.copytree(run, fresh)
    for name in ("cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm", "distillation.csv", "evaluation.csv"):
        (fresh / name).unlink(missing_ok=True)
    evaluate_distill(fresh, models=subjects)
    first, second = pd.read_csv(run / "evaluation.csv"), pd.read_csv(fresh / "evaluation.csv")
    pd.testing.assert_frame_equal(first, second)


def test_the_act_judge_rewards_agreement_with_its_own_play_under_the_principle(tmp_path: Path) -> None:
    """judge: act: the judge's model plays under the principle; a proposal earns 1 - |offered - its mean offer|, an
    answer 1 when it answers the same proposal alike; one proposal per sample and one answer per distinct offer."""
    actor = scripted(
        [
            (r"You are the proposer", "For the 100 apples, the proposer will get 20, and the responder will get 80."),
            (r"You are the responder", "no"),
        ]
    )
    table = JudgeTable(
        tmp_path / "judge_table.csv",
        ["Give generously."],
        ProxyJudge(actor, graded=False),
        resolution=0.05,
        currency="apples",
        seed=0,
        scoring="binary",
        truth="altruistic",
        mode="act",
        actor=actor,
        samples=3,
    )
    answer = UltimatumOutcome(UltimatumState(Stake(100, "apples"), "responder", Split(70, 30)), "accept")
    refused = UltimatumOutcome(UltimatumState(Stake(100, "apples"), "responder", Split(70, 30)), "reject")
    moves = [proposal(10, 2), proposal(20, 20), proposal(100, 0), answer, refused]
    table.prefetch(moves)
    assert [round(table.reward(m), 3) for m in moves] == [1.0, 0.2, 0.8, 0.0, 1.0]
    assert actor.calls == 3 + 1  # three proposals for the target; one answer to the 70/30 proposal (cached after)
    rows = pd.read_csv(tmp_path / "judge_table.csv")
    assert set(rows["source"]) == {"act"} and rows["label"].tolist() == ["yes", "no", "yes", "no", "yes"]
    again = JudgeTable(
        tmp_path / "judge_table.csv",
        ["Give generously."],
        ProxyJudge(actor, graded=False),
        resolution=0.05,
        currency="apples",
        seed=0,
        mode="act",
        actor=actor,
        samples=3,
    )
    again.prefetch(moves)
    assert actor.calls == 4 and [round(again.reward(m), 3) for m in moves] == [1.0, 0.2, 0.8, 0.0, 1.0]
