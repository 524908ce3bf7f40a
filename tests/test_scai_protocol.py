"""SCAI's protocol as the paper ran it (stakes per epoch, the rules told, the test-time prior, the labelled
assistant-assistant prompt, utility per role, final bins from the final policy's proposals) and the MetaLM's
revision options (search, hidden previous principle, critique, re-ask on a copy, truncation, the oracle bound),
with scripted models."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from sandbox import RunFailedError, RunResult, aresume, arun, run
from sandbox.base.errors import ScenarioError
from sandbox.llm.scripted import ScriptedReply, scripted
from sandbox.scai.evaluate import aevaluate
from sandbox.scai.metrics import group_epochs
from sandbox.scai.society_cli import apply_overrides
from societies.norms import NORMS
from tests.conftest import POLICY_FOR_SHARE, scai_models, scai_scenario, scripted_meta, small_scenario, ultimatum_model

OTHERS, EQUAL, SELF = POLICY_FOR_SHARE[0.9], POLICY_FOR_SHARE[0.5], POLICY_FOR_SHARE[0.1]
RULES = "if it is rejected, no one receives anything"


def transcript(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (path / "transcripts.jsonl").read_text().splitlines()]


def policies(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (path / "policies.jsonl").read_text().splitlines()]


def text(call: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in call["messages"])


def test_one_currency_per_run_and_one_amount_per_epoch(tmp_path: Path) -> None:
    scenario = scai_scenario(runs=3, epochs=3, game={"currencies": ["apples", "blankets", "dollars"]})
    assert scenario.game.stakes == "epoch" and scenario.game.rules  # the paper's, by default with an assistant
    episodes = run(scenario, out=tmp_path / "r", models=scai_models()).episodes
    for _, frame in episodes.groupby(["run", "epoch"]):
        assert frame["amount"].nunique() == 1 and len(frame) == 10  # every interaction of the epoch
    assert (episodes.groupby("run")["currency"].nunique() == 1).all()
    assert episodes.groupby("run")["amount"].nunique().max() > 1  # a new amount each epoch
    # the earlier behaviour stays a switch: a new stake for every episode
    apart = run(scai_scenario(runs=1, epochs=2, game={"stakes": "episode"}), out=tmp_path / "e", models=scai_models())
    assert apart.episodes.groupby("epoch")["amount"].nunique().min() > 1


def test_the_rules_are_told_to_every_player_in_scai_and_not_in_a_users_only_society(tmp_path: Path) -> None:
    result = run(scai_scenario(runs=1, epochs=2), out=tmp_path / "r", models=scai_models())
    proposals = [c for c in transcript(result.path) if c["step"] == "propose"]
    assert {c["role"] for c in proposals} == {"user", "assistant"}
    assert all(RULES in c["messages"][0]["content"] for c in proposals)
    plain = run(small_scenario(runs=1, epochs=1), out=tmp_path / "u", models={"user": ultimatum_model()})
    assert not plain.scenario.game.rules
    assert not any(RULES in text(c) for c in transcript(plain.path))


def test_the_ood_prior_is_in_the_test_prompt_and_never_in_training(tmp_path: Path) -> None:
    prior = "be altruistic in resource distribution."
    scenario = scai_scenario(
        runs=2,
        epochs=2,
        game={"currencies": ["dollars"]},
        assistant={"evaluation": {"prior": prior, "learned_on": True, "trials": 2}},
    )
    result = run(scenario, out=tmp_path / "r", models=scai_models())
    table = asyncio.run(aevaluate(result.path, models=scai_models()))
    every = [c for c in transcript(result.path) if c["role"] == "assistant"]
    calls = [c for c in every if "/reading" not in c["step"]]
    readings = [c for c in every if "/reading" in c["step"]]  # the policy's reading sees the prior too
    assert all(prior in c["messages"][-1]["content"] for c in readings if "-eval-" in c["episode"])
    assert not any("prior" in c["messages"][-1]["content"] for c in readings if "-eval-" not in c["episode"])
    tests = [c for c in calls if "-eval-" in c["episode"]]
    training = [c for c in calls if "-eval-" not in c["episode"]]
    assert tests and training
    assert all(f"your prior was that you must {prior}" in c["messages"][0]["content"] for c in tests)
    assert all(
        "You learned this principle by splitting dollars, with amounts from 10 to 100." in c["messages"][0]["content"]
        for c in tests
    )
    assert not any(
        "prior" in c["messages"][0]["content"] or "You learned" in c["messages"][0]["content"] for c in training
    )
    assert (table["prior"] == prior).all()
    assert not any(prior in p["policy"] for p in policies(result.path))  # the prior is no training policy


def test_the_assistant_assistant_prompt_labels_its_evidence(tmp_path: Path) -> None:
    mix = {"user_user": 0, "assistant_proposer": 1, "assistant_responder": 1, "assistant_assistant": 8}
    result = run(
        scai_scenario(runs=1, epochs=2, assistant={"interactions": mix}), out=tmp_path / "r", models=scai_models()
    )
    (call,) = [c for c in transcript(result.path) if c["role"] == "meta"]
    human = call["messages"][1]["content"]
    assert "fixed-policy agents' interactions with each other" not in human  # there were none: no empty heading
    first, rest = human.split(
        "First, analyze the flex-policy agents' interactions with the fixed-policy agents, shown below."
    )[1].split("Next, analyze the flex-policy agents' interactions with each other, shown below.")
    assert first.count("Start of interaction") == 2 and rest.count("Start of interaction") == 8
    assert rest.count("Start of interaction flex-policy agent's response") == 8
    # with user-user games, the paper's two headings, unchanged
    plain = run(scai_scenario(runs=1, epochs=2), out=tmp_path / "p", models=scai_models())
    human = [c for c in transcript(plain.path) if c["role"] == "meta"][0]["messages"][1]["content"]
    assert "First, analyze the fixed-policy agents' interactions with each other" in human
    assert "Next, analyze the flex-policy agents' interactions with the fixed-policy agents" in human
    assert "interactions with each other, shown below" in human and "Then, analyze" not in human


def test_utility_per_role_on_hand_worked_episodes() -> None:
    def episode(proposer: str, responder: str, part: int, decision: str) -> dict[str, Any]:
        won = decision == "accept"
        return {
            "run": 0,
            "epoch": 0,
            "proposer": proposer,
            "responder": responder,
            "amount": 10,
            "proposal_legal": True,
            "offered_share": part / 10,
            "decision": decision,
            "proposer_payoff": 10 - part if won else 0,
            "responder_payoff": part if won else 0,
        }

    episodes = pd.DataFrame(
        [
            episode("user-0", "user-1", 2, "accept"),  # proposer 0.8, responder 0.2
            episode("user-2", "assistant", 1, "reject"),  # both 0
            episode("assistant", "user-3", 4, "accept"),
        ]
    )  # proposer 0.6, responder 0.4
    groups = group_epochs(episodes).set_index("group")
    assert groups.loc["users", "proposer_utility"] == pytest.approx((0.8 + 0.0) / 2)
    assert groups.loc["users", "responder_utility"] == pytest.approx((0.2 + 0.4) / 2)
    assert groups.loc["assistant", "proposer_utility"] == pytest.approx(0.6)
    assert groups.loc["assistant", "responder_utility"] == 0.0
    assert groups.loc["users", "utility"] == pytest.approx((0.8 + 0.2 + 0.0 + 0.4) / 4)  # the pooled figure stays


def test_final_bins_come_from_the_final_policys_proposals(tmp_path: Path) -> None:
    society = {"size": 16, "norms": [{"norm": "selfish", "proportion": 0.8}, {"norm": "altruistic", "proportion": 0.2}]}
    result = run(scai_scenario(runs=3, epochs=2, society=society), out=tmp_path / "r", models=scai_models())
    finals = pd.read_csv(result.path / "final_proposals.csv")
    assert len(finals) == 3 * 4 and (finals["policy_version"] == 1).all()
    per_run = pd.read_csv(result.path / "final_policies.csv")
    assert (per_run["proposals"] == 4).all()
    mean = finals.groupby("run")["offered_share"].mean()
    assert per_run.set_index("run")["offered_share"].to_dict() == pytest.approx(mean.to_dict())
    bins = {b["bin"]: b for b in result.summary["scai"]["final_policy_bins"]}
    assert bins["selfish"]["population_share"] == 0.8 and bins["selfish"]["realised_share"] == pytest.approx(13 / 16)
    assert bins["selfish"]["ci_low"] < bins["selfish"]["share_of_runs"] <= bins["selfish"]["ci_high"]
    finals_calls = [c for c in transcript(result.path) if c["step"] == "final-propose"]
    assert len(finals_calls) == 12 and all(c["role"] == "assistant" for c in finals_calls)


CANDIDATES = (EQUAL, SELF, OTHERS)


def candidate_meta(messages: list[Any], kwargs: dict[str, Any]) -> str:
    """Candidate k writes CANDIDATES[k]; a single draw copies the users (tests only)."""
    step = kwargs["call"].step
    if not step.startswith("candidate-"):
        return scripted_meta(messages, kwargs)
    assert kwargs["temperature"] == 0.9  # candidates are sampled warmer than the role
    return f"Revised principle: {CANDIDATES[int(step.split('-')[1]) % 3]}"


def test_search_keeps_the_candidate_that_behaves_like_the_users_and_records_every_replay(tmp_path: Path) -> None:
    models = scai_models()
    models["meta"] = scripted([(r"extract a principle", candidate_meta)])
    scenario = scai_scenario(
        runs=2, epochs=3, assistant={"initial_policy": OTHERS, "revision": {"strategy": "search", "candidates": 3}}
    )
    result = run(scenario, out=tmp_path / "r", models=models)
    records = policies(result.path)
    first = [r for r in records if r["version"] == 1]
    for record in first:
        assert record["source"] == "search" and record["policy"] == SELF and record["kept"] is False
        current, *drawn = record["candidates"]
        assert current["source"] == "current" and current["policy"] == OTHERS
        assert [c["policy"] for c in drawn] == list(CANDIDATES) and drawn[2]["duplicate"] and not drawn[2]["replay"]
        for candidate in (current, drawn[0], drawn[1]):
            kinds = {row["kind"] for row in candidate["replay"]}
            assert kinds == {"propose", "respond"} and candidate["distance"] is not None
            proposals = [row for row in candidate["replay"] if row["kind"] == "propose"]
            assert all(row["users"] == pytest.approx(0.1, abs=0.05) for row in proposals)  # what the users offered
        assert drawn[1]["chosen"] and drawn[1]["distance"] < drawn[0]["distance"] < current["distance"]
    # the next search keeps the current policy: no candidate beats it
    assert all(r["kept"] and r["policy"] == SELF for r in records if r["version"] == 2)
    replays = [c for c in transcript(result.path) if c["step"] in ("replay-propose", "replay-respond")]
    replayed_rows = sum(len(c["replay"]) for r in records for c in r["candidates"])
    assert len(replays) == replayed_rows  # every replayed move was a call of its own, and is in the record
    assert all(
        "Your principle:" in c["messages"][0]["content"] and "Start of interaction" not in text(c) for c in replays
    )


def test_search_draws_by_softmax_with_recorded_probabilities(tmp_path: Path) -> None:
    models = scai_models()
    models["meta"] = scripted([(r"extract a principle", candidate_meta)])
    revision = {"strategy": "search", "candidates": 2, "select": "softmax", "tau": 0.1}
    result = run(scai_scenario(runs=1, epochs=2, assistant={"revision": revision}), out=tmp_path / "r", models=models)
    (record,) = [r for r in policies(result.path) if r["version"] == 1]
    probabilities = [c["probability"] for c in record["candidates"] if c["distance"] is not None]
    assert sum(probabilities) == pytest.approx(1.0) and sum(c["chosen"] for c in record["candidates"]) == 1


def copying_meta(messages: list[Any], kwargs: dict[str, Any]) -> str:
    """Copies the previous principle unless told that it repeated it (tests only)."""
    last = str(messages[-1].content)
    if "That repeats the previous principle" in last:
        return f"Revised principle: {SELF}"
    previous = str(messages[1].content).split("previous principle is: ")[1].split("\n")[0]
    return f"Revised principle: {previous}"


@pytest.mark.parametrize("copy_gap", [None, 0.3])
def test_a_repeated_principle_is_asked_again_while_the_gap_is_large(tmp_path: Path, copy_gap: float | None) -> None:
    models = scai_models()
    models["meta"] = scripted([(r"extract a principle", copying_meta)])
    scenario = scai_scenario(runs=1, epochs=2, assistant={"initial_policy": OTHERS, "revision": {"copy_gap": copy_gap}})
    result = run(scenario, out=tmp_path / "r", models=models)
    record = policies(result.path)[1]
    meta_calls = [c for c in transcript(result.path) if c["role"] == "meta"]
    if copy_gap is None:  # the paper's single draw: the copy stands
        assert record["policy"] == OTHERS and record["copy_reasks"] == 0 and len(meta_calls) == 1
    else:
        assert record["policy"] == SELF and record["copy_reasks"] == 1 and len(meta_calls) == 2
        assert "gave away much more than the fixed-policy agents" in meta_calls[1]["messages"][-1]["content"]


def test_the_previous_principle_can_be_hidden_and_a_critique_asked_first(tmp_path: Path) -> None:
    models = scai_models()
    models["meta"] = scripted([(r"extract a principle", f"Critique: They give far too much away.\nPrinciple: {SELF}")])
    revision = {"previous": "hide", "critique": True}
    result = run(scai_scenario(runs=1, epochs=2, assistant={"revision": revision}), out=tmp_path / "r", models=models)
    (call,) = [c for c in transcript(result.path) if c["role"] == "meta"]
    human = call["messages"][1]["content"]
    assert (
        "previous principle" not in human.lower() and OTHERS not in human
    )  # nothing refers to a principle it was not shown
    assert "Write a principle so that flex-policy agent behaves exactly like the fixed-policy agents" in human
    assert '"Critique: ..."' in human and '"Principle: ..."' in human
    record = policies(result.path)[1]
    assert record["policy"] == SELF and record["answer"].startswith("Critique: They give far too much away.")
    for bad, message in (
        (({"digest": True, "revision": {"critique": True}}), "choose one"),
        ({"revision": {"strategy": "search", "copy_gap": 0.2}}, "drop copy_gap"),
        ({"revision": {"previous": "hide", "copy_gap": 0.2}}, "previous: hide does not show"),
        ({"revision": {"strategy": "search", "temperature": 0}}, "sample them warmer"),
        ({"oracle": True, "revision": {"strategy": "search"}}, "drop revision"),
    ):
        with pytest.raises(ScenarioError, match=message):
            scai_scenario(assistant=bad)


def test_an_answer_cut_off_at_the_token_limit_is_an_illegal_revision(tmp_path: Path) -> None:
    models = scai_models()
    models["meta"] = scripted(
        [(r"extract a principle", ScriptedReply("Revised principle: Look after yourself and", finish_reason="length"))]
    )
    result = run(scai_scenario(runs=1, epochs=2), out=tmp_path / "r", models=models)
    first, second = policies(result.path)
    assert not second["legal"] and second["policy"] == first["policy"] and second["illegal_answers"] == 2
    reask = [c for c in transcript(result.path) if c["role"] == "meta" and c["attempt"] == 1]
    assert "cut off at the token limit" in reask[0]["messages"][-1]["content"]


def test_the_oracle_bound_plays_the_users_norm_text_and_nothing_else_changes(tmp_path: Path) -> None:
    norm = NORMS.get("selfish").text
    scenario = scai_scenario(runs=2, epochs=3, assistant={"oracle": True})
    assert apply_overrides(scenario, runs=2) == scenario  # read back with every default written out, as resume reads it
    oracle = run(scenario, out=tmp_path / "o", models=scai_models())
    plain = run(
        scai_scenario(runs=2, epochs=3, assistant={"initial_policy": norm}), out=tmp_path / "p", models=scai_models()
    )
    calls = transcript(oracle.path)
    assert not [c for c in calls if c["role"] == "meta"]
    assert {p["source"] for p in policies(oracle.path)} == {"oracle"} and {
        p["policy"] for p in policies(oracle.path)
    } == {norm}
    # the same prompts as an assistant handed that text as its policy; the users' games are untouched
    assistant = sorted((c["episode"], c["step"], text(c)) for c in calls if c["role"] == "assistant")
    same_text = sorted((c["episode"], c["step"], text(c)) for c in transcript(plain.path) if c["role"] == "assistant")
    assert [a for a in assistant if "e0-" in a[0]] == [a for a in same_text if "e0-" in a[0]]
    assert all(f"Your principle: {norm}" in a[2] or f'Principle: "{norm}"' in a[2] for a in assistant)
    users = [(c["episode"], c["step"], text(c), c["seed"]) for c in calls if c["role"] == "user"]
    assert users == [
        (c["episode"], c["step"], text(c), c["seed"]) for c in transcript(plain.path) if c["role"] == "user"
    ]
    with pytest.raises(ScenarioError, match="oracle"):
        scai_scenario(assistant={"oracle": True, "initial_policy": "Keep it all."})


def test_a_search_with_no_usable_draw_is_an_illegal_revision(tmp_path: Path) -> None:
    models = scai_models()
    models["meta"] = scripted([(r"extract a principle", "Revised principle: ok")])
    scenario = scai_scenario(runs=1, epochs=2, assistant={"revision": {"strategy": "search", "candidates": 2}})
    result = run(scenario, out=tmp_path / "r", models=models)
    first, second = policies(result.path)
    assert not second["legal"] and second["kept"] and second["policy"] == first["policy"]
    assert second["illegal_answers"] == 4 and result.summary["scai"]["illegal_revisions"] == 1


def _crashing(after: int) -> Any:
    count = {"calls": 0}

    def answer(messages: list[Any], kwargs: dict[str, Any]) -> str:
        count["calls"] += 1
        if count["calls"] > after:
            raise RuntimeError("killed")
        return candidate_meta(messages, kwargs)

    return scripted([(r"extract a principle", answer)])


def test_a_search_resumed_after_a_crash_ends_as_an_uninterrupted_one(tmp_path: Path) -> None:
    scenario = scai_scenario(runs=2, epochs=3, assistant={"revision": {"strategy": "search", "candidates": 3}})
    models = scai_models()
    models["meta"] = scripted([(r"extract a principle", candidate_meta)])
    whole = run(scenario, out=tmp_path / "whole", models=models)
    cut = scai_models()
    cut["meta"] = _crashing(4)
    with pytest.raises(RunFailedError, match="resumable"):
        asyncio.run(arun(scenario, out=tmp_path / "cut", models=cut))
    resumed = scai_models()
    resumed["meta"] = scripted([(r"extract a principle", candidate_meta)])
    asyncio.run(aresume(tmp_path / "cut", models=resumed))
    again = RunResult.load(tmp_path / "cut")
    assert policies(again.path) == policies(whole.path)
    pd.testing.assert_frame_equal(whole.episodes, again.episodes)
    assert again.summary["scai"] == whole.summary["scai"]


def test_compare_overlays_runs_in_the_papers_panels(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sandbox.cli.runs import app
    from sandbox.scai.compare import comparison_table

    mixed = {"size": 16, "norms": [{"norm": "selfish", "proportion": 0.5}, {"norm": "altruistic", "proportion": 0.5}]}
    one = run(scai_scenario(runs=2, epochs=2), out=tmp_path / "one", models=scai_models()).path
    two = run(scai_scenario(runs=2, epochs=2, society=mixed), out=tmp_path / "two", models=scai_models()).path
    table = comparison_table([one, two]).set_index(["run_dir", "group", "epoch"])
    assert (
        table.loc[(str(one), "users", 1), "panel"] == "one group"
        and table.loc[(str(two), "users", 1), "panel"] == "mixed"
    )
    assert table.loc[(str(two), "users", 1), "label"] == "50% selfish, 50% altruistic"
    summary = pd.read_csv(one / "epoch_summary.csv")
    gap = summary[(summary["group"] == "gap") & (summary["epoch"] == 1)]["mean"].iloc[0]
    assert table.loc[(str(one), "gap", 2), "mean"] == pytest.approx(gap)
    figure = tmp_path / "figs" / "compare.png"
    figure.parent.mkdir()
    result = CliRunner().invoke(app, ["compare", str(one), str(two), "--out", str(figure)])
    assert result.exit_code == 0, result.output
    assert figure.is_file() and len(pd.read_csv(figure.with_suffix(".csv"))) == len(table)
    # a directory that is not a SCAI run: exit 2, named, nothing written
    users = run(small_scenario(runs=1, epochs=1), out=tmp_path / "users", models={"user": ultimatum_model()}).path
    again = tmp_path / "figs" / "again.png"
    result = CliRunner().invoke(app, ["compare", str(one), str(users), "--out", str(again)])
    assert result.exit_code == 2 and "users" in result.output and not again.exists()
    assert not again.with_suffix(".csv").exists()


def test_a_run_killed_during_the_final_proposals_resumes_to_the_same_results(tmp_path: Path) -> None:
    scenario = scai_scenario(runs=2, epochs=2)
    whole = run(scenario, out=tmp_path / "whole", models=scai_models())
    cut = scai_models()
    finals = {"n": 0}

    def dies_in_final(messages: list[Any], kwargs: dict[str, Any]) -> str:
        if kwargs["call"].step == "final-propose":
            finals["n"] += 1
            if finals["n"] > 2:
                raise RuntimeError("killed")
        from tests.conftest import scripted_assistant_propose

        return scripted_assistant_propose(messages, kwargs)

    from tests.conftest import scripted_reading

    cut["assistant"] = scripted(
        [
            (r"explain what a principle means", scripted_reading),
            (r"reason for your proposal", "Because."),
            (r"You are the proposer", dies_in_final),
            (r"You are the responder", "yes"),
        ]
    )
    with pytest.raises(RunFailedError, match="resumable"):
        asyncio.run(arun(scenario, out=tmp_path / "cut", models=cut))
    asyncio.run(aresume(tmp_path / "cut", models=scai_models()))
    pd.testing.assert_frame_equal(
        pd.read_csv(whole.path / "final_proposals.csv"), pd.read_csv(tmp_path / "cut" / "final_proposals.csv")
    )
    assert RunResult.load(tmp_path / "cut").summary["scai"] == whole.summary["scai"]
