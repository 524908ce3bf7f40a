"""The chain (issue 30): the stages in order, each a run directory of its own kind, resumable, rerun from a stage;
bad files refused before any model is loaded; the share answer form and the judge stage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sandbox.chain.run import run_chain
from sandbox.cli.runs import app
from sandbox.core.kinds import kind_of_dir
from sandbox.core.scenario_files import load_scenario, parse_kind
from sandbox.training.ultimatum_env import UltimatumEnvironment, parse_student, tenths_split
from tests.conftest import scai_models

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def society(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "chain-society",
        "seed": 5,
        "runs": 2,
        "epochs": 2,
        "concurrency": 8,
        "society": {"size": 8, "norms": [{"norm": "selfish", "proportion": 1.0}]},
        "game": {"kind": "ultimatum", "amount": {"min": 10, "max": 20}},
        "assistant": {
            "initial_policy": "Put others first and give them nearly all.",
            "interactions": {"user_user": 4, "assistant_proposer": 1, "assistant_responder": 1},
        },
    }
    data.update(changes)
    return data


def chain_data(**block: Any) -> dict[str, Any]:
    return {
        "name": "chain-test",
        "seed": 1,
        "chain": {
            "society": society(),
            "models": {"student": "tiny", "judge": "embedded"},
            "distill": {"form": "share", "amounts": {"min": 10, "max": 20}, "currencies": ["dollars"]},
            "training": {
                "episodes": 4,
                "parallel": 2,
                "rounds": 2,
                "checkpoint_every": 2,
                "ppo": {"learning_rate": 0.01, "lora_r": 4, "lora_alpha": 8, "max_new_tokens": 1},
            },
            "seeds": 2,
            "evaluation": {
                "epochs": 1,
                "interactions": {"user_user": 0, "assistant_proposer": 2, "assistant_responder": 2},
            },
            **block,
        },
    }


def chain(**block: Any) -> Any:
    return parse_kind("chain", chain_data(**block))


def models() -> dict[str, Any]:
    scripted = scai_models()
    return {**scripted, "judge": scripted["assistant"]}  # the act judge plays as SCAI's assistant does


def test_the_share_form_offers_tenths_of_the_amount_rounded_half_up() -> None:
    env = UltimatumEnvironment(amounts=(13,), currencies=("apples",), form="share")
    game = env.new_game(np.random.default_rng(0))
    assert env.prompt(game, np.random.default_rng(0)) == "proposer split 13 offer tenths ?"
    assert [env.parse(str(k), game).responder for k in (0, 1, 5, 10)] == [0, 1, 7, 13]  # type: ignore[union-attr]
    assert env.parse("I offer 3 tenths.", game) == tenths_split(13, 3)
    for garbage in ("11", "-1", "3 apples", "", "three"):
        assert env.parse(garbage, game) is None  # an illegal move, recorded as such
    responder = UltimatumEnvironment(amounts=(20,), responder_share=1.0, form="share")
    state = responder.new_game(np.random.default_rng(0)).state
    assert state.offer is not None and "tenths accept ?" in responder.prompt(
        responder.new_game(np.random.default_rng(0)), np.random.default_rng(0)
    )
    assert parse_student("yes", state, "share") == "accept" and parse_student("7", state, "share") is None


def test_stages_that_disagree_exit_2_naming_the_field_before_any_model_is_loaded(tmp_path: Path) -> None:
    no_assistant = chain_data()
    del no_assistant["chain"]["society"]["assistant"]
    wide = chain_data()
    wide["chain"]["society"]["game"]["amount"]["max"] = 60
    sentence = chain_data()
    sentence["chain"]["distill"]["form"] = "sentence"
    fixed = chain_data()
    fixed["chain"]["society"]["assistant"]["revise"] = False
    matrix = chain_data()
    matrix["chain"]["society"]["game"] = {"kind": "matrix"}
    cases = [
        (no_assistant, "society.assistant"),
        (wide, "distill.amounts.max"),
        (sentence, "distill.form"),
        (fixed, "society.assistant"),
        (matrix, "society.game"),
    ]
    for data, field in cases:
        path = tmp_path / "bad.yaml"
        path.write_text(yaml.safe_dump(data))
        out = tmp_path / "out"
        result = runner.invoke(app, ["chain", str(path), "--out", str(out)])
        text = " ".join(result.output.split())
        assert result.exit_code == 2 and str(path) in text and field in text, (field, result.output)
        assert not out.exists()


def test_a_society_file_beside_the_chain_is_read_relative_to_it(tmp_path: Path) -> None:
    (tmp_path / "society.yaml").write_text(yaml.safe_dump(society()))
    data = chain_data()
    data["chain"]["society"] = "society.yaml"
    (tmp_path / "chain.yaml").write_text(yaml.safe_dump(data))
    scenario = load_scenario(tmp_path / "chain.yaml")
    assert scenario.society().name == "chain-society"
    data["chain"]["society"] = "missing.yaml"
    (tmp_path / "chain.yaml").write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["chain", str(tmp_path / "chain.yaml"), "--dry-run"])
    assert result.exit_code == 2 and "chain.society" in result.output


def test_the_chain_runs_each_stage_as_a_run_of_its_kind_and_compares_the_subjects(tmp_path: Path) -> None:
    path = run_chain(chain(), tmp_path / "chain", models=models())
    manifest = json.loads((path / "chain.json").read_text())
    assert list(manifest["stages"]) == ["society", "judge", "distill", "evaluate", "compare"]
    assert kind_of_dir(path).name == "chain" and kind_of_dir(path / "society").name == "society"
    assert kind_of_dir(path / "judge").name == "judge"
    assert [kind_of_dir(path / d).name for d in manifest["stages"]["distill"]["dirs"]] == ["distill", "distill"]
    assert manifest["stages"]["evaluate"]["dirs"] == [
        "evaluate/assistant",
        "evaluate/student-seed-1",
        "evaluate/student-seed-2",
        "evaluate/base",
    ]
    # the judge's calls are distinct moves (the act judge: its 4 proposals under the policy, each read first as the
    # society's assistant reads it: 1 + 6 calls reach the model, the other samples come from the cache at temperature
    # 0), and none in training
    judge = json.loads((path / "judge" / "summary.json").read_text())["judge"]
    steps = [json.loads(line)["step"] for line in (path / "judge" / "transcripts.jsonl").open()]
    assert steps.count("propose") == 4 and judge["calls"] == len(steps) and judge["calls"] - judge["cache_hits"] == 7
    assert judge["table_entries"] == 21
    for seed in (1, 2):
        summary = json.loads((path / "distill" / f"seed-{seed}" / "summary.json").read_text())
        assert summary["judge"]["calls"] == 0 and summary["form"] == "share"
        assert not (path / "distill" / f"seed-{seed}" / "evaluation.csv").exists()  # stage (d) is the chain's
    # the students play with no policy and no MetaLM; the assistant subject plays the learned policy, held fixed
    policy = json.loads((path / "judge" / "principles.json").read_text())["principles"][0]["text"]
    held = pd.read_json(path / "evaluate" / "assistant" / "policies.jsonl", lines=True)
    assert set(held["policy"]) == {policy}
    student = pd.read_json(path / "evaluate" / "student-seed-1" / "policies.jsonl", lines=True)
    assert set(student["policy"]) == {""}
    episodes = pd.read_csv(path / "evaluate" / "student-seed-1" / "episodes.csv")
    assert (episodes["interaction"] != "user-user").all()
    comparison = pd.read_csv(path / "comparison.csv")
    assert list(comparison["subject"]) == ["users", "assistant", "student", "base"]
    assert comparison.set_index("subject").loc["student", "n"] == 2  # over the training seeds
    assert comparison.set_index("subject").loc["users", "offered_share"] < 0.5  # scripted selfish users
    assert (path / "comparison.png").is_file()
    assert json.loads((path / "summary.json").read_text())["kind"] == "chain"


def test_a_society_file_that_is_not_a_mapping_is_named_and_never_read_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "chains").mkdir()
    (tmp_path / "chains" / "society.yaml").write_text("[1, 2]\n")
    (tmp_path / "society.yaml").write_text(yaml.safe_dump(society()))  # a valid one of that name in the cwd
    data = chain_data()
    data["chain"]["society"] = "society.yaml"
    (tmp_path / "chains" / "chain.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.chdir(tmp_path)
    for command in (["validate"], ["chain", "--dry-run"]):
        result = runner.invoke(app, [*command[:1], "chains/chain.yaml", *command[1:]])
        text = " ".join(result.output.split())
        assert result.exit_code == 2, (command, result.output)
        assert "chain.society: chains/society.yaml is not a society scenario" in text, result.output
        assert "does not exist" not in text and "No such file" not in text


def test_a_society_s_errors_are_its_own_with_no_word_from_the_file_name_branch(tmp_path: Path) -> None:
    data = chain_data()
    data["chain"]["society"] = {"society": 3}
    (tmp_path / "chain.yaml").write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["validate", str(tmp_path / "chain.yaml")])
    lines = [line.strip() for line in result.output.splitlines() if line.startswith("  ")]
    assert result.exit_code == 2, result.output
    assert lines == [
        "chain.society.name: Field required",
        "chain.society.society: Input should be a valid dictionary or instance of Society",
    ], result.output


def test_a_chain_into_a_run_of_another_kind_says_so_and_writes_nothing(tmp_path: Path) -> None:
    from sandbox.core.run_dir import RunDirectory

    RunDirectory.create(tmp_path / "society-run", parse_kind("society", society()))
    before = {p.name: p.read_bytes() for p in (tmp_path / "society-run").iterdir()}
    (tmp_path / "chain.yaml").write_text(yaml.safe_dump(chain_data()))
    for rerun in ([], ["--from", "judge"]):
        result = runner.invoke(
            app, ["chain", str(tmp_path / "chain.yaml"), "--out", str(tmp_path / "society-run"), *rerun]
        )
        text = " ".join(result.output.split())
        assert result.exit_code == 2 and "holds a run of kind society, not a chain" in text, result.output
        assert "unknown field" not in text and "Field required" not in text
        assert {p.name: p.read_bytes() for p in (tmp_path / "society-run").iterdir()} == before


def test_rerun_from_a_stage_keeps_the_earlier_ones_and_refuses_a_missing_one(tmp_path: Path) -> None:
    path = run_chain(chain(), tmp_path / "chain", models=models())
    society_mtime = (path / "society" / "summary.json").stat().st_mtime
    judge_mtime = (path / "judge" / "judge_table.csv").stat().st_mtime
    changed = chain(training={**chain_data()["chain"]["training"], "episodes": 6})
    with pytest.raises(Exception, match="--from distill"):
        run_chain(changed, path, models=models())  # another setting without --from: refused, nothing removed
    run_chain(changed, path, rerun_from="distill", models=models())
    assert (path / "society" / "summary.json").stat().st_mtime == society_mtime
    assert (path / "judge" / "judge_table.csv").stat().st_mtime == judge_mtime
    assert len(pd.read_csv(path / "distill" / "seed-1" / "metrics.csv")) == 6
    import shutil

    shutil.rmtree(path / "judge")
    file = tmp_path / "chain.yaml"
    file.write_text(yaml.safe_dump(changed.model_dump(mode="json")))
    result = runner.invoke(app, ["chain", str(file), "--out", str(path), "--from", "distill"])
    assert result.exit_code == 2 and "stages.judge" in " ".join(result.output.split()), result.output
    assert (path / "distill" / "seed-1" / "metrics.csv").is_file()  # refused before anything was removed


def test_the_same_command_goes_on_where_a_killed_chain_stopped(tmp_path: Path) -> None:
    from sandbox.chain.run import ChainHooks

    whole = run_chain(chain(), tmp_path / "whole", models=models())
    steps = 0

    def step() -> None:
        nonlocal steps
        steps += 1
        if steps == 48:  # in the distill stage: after the society's 24 episodes and the judge's 21 moves
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_chain(chain(), tmp_path / "cut", models=models(), hooks=ChainHooks(on_step=step))
    assert json.loads((tmp_path / "cut" / "run.json").read_text())["status"] == "interrupted"
    assert (tmp_path / "cut" / "judge" / "summary.json").is_file() and not (tmp_path / "cut" / "evaluate").exists()
    run_chain(chain(), tmp_path / "cut", models=models())  # the same command, no --from
    pd.testing.assert_frame_equal(
        pd.read_csv(whole / "comparison.csv"), pd.read_csv(tmp_path / "cut" / "comparison.csv")
    )
    assert json.loads((tmp_path / "cut" / "run.json").read_text())["status"] == "complete"


def test_settings_the_stages_cannot_play_are_refused_when_the_file_is_read() -> None:
    from sandbox.base.errors import ScenarioError

    with pytest.raises(ScenarioError, match="each subject once"):
        chain(evaluation={"subjects": ["student", "student"]})
    with pytest.raises(ScenarioError, match="distill.held_out"):
        chain(distill={"form": "share", "amounts": {"min": 10, "max": 11}, "held_out": 0.9})
    no_norm = chain_data(distill={"form": "share", "reward": "truth"})
    no_norm["chain"]["society"]["society"]["norms"] = [
        {"norm": "selfish", "proportion": 0.5},
        {"norm": "fair", "proportion": 0.5},
    ]
    with pytest.raises(ScenarioError, match="distill.truth"):
        parse_kind("chain", no_norm)


def test_one_budget_counts_every_stage_and_a_resume_raises_it(tmp_path: Path) -> None:
    from sandbox.chain.run import resume_chain
    from sandbox.llm.budget import BudgetExhaustedError

    with pytest.raises(BudgetExhaustedError, match="--max-calls"):
        run_chain(chain(budget={"calls": 30}), tmp_path / "chain", models=models())
    path = tmp_path / "chain"
    assert json.loads((path / "run.json").read_text())["status"] == "stopped"
    assert json.loads((path / "budget.json").read_text())["calls"] <= 30
    resume_chain(path, models=models(), max_calls=100_000)
    assert json.loads((path / "run.json").read_text())["status"] == "complete"
    # Uninterrupted (no call in flight cancelled at a stop, which the ledger has reserved), the one ledger holds
    # exactly the calls that reached a model in the society, the judge and the evaluations.
    whole = run_chain(chain(budget={"calls": 100_000}), tmp_path / "whole", models=models())
    spent = json.loads((whole / "budget.json").read_text())["calls"]
    stages = [whole / "society", whole / "judge", *(whole / "evaluate").iterdir()]
    reached = [
        sum(1 for line in (stage / "transcripts.jsonl").open() if not json.loads(line).get("cache_hit"))
        for stage in stages
    ]
    assert spent == sum(reached) and all(reached)


def test_a_society_with_guided_members_keeps_its_paths_and_its_solve(tmp_path: Path) -> None:
    from sandbox.chain.run import evaluation_scenario
    from tests.dialogue_helpers import ULTIMATUM

    (tmp_path / "societies").mkdir()
    (tmp_path / "societies" / "game.yaml").write_text(yaml.safe_dump(ULTIMATUM))
    guided = {"count": 2, "solve": "game.yaml"}  # relative to the society's file, not the chain's
    (tmp_path / "societies" / "society.yaml").write_text(
        yaml.safe_dump(
            society(society={"size": 8, "norms": [{"norm": "selfish", "proportion": 1.0}], "guided": guided})
        )
    )
    data = chain_data()
    data["chain"]["society"] = "societies/society.yaml"
    (tmp_path / "chain.yaml").write_text(yaml.safe_dump(data))
    scenario = load_scenario(tmp_path / "chain.yaml")
    assert scenario.society().society.guided.solve["name"] == ULTIMATUM["name"]  # read in
    # each evaluation society plays the policy the society stage solved, not a game of its own
    evaluation = evaluation_scenario(scenario, tmp_path / "run", "evaluate/base")
    assert evaluation.society.guided.solve is None
    assert evaluation.society.guided.policy == str((tmp_path / "run" / "society" / "guided").resolve())
    (tmp_path / "societies" / "game.yaml").unlink()
    result = runner.invoke(app, ["chain", str(tmp_path / "chain.yaml"), "--dry-run"])
    assert result.exit_code == 2 and "chain.society.guided.solve" in result.output
