"""Social Contract AI with scripted models: what the assistant and the MetaLM see, the interaction mix,
versioned policies, resume, generalisation, and every SCAI scenario file."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import prompts
from agents.meta import Interaction, digest, keep_word
from sandbox import RunFailedError, RunResult, aresume, arun, load_scenario, run
from sandbox.base.errors import ScenarioError, UsageError
from sandbox.llm.scripted import scripted
from sandbox.scai.evaluate import aevaluate
from tests.conftest import scai_models, scai_scenario, scripted_meta

SCAI_SCENARIOS = sorted((Path(__file__).parent.parent / "scenarios" / "scai").glob("*.yaml"))


def transcript(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (path / "transcripts.jsonl").read_text().splitlines()]


def policies(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (path / "policies.jsonl").read_text().splitlines()]


def test_the_assistant_sees_only_its_current_policy(tmp_path: Path) -> None:
    result = run(scai_scenario(), out=tmp_path / "r", models=scai_models())
    calls = transcript(result.path)
    by_version = {(p["run"], p["epoch"]): p["policy"] for p in policies(result.path)}
    assistant_calls = [c for c in calls if c["role"] == "assistant" and "/reading" not in (c.get("step") or "")]
    readings = [c for c in calls if c["role"] == "assistant" and "/reading" in (c.get("step") or "")]
    assert assistant_calls and readings
    meta_texts = [prompts.render("scai/meta_principle.j2"), prompts.render("scai/revision.j2")]
    for call in readings:
        # the reading (reading: scored) sees the policy after fixed few-shot principles, and nothing of the run
        text = "\n".join(m["content"] for m in call["messages"])
        assert call["messages"][-1]["content"] == f'Principle: "{by_version[(call["run"], call["epoch"])]}"'
        assert not any(meta[:60] in text for meta in meta_texts) and "Start of interaction" not in text
    for call in assistant_calls:
        text = "\n".join(m["content"] for m in call["messages"])
        # the policy of this epoch and nothing else: no meta-principle, no history, no other policy
        assert f"Your principle: {by_version[(call['run'], call['epoch'])]}" in text
        assert not any(meta[:60] in text for meta in meta_texts)
        assert "Start of interaction" not in text and "flex-policy" not in text
        other = {p for (run_, epoch), p in by_version.items() if p != by_version[(call["run"], call["epoch"])]}
        assert not any(p in text for p in other)
        # a fresh conversation: the system prompt, the request (and a re-ask at most)
        assert call["messages"][0]["role"] == "system" and len(call["messages"]) in (2, 4)
    # the policy changed (scripted MetaLM copies the selfish users), so the prompts did too
    assert len({c["messages"][0]["content"] for c in assistant_calls}) > 1


def test_the_meta_lm_receives_what_the_scenario_says(tmp_path: Path) -> None:
    principle = "Infer what the users value from the games below and write it down."
    instruction = "Write the principle that makes the flex agent act like the others, in ten words."
    scenario = scai_scenario(
        runs=1,
        epochs=3,
        assistant={
            "initial_policy": "Put others first and give them nearly all.",
            "meta_principle": principle,
            "revision_instruction": instruction,
            "history_epochs": 2,
        },
    )
    result = run(scenario, out=tmp_path / "r", models=scai_models())
    meta_calls = [c for c in transcript(result.path) if c["role"] == "meta"]
    assert len(meta_calls) == 2  # between epochs only: the last epoch's policy is the final one
    records = policies(result.path)
    episodes = result.episodes.set_index("episode")
    for call, previous, record in zip(meta_calls, records, records[1:]):
        human = call["messages"][1]["content"]
        assert human.startswith(principle) and instruction in human
        assert prompts.render("scai/meta_principle.j2")[:60] not in human
        assert f"previous principle is: {previous['policy']}" in human
        # the evidence is the window's episodes (2 epochs), each shown once, users' first
        epochs = set(episodes.loc[record["evidence"], "epoch"])
        assert epochs == set(range(max(0, record["epoch"] - 2), record["epoch"]))
        assert len(record["evidence"]) == len(episodes[episodes["epoch"] < record["epoch"]])
        assert human.count("Start of interaction") == len(record["evidence"])
        assert human.index("fixed-policy agents' interactions with each other") < human.index("flex-policy agent's")


def test_default_meta_principle_is_the_papers(tmp_path: Path) -> None:
    result = run(scai_scenario(runs=1, epochs=2), out=tmp_path / "r", models=scai_models())
    (call,) = [c for c in transcript(result.path) if c["role"] == "meta"]
    human = call["messages"][1]["content"]
    assert "infer the principle shared between fixed-policy agents" in human
    assert "don't be afraid to push the flex-policy agent TO THE EXTREME" in human
    assert "extract a principle from their interactions" in call["messages"][0]["content"]
    assert "In numbers" not in human  # the digest is off unless the scenario asks for it


def test_the_digest_on_a_hand_computed_example() -> None:
    def seen(proposer: bool, responder: bool, share: float | None, decision: str | None) -> Interaction:
        return Interaction("e", proposer, responder, "a proposal", decision, share, decision)

    shown = [
        seen(False, False, 0.1, "accept"),
        seen(False, False, 0.2, "reject"),
        seen(False, True, 0.0, "reject"),
        seen(True, False, 0.5, "accept"),
        seen(False, False, None, None),
    ]
    numbers = digest(shown)
    fixed, flex = numbers["fixed"], numbers["flex"]
    assert (fixed.splits, flex.splits) == (3, 1)  # the illegal proposal is not a split
    assert fixed.gave == pytest.approx(0.1) and flex.gave == 0.5
    # users received 3 splits (2 from users, 1 from the assistant) and accepted 2; the assistant rejected its one
    assert (fixed.accepted, fixed.received, flex.accepted, flex.received) == (pytest.approx(2 / 3), 3, 0.0, 1)
    assert numbers["comparison"] == "much more than"
    text = prompts.render("scai/digest.j2", digest=numbers)
    assert (
        "fixed-policy agents, when they split, kept 90% of the amount and gave 10% to the other side, on average (3 splits)"
        in text
    )
    assert "they accepted 67% of them (3)" in text and "flex-policy agents gave away much more than" in text


def test_the_meta_lm_reads_the_digest_of_what_it_is_shown(tmp_path: Path) -> None:
    scenario = scai_scenario(runs=1, epochs=2, assistant={"initial_policy": "Give nearly all.", "digest": True})
    models = scai_models()  # a MetaLM that answers its prefill (as the embedded backend does) and a principle
    models["meta"] = scripted(
        [("extract a principle", lambda _, kw: kw["constraint"].prefix + " Look after yourself.")]
    )
    result = run(scenario, out=tmp_path / "r", models=models)
    (call,) = [c for c in transcript(result.path) if c["role"] == "meta"]
    human = call["messages"][1]["content"]
    shown = result.episodes.set_index("episode").loc[policies(result.path)[1]["evidence"]]
    users = shown[~shown["proposer"].astype(str).str.startswith("assistant")]["offered_share"].mean()
    assistant = shown[shown["proposer"].astype(str).str.startswith("assistant")]["offered_share"].mean()
    assert f"gave {round(100 * users)}% to the other side, on average (9 splits)" in human
    assert f"gave {round(100 * assistant)}% to the other side, on average (1 split)" in human
    assert human.index("In numbers") < human.index("previous principle is")
    # the answer starts from what each side keeps, in the assistant's words, read off those numbers
    observation = (
        f"fixed-policy agents keep {keep_word(1 - users)} and the flex-policy agents keep {keep_word(1 - assistant)}."
    )
    assert observation in call["answer"] and policies(result.path)[1]["answer"] == call["answer"]
    assert policies(result.path)[1]["policy"] == "Look after yourself."


@pytest.mark.parametrize(
    "mix",
    [
        {"user_user": 8, "assistant_proposer": 1, "assistant_responder": 1, "assistant_assistant": 0},
        {"user_user": 0, "assistant_proposer": 1, "assistant_responder": 1, "assistant_assistant": 8},
        {"user_user": 3, "assistant_proposer": 2, "assistant_responder": 0, "assistant_assistant": 1},
    ],
)
def test_the_interaction_mix_is_exact(tmp_path: Path, mix: dict[str, int]) -> None:
    scenario = scai_scenario(runs=2, epochs=2, assistant={"interactions": mix})
    result = run(scenario, out=tmp_path / "r", models=scai_models())
    episodes = result.episodes
    for (_, _), frame in episodes.groupby(["run", "epoch"]):
        counts = Counter(frame["interaction"])
        assert {
            kind.replace("-", "_"): counts.get(kind, 0)
            for kind in ("user-user", "assistant-proposer", "assistant-responder", "assistant-assistant")
        } == mix
        kinds = frame.set_index("interaction")
        if mix["assistant_assistant"]:
            both = frame[frame["interaction"] == "assistant-assistant"]
            assert set(both["proposer"]) == {"assistant-0"} and set(both["responder"]) == {"assistant-1"}
        assert not kinds.loc[kinds.index == "user-user", "proposer"].str.startswith("assistant").any()
    assert len(episodes) == 2 * 2 * sum(mix.values())


def test_policies_are_versioned_with_their_evidence(tmp_path: Path) -> None:
    result = run(scai_scenario(runs=2, epochs=3), out=tmp_path / "r", models=scai_models())
    records = policies(result.path)
    assert [(p["run"], p["version"]) for p in records] == [(r, v) for r in range(2) for v in range(3)]
    episodes = result.episodes.set_index("episode")
    for previous, record in zip(records, records[1:]):
        if record["version"] == 0:
            assert record["source"] == "initial" and record["evidence"] == []
            continue
        assert record["source"] == "meta" and record["legal"]
        # written from the last epoch's interactions of its own run
        assert set(episodes.loc[record["evidence"], "epoch"]) == {record["epoch"] - 1}
        assert set(episodes.loc[record["evidence"], "run"]) == {record["run"]}
        assert record["answer"].endswith(record["policy"])
        changed = previous["policy"] != record["policy"]
        assert bool(record["diff"]) == changed
    # the first revision moves from the altruistic start to the selfish users' policy, and says so
    assert records[1]["diff"] == "[-Put others first-] {+Look after yourself+} and [-give them-] {+keep+} nearly all."
    # episodes carry the version of the policy the assistant played
    assistant_eps = result.episodes[result.episodes["interaction"] != "user-user"]
    assert (assistant_eps["policy_version"] == assistant_eps["epoch"]).all()
    import sqlite3

    with sqlite3.connect(result.path / "store.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM policies").fetchone()[0] == 6
    table = result.policy_table()
    assert table.shape == (3, 2) and table.loc[0, "run 0"] == records[0]["policy"]


def test_alignment_metrics_and_gap(tmp_path: Path) -> None:
    result = run(scai_scenario(runs=3, epochs=3), out=tmp_path / "r", models=scai_models())
    scai = result.summary["scai"]
    # the assistant starts altruistic (0.9) among selfish users (0.1), then copies them after one revision
    assert scai["gap_first_epoch"] == pytest.approx(0.8, abs=0.05)
    assert abs(scai["gap_last_epoch"]) < 0.05
    assert scai["per_epoch"]["2"]["assistant_offered_share"]["n"] == 3
    bins = {b["bin"]: b for b in scai["final_policy_bins"]}
    assert bins["selfish"]["runs"] == 3 and bins["selfish"]["population_share"] == 1.0
    epochs = pd.read_csv(result.path / "epochs.csv")
    assert set(epochs["group"]) == {"users", "assistant"} and len(epochs) == 3 * 3 * 2
    for name in ("offered_share_over_epochs.png", "epoch_summary.csv", "final_policies.csv"):
        assert (result.path / name).is_file()
    assert not (result.path / "final_policy_bins.png").exists()  # one-group society: no histogram


def test_mixed_society_writes_the_final_policy_histogram(tmp_path: Path) -> None:
    society = {"size": 16, "norms": [{"norm": "selfish", "proportion": 0.5}, {"norm": "altruistic", "proportion": 0.5}]}
    result = run(scai_scenario(runs=4, epochs=2, society=society), out=tmp_path / "r", models=scai_models())
    bins = {b["bin"]: b for b in result.summary["scai"]["final_policy_bins"]}
    assert sum(b["runs"] for b in bins.values()) == 4
    assert bins["selfish"]["population_share"] == 0.5 and bins["altruistic"]["population_share"] == 0.5
    assert (result.path / "final_policy_bins.png").is_file()


def test_an_unusable_policy_is_an_illegal_revision_and_the_old_policy_stays(tmp_path: Path) -> None:
    models = scai_models()
    models["meta"] = scripted([(r"extract a principle", "Revised principle: ok")])
    result = run(scai_scenario(runs=1, epochs=2), out=tmp_path / "r", models=models)
    first, second = policies(result.path)
    assert not second["legal"] and second["policy"] == first["policy"] and second["illegal_answers"] == 2
    reask = [c for c in transcript(result.path) if c["role"] == "meta" and c["attempt"] == 1]
    assert reask and "not a usable principle" in reask[0]["messages"][-1]["content"]
    assert result.summary["scai"]["illegal_revisions"] == 1


class Interrupt(RuntimeError):
    """Stands in for a crash partway through a run."""


def _crashing_meta(after: int) -> Any:
    count = {"calls": 0}

    def answer(messages: list[Any], kwargs: dict[str, Any]) -> str:
        count["calls"] += 1
        if count["calls"] > after:
            raise Interrupt("killed")
        return scripted_meta(messages, kwargs)

    return scripted([(r"extract a principle", answer)])


@pytest.mark.parametrize("after", [0, 3])
def test_resume_after_an_interrupted_epoch_gives_the_same_policies_and_metrics(tmp_path: Path, after: int) -> None:
    scenario = scai_scenario(runs=3, epochs=3, assistant={})  # initial policies drawn from the library
    whole = run(scenario, out=tmp_path / "whole", models=scai_models())
    cut_models = scai_models()
    cut_models["meta"] = _crashing_meta(after)
    with pytest.raises(RunFailedError, match="resumable"):
        asyncio.run(arun(scenario, out=tmp_path / "cut", models=cut_models))
    assert not (tmp_path / "cut" / "policies.jsonl").exists()
    resumed = scai_models()
    asyncio.run(aresume(tmp_path / "cut", models=resumed))
    cut = RunResult.load(tmp_path / "cut")
    assert policies(cut.path) == policies(whole.path)
    pd.testing.assert_frame_equal(whole.metrics, cut.metrics)
    pd.testing.assert_frame_equal(whole.episodes, cut.episodes)
    pd.testing.assert_frame_equal(pd.read_csv(whole.path / "epochs.csv"), pd.read_csv(cut.path / "epochs.csv"))
    assert cut.summary["scai"] == whole.summary["scai"]
    assert resumed["user"].calls < whole.summary["llm_usage"]["user"]["calls"]  # finished epochs not replayed


def test_generalisation_replays_the_final_policies(tmp_path: Path) -> None:
    result = run(scai_scenario(runs=2, epochs=2), out=tmp_path / "r", models=scai_models())
    conditions = load_scenario(SCAI_SCENARIOS[0].parent / "ood_medicine.yaml").assistant.evaluation.conditions
    table = asyncio.run(aevaluate(result.path, conditions=conditions, trials=3, models=scai_models()))
    assert len(table) == 2 * len(conditions) * 3
    final = {p["run"]: p for p in policies(result.path) if p["version"] == 1}
    assert all(table["policy"] == table["run"].map(lambda r: final[r]["policy"]))
    medicine = table[table["condition"] == "medicine"]
    assert (medicine["currency"] == "grams of medicine").all()
    assert medicine["proposal"].str.contains("grams of medicine").all()
    assert (table.loc[table["condition"] == "billions", "amount"] == 2_220_000_000).all()
    with_reason = table[table["condition"].str.endswith("reason")]
    assert with_reason["reason"].eq("Because my principle says so.").all()
    assert table.loc[~table["condition"].str.endswith("reason"), "reason"].isna().all()
    # the scripted selfish policy offers 10% in every condition
    assert table["offered_share"].astype(float).between(0.05, 0.15).all()
    summary = json.loads((result.path / "summary.json").read_text())
    assert set(summary["evaluation"]) == {c.name for c in conditions} | {"training, last epoch"}
    assert (result.path / "evaluation.csv").is_file() and (result.path / "generalisation.png").is_file()
    reason_calls = [c for c in transcript(result.path) if c["step"] == "reason"]
    assert len(reason_calls) == 2 * 2 * 3 and all(
        "Start of interaction" not in str(c["messages"]) for c in reason_calls
    )
    # evaluating again reads the cache and writes the same table
    again = asyncio.run(aevaluate(result.path, conditions=conditions, trials=3, models=scai_models()))
    pd.testing.assert_frame_equal(table, again)


def test_evaluate_refuses_a_run_without_an_assistant(tmp_path: Path) -> None:
    from tests.conftest import small_scenario, ultimatum_model

    result = run(small_scenario(runs=1, epochs=1), out=tmp_path / "r", models={"user": ultimatum_model()})
    with pytest.raises(UsageError, match="not a SCAI run"):
        asyncio.run(aevaluate(result.path, models=scai_models()))


def test_scenario_errors_name_the_field() -> None:
    with pytest.raises(ScenarioError, match=r"assistant.interactions.user_user"):
        scai_scenario(assistant={"interactions": {"user_user": -1}})
    with pytest.raises(ScenarioError, match=r"remove interactions_per_epoch"):
        scai_scenario(interactions_per_epoch=4)
    with pytest.raises(ScenarioError, match=r"initial_policy or initial_policies"):
        scai_scenario(assistant={"initial_policy": "a b c d e f", "initial_policies": ["x y z w v"]})
    with pytest.raises(ScenarioError, match=r"assistant.evaluation.conditions\[1\]"):
        scai_scenario(assistant={"evaluation": {"conditions": [{"name": "a"}, {"name": "b", "amount": 0}]}})


@pytest.mark.parametrize("path", SCAI_SCENARIOS, ids=lambda p: p.stem)
def test_every_scai_scenario_validates_and_runs(path: Path, tmp_path: Path) -> None:
    from sandbox.scai.society_cli import apply_overrides

    scenario = load_scenario(path)
    assert scenario.assistant is not None and scenario.runs == 20 and scenario.epochs == 5
    small = apply_overrides(scenario, runs=2, epochs=2)
    result = run(small, out=tmp_path / "r", models=scai_models())
    mix = scenario.assistant.interactions
    assert result.summary["episodes"] == 2 * 2 * mix.total()
    assert len(policies(result.path)) == 2 * 2


@pytest.mark.parametrize("amount", [1, 2, 7, 10, 33, 100, 2000])
def test_the_assistants_lead_in_admits_every_legal_split_exactly_once(amount: int) -> None:
    import re

    from agents.assistant import lead_constraint
    from sandbox.rules.ultimatum import Stake

    grammar = lead_constraint(Stake(amount, "dollars")).grammar
    kept = [int(p) for p in re.findall(r'"(\d+), and the responder will get', grammar)]
    assert sorted(kept) == list(range(amount + 1))  # each split under one word only: the numbers follow the word
    # above 2000 the same lead-in, in whole percents of the amount (the billions condition keeps the scaffold)
    billions = lead_constraint(Stake(2_220_000_000, "dollars")).grammar
    kept = sorted(int(p) for p in re.findall(r'"(\d+), and the responder will get', billions))
    assert kept == [22_200_000 * k for k in range(101)]
    half = billions.split(" half. ")[1].split(" most. ")[0]
    assert '"1110000000, and the responder will get 1110000000."' in half and '"0, and' not in half


def test_a_society_sweep_plots_one_row_per_norm_with_seeds_as_runs(tmp_path: Path) -> None:
    """`plot_seeds` groups a sweep's runs by their norms and takes each run's seed as its run; unfinished runs
    are left out, and a sweep with none finished is a usage error."""
    import json as _json

    from sandbox.base.errors import UsageError
    from sandbox.scai.plots import plot_seeds, sweep_epochs

    rows = []
    for i, (norm, seed) in enumerate([("selfish", 100), ("selfish", 101), ("fair", 100), ("fair", 101)]):
        run_id = f"run-{i:04d}"
        rows.append({"run": run_id, "society.norms": _json.dumps([{"norm": norm, "proportion": 1.0}]), "seed": seed})
        if i == 3:
            continue  # not finished
        (tmp_path / "runs" / run_id).mkdir(parents=True)
        share = 0.1 if norm == "selfish" else 0.5
        # two runs inside each sweep run: one sample per seed, their mean
        pd.DataFrame(
            [
                {
                    "run": r,
                    "epoch": e,
                    "group": g,
                    "offered_share": share + (0.2 * r if g == "assistant" else 0),
                    "acceptance_rate": 1.0,
                    "utility": 0.5,
                    "proposer_utility": 0.5,
                    "responder_utility": 0.5,
                }
                for r in range(2)
                for e in range(2)
                for g in ("users", "assistant")
            ]
        ).to_csv(tmp_path / "runs" / run_id / "epochs.csv", index=False)
    pd.DataFrame(rows).to_csv(tmp_path / "runs.csv", index=False)
    (tmp_path / "empty").mkdir()
    pd.DataFrame(rows[3:]).to_csv(tmp_path / "empty" / "runs.csv", index=False)
    with pytest.raises(UsageError, match="no finished run"):
        plot_seeds(tmp_path / "empty")
    with pytest.raises(UsageError, match="not a sweep"):
        plot_seeds(tmp_path / "runs")
    settings = sweep_epochs(tmp_path)
    assert list(settings) == ["selfish", "fair"]
    assert sorted(settings["selfish"]["run"].unique()) == [100, 101] and list(settings["fair"]["run"].unique()) == [100]
    selfish = settings["selfish"]
    assert len(selfish) == 2 * 2 * 2  # seeds x epochs x groups: the inner runs averaged
    assistant = selfish[selfish["group"] == "assistant"]["offered_share"]
    assert assistant.tolist() == pytest.approx([0.2] * 4)  # the mean of 0.1 and 0.3
    with pytest.raises(UsageError, match="no override 'society.size'"):
        sweep_epochs(tmp_path, by="society.size")
    figure = plot_seeds(tmp_path)
    assert len(figure.axes) == 4 and "selfish users" in figure.axes[0].get_title()
    from sandbox.scai.plots import PAPER_FIG3A

    paper = [line for line in figure.axes[0].get_lines() if "paper" in str(line.get_label())]
    assert [list(line.get_ydata()) for line in paper] == [
        list(PAPER_FIG3A["selfish"]["users"]),
        list(PAPER_FIG3A["selfish"]["assistant"]),
    ]
