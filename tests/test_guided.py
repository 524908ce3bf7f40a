"""Solver-guided society members: a solved dialogue policy read back, drawn per move, and played in a society."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from sandbox.base.errors import RunFailedError, ScenarioError
from sandbox.core.result import RunResult
from sandbox.core.scenario_files import load_scenario, parse_kind
from sandbox.llm.scripted import scripted
from sandbox.society.results import member_payoffs
from sandbox.society.runner import aresume, arun
from societies.guided_policy import GuidedPolicy
from tests.conftest import scripted_propose, scripted_respond
from tests.dialogue_helpers import ULTIMATUM

STYLE = re.compile(r"Style: (\w+)\.")


def solved_run(path: Path, proposer: dict[str, float], responder: list[tuple[int, dict[str, float]]]) -> Path:
    """A `sandbox solve` run directory of the instructed ultimatum game over 10 dollars, written by hand: the
    proposer's policy at the root, and per responder state (the part of 10 offered) its policy."""
    rows = [
        {
            "infostate": 0,
            "player": 0,
            "setup": 0,
            "depth": 0,
            "own_instructions": "",
            "last_message": "",
            "instruction": i,
            "probability": p,
            "infostate_text": "root",
        }
        for i, p in proposer.items()
    ]
    for k, (offered, policy) in enumerate(responder, start=1):
        message = f"For the 10 dollars, the proposer will get {10 - offered}, and the responder will get {offered}."
        rows += [
            {
                "infostate": k,
                "player": 1,
                "setup": 0,
                "depth": 1,
                "own_instructions": "",
                "last_message": message,
                "instruction": i,
                "probability": p,
                "infostate_text": f"state {k}",
            }
            for i, p in policy.items()
        ]
    path.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(path / "policy.csv", index=False)
    (path / "scenario.yaml").write_text(
        yaml.safe_dump(
            {
                **ULTIMATUM,
                "dialogue": {
                    **ULTIMATUM["dialogue"],
                    "domain": {"kind": "ultimatum", "amount": 10, "currency": "dollars", "remark": False},
                },
            }
        )
    )
    return path


def guided_answer(messages: list[Any], kwargs: dict[str, Any]) -> str:
    """A guided member's scripted move: greedy keeps 90%, otherwise half; tough rejects under half, else yes."""
    text = str(messages[-1].content)
    style = STYLE.search(text).group(1)  # type: ignore[union-attr]
    if "Propose your split" in text:
        amount, currency = re.search(r"over (\d+) (\w+)", text).groups()  # type: ignore[union-attr]
        keep = round(int(amount) * (0.9 if style == "greedy" else 0.5))
        return f"For the {amount} {currency}, the proposer will get {keep}, and the responder will get {int(amount) - keep}."
    mine, theirs = map(int, re.search(r"you get (\d+) and \w+ gets (\d+)", text).groups())  # type: ignore[union-attr]
    # a remark that says the opposite word: the answer is its leading yes or no, as the solved game read it
    return "no. Accept a fairer offer next time." if style == "tough" and mine < theirs else "yes. I refuse to haggle."


def society_model() -> Any:
    """Users by their norm (conftest) and guided members by their style, from one scripted model."""
    return scripted(
        [
            (r"You are the proposer", scripted_propose),
            (r"You are the responder", scripted_respond),
            (r"Style: ", guided_answer),
        ]
    )


def society(guided: dict[str, Any], **changes: Any) -> Any:
    data = {
        "name": "guided",
        "seed": 5,
        "runs": 2,
        "epochs": 2,
        "concurrency": 4,
        "game": {"kind": "ultimatum", "amount": {"min": 10, "max": 20}},
        "society": {
            "size": 6,
            "norms": [{"norm": "selfish", "proportion": 0.5}, {"norm": "fair", "proportion": 0.5}],
            "guided": {"count": 3, **guided},
        },
        **changes,
    }
    return parse_kind("society", data)


def test_the_policy_is_read_back_from_a_solved_run(tmp_path: Path) -> None:
    path = solved_run(tmp_path / "solve", {"greedy": 0.75, "any": 0.25}, [(1, {"tough": 1.0}), (5, {"lenient": 1.0})])
    policy = GuidedPolicy.load(path / "policy.csv")
    assert policy.proposer == {"greedy": 0.75, "any": 0.25}
    assert policy.responder == ((0.1, {"tough": 1.0}), (0.5, {"lenient": 1.0}))
    assert policy.names == ("Alice", "Bob") and policy.remark is False
    assert policy.responder_policy(0.25) == {"tough": 1.0}  # 0.25 is nearer 0.1 than 0.5
    assert policy.responder_policy(0.35) == {"lenient": 1.0}
    with pytest.raises(ValueError, match="not a finished `sandbox solve` run"):
        GuidedPolicy.load(tmp_path)


def test_guided_members_play_the_styles_their_policy_draws(tmp_path: Path) -> None:
    path = solved_run(tmp_path / "solve", {"greedy": 1.0, "any": 0.0}, [(1, {"tough": 1.0}), (5, {"lenient": 1.0})])
    result = RunResult.load(
        asyncio.run(arun(society({"policy": str(path)}), out=tmp_path / "run", models={"user": society_model()}))
    )
    episodes = result.episodes
    guided_proposals = episodes[episodes["proposer"].str.startswith("guided-")]
    guided_answers = episodes[episodes["responder"].str.startswith("guided-")]
    assert len(guided_proposals) and len(guided_answers)
    assert (guided_proposals["proposer_instruction"] == "greedy").all()
    assert (guided_proposals["offered_share"] < 0.15).all()  # greedy keeps 90% (rounded), "any" half
    assert episodes[~episodes["proposer"].str.startswith("guided-")]["proposer_instruction"].isna().all()
    # a responder's style comes from the tree's state nearest the share it is offered
    expected = guided_answers["offered_share"].map(lambda s: "tough" if abs(s - 0.1) < abs(s - 0.5) else "lenient")
    assert (guided_answers["responder_instruction"] == expected).all()
    assert set(expected) == {"tough", "lenient"}  # selfish users offer 10%, fair ones half
    rejected = guided_answers["decision"] == "reject"
    assert (rejected == ((expected == "tough") & (guided_answers["offered_share"] < 0.5))).all() and rejected.any()
    # the prompts said the style recorded
    calls = [json.loads(line) for line in (result.path / "transcripts.jsonl").read_text().splitlines()]
    styles = [STYLE.search(c["messages"][-1]["content"]).group(1) for c in calls if c["agent"].startswith("guided-")]
    assert sorted(styles) == sorted(
        [*guided_proposals["proposer_instruction"], *guided_answers["responder_instruction"]]
    )
    assert {c["role"] for c in calls if c["agent"].startswith("guided-")} == {"user"}
    # the payoff of each member kind per role
    payoffs = pd.read_csv(result.path / "payoffs.csv")
    row = payoffs[(payoffs["member"] == "guided") & (payoffs["role"] == "proposer")].iloc[0]
    assert row["episodes"] == len(guided_proposals)
    assert set(payoffs["member"]) == {"guided", "user"} and set(payoffs["role"]) == {"proposer", "responder", "both"}
    assert {p["member"] for p in result.summary["payoff_by_member"]} == {"guided", "user"}
    agents = pd.read_csv(result.path / "agents.csv")
    assert sorted(agents[agents["run"] == 0]["agent"]) == [
        *(f"guided-{n}" for n in (6, 7, 8)),
        *(f"user-{n}" for n in range(6)),
    ]


def test_member_payoffs_count_an_illegal_episode_as_nothing() -> None:
    episodes = pd.DataFrame(
        [
            {
                "run": 0,
                "proposer": "guided-2",
                "responder": "user-0",
                "proposer_norm": "guided",
                "responder_norm": "fair",
                "amount": 10,
                "proposal_legal": True,
                "decision_legal": True,
                "proposer_payoff": 8,
                "responder_payoff": 2,
            },
            {
                "run": 0,
                "proposer": "guided-2",
                "responder": "user-1",
                "proposer_norm": "guided",
                "responder_norm": "fair",
                "amount": 20,
                "proposal_legal": False,
                "decision_legal": None,
                "proposer_payoff": None,
                "responder_payoff": None,
            },
            {
                "run": 0,
                "proposer": "user-0",
                "responder": "assistant",
                "proposer_norm": "fair",
                "responder_norm": "assistant",
                "amount": 10,
                "proposal_legal": True,
                "decision_legal": True,
                "proposer_payoff": 0,
                "responder_payoff": 0,
            },
        ]
    )
    table = member_payoffs(episodes).set_index(["member", "role"])
    assert table.loc[("guided", "proposer"), "utility"] == pytest.approx(0.4)  # (0.8 + 0) / 2
    assert table.loc[("guided", "proposer"), "illegal_moves"] == 1
    assert table.loc[("guided", "proposer"), "payoff"] == pytest.approx(4.0)
    assert table.loc[("assistant", "responder"), "episodes"] == 1
    assert table.loc[("user", "both"), "episodes"] == 3  # two answers and a proposal


def dialogue_player(crash_after: int | None = None) -> Any:
    """Plays the instructed game's prompts (tree and society alike) and classifies styles; crashes after a count."""
    count = {"calls": 0}

    def answer(messages: list[Any], kwargs: dict[str, Any]) -> str:
        count["calls"] += 1
        if crash_after is not None and count["calls"] > crash_after:
            raise RuntimeError("killed")
        text = str(messages[-1].content)
        if "Which one does the message follow" in text:
            return "any"
        return guided_answer(messages, kwargs)

    return scripted(
        [(r"You are the proposer", scripted_propose), (r"You are the responder", scripted_respond), (r".", answer)]
    )


def test_an_inline_game_is_solved_first_and_resumes_after_a_kill(tmp_path: Path) -> None:
    game = {
        **ULTIMATUM,
        "dialogue": {
            **ULTIMATUM["dialogue"],
            "domain": {"kind": "ultimatum", "amount": 10, "currency": "dollars", "remark": False},
        },
    }
    scenario = society({"solve": game})
    whole = RunResult.load(asyncio.run(arun(scenario, out=tmp_path / "whole", models={"user": dialogue_player()})))
    solved = json.loads((whole.path / "guided" / "run.json").read_text())
    assert solved["status"] == "complete"
    policy = GuidedPolicy.load(whole.path / "guided")
    assert policy.source == str(whole.path / "guided")
    assert whole.episodes["proposer_instruction"].dropna().isin(["generous", "greedy", "any"]).all()
    with pytest.raises(RunFailedError, match="resumable"):
        asyncio.run(arun(scenario, out=tmp_path / "cut", models={"user": dialogue_player(crash_after=4)}))
    assert json.loads((tmp_path / "cut" / "run.json").read_text())["status"] == "failed"
    asyncio.run(aresume(tmp_path / "cut", models={"user": dialogue_player()}))
    cut = RunResult.load(tmp_path / "cut")
    pd.testing.assert_frame_equal(whole.episodes, cut.episodes)
    pd.testing.assert_frame_equal(
        pd.read_csv(whole.path / "guided" / "policy.csv"), pd.read_csv(cut.path / "guided" / "policy.csv")
    )


def test_bad_guided_members_name_the_field(tmp_path: Path) -> None:
    cases = {
        "society.guided.policy": {"count": 1, "policy": "nowhere"},
        "society.guided": {"count": 1},
        "society.guided.solve.dialogue.domain.kind": {
            "count": 1,
            "solve": str(Path("scenarios/dialogue/meeting.yaml").resolve()),
        },
    }
    for field, guided in cases.items():
        file = tmp_path / "s.yaml"
        file.write_text(
            yaml.safe_dump(
                {"name": "s", "society": {"size": 2, "norms": [{"norm": "fair", "proportion": 1.0}], "guided": guided}}
            )
        )
        with pytest.raises(ScenarioError, match=re.escape(field)):
            load_scenario(file)
    with pytest.raises(ScenarioError, match=r"society: network edge \(0, 3\) names agent 3, outside 0\.\.2"):
        parse_kind(
            "society",
            {
                "name": "s",
                "society": {  # the network's nodes: 2 users, then 1 guided member
                    "size": 2,
                    "norms": [{"norm": "fair", "proportion": 1.0}],
                    "network": {"kind": "edges", "edges": [[0, 3]]},
                    "guided": {"count": 1, "policy": "x"},
                },
            },
        )


def test_the_assistant_learns_from_the_users_not_the_guided_members() -> None:
    from sandbox.scai.revise import targets

    base = {"amount": 10, "currency": "dollars", "proposal_legal": True, "decision": None, "epoch": 0}
    episodes = [
        {**base, "proposer": "guided-4", "responder": "assistant", "offered_share": 0.1, "index": 0},
        {**base, "proposer": "user-1", "responder": "assistant", "offered_share": 0.5, "index": 1},
    ]
    (target,) = targets(episodes, most=8)
    assert target.users == 0.5 and target.n == 1


def test_play_any_is_the_unguided_control(tmp_path: Path) -> None:
    path = solved_run(tmp_path / "solve", {"greedy": 1.0, "any": 0.0}, [(1, {"tough": 1.0, "any": 0.0})])
    scenario = society({"policy": str(path), "play": "any"}, runs=1, epochs=1)
    episodes = RunResult.load(
        asyncio.run(arun(scenario, out=tmp_path / "run", models={"user": society_model()}))
    ).episodes
    styles = pd.concat([episodes["proposer_instruction"], episodes["responder_instruction"]]).dropna()
    assert len(styles) and (styles == "any").all()  # the policy says greedy and tough; the control plays neither
    assert (episodes[episodes["proposer"].str.startswith("guided-")]["offered_share"] >= 0.4).all()
    no_any = solved_run(tmp_path / "solve2", {"greedy": 1.0}, [(1, {"tough": 1.0})])
    file = tmp_path / "s.yaml"
    file.write_text(
        yaml.safe_dump(
            {
                "name": "s",
                "society": {
                    "size": 2,
                    "norms": [{"norm": "fair", "proportion": 1.0}],
                    "guided": {"count": 1, "policy": str(no_any), "play": "any"},
                },
            }
        )
    )
    with pytest.raises(ScenarioError, match=r"society\.guided\.policy: play any .* no instruction"):
        load_scenario(file)


def test_the_shipped_mixed_scenario_validates_and_runs(tmp_path: Path) -> None:
    from sandbox.scai.society_cli import apply_overrides
    from tests.conftest import scai_models

    scenario = load_scenario(Path(__file__).parents[1] / "scenarios" / "scai" / "small_model" / "mixed_guided.yaml")
    assert scenario.society.guided.count == 4 and isinstance(scenario.society.guided.solve, dict)  # read in
    small = apply_overrides(scenario, runs=1, epochs=2)
    result = RunResult.load(
        asyncio.run(arun(small, out=tmp_path / "r", models={**scai_models(), "user": dialogue_player()}))
    )
    assert (result.path / "guided" / "policy.csv").is_file()
    assert {row["member"] for row in result.summary["payoff_by_member"]} == {"user", "guided", "assistant"}
    assert set(pd.read_csv(result.path / "epochs.csv")["group"]) == {"users", "guided", "assistant"}


def test_the_dry_run_counts_the_guided_game_without_a_model() -> None:
    from sandbox.scai.dry_run import dry_run

    scenario = load_scenario(Path(__file__).parents[1] / "scenarios" / "scai" / "small_model" / "mixed_guided.yaml")
    table = dry_run(scenario).set_index("role")
    # ultimatum_small's tree: 3 styles x 2 seeds proposals, each answered under 3 styles x 2 seeds
    assert table.loc["guided players", "calls"] == 6 + 6 * 6
    assert table.loc["guided players", "model"] == "embedded"


def test_a_sweep_reads_its_base_s_guided_paths_relative_to_the_base_file(tmp_path: Path, monkeypatch: Any) -> None:
    from sandbox.sweep.config import load_sweep

    solved_run(tmp_path / "bases" / "solved", {"greedy": 1.0}, [(5, {"tough": 1.0})])
    (tmp_path / "bases" / "society.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "s",
                "society": {
                    "size": 2,
                    "norms": [{"norm": "fair", "proportion": 1.0}],
                    "guided": {"count": 1, "policy": "solved"},
                },
            }
        )
    )
    (tmp_path / "sweep.yaml").write_text(
        yaml.safe_dump({"name": "w", "sweep": {"base": "bases/society.yaml", "grid": {"seed": [1, 2]}}})
    )
    monkeypatch.chdir(tmp_path / "bases" / "solved")  # anywhere but the base file's folder
    _, base = load_sweep(tmp_path / "sweep.yaml")
    assert base["society"]["guided"]["policy"] == str((tmp_path / "bases" / "solved").resolve())
    (tmp_path / "bases" / "society.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "s",
                "society": {
                    "size": 2,
                    "norms": [{"norm": "fair", "proportion": 1.0}],
                    "guided": {"count": 1, "policy": "gone"},
                },
            }
        )
    )
    with pytest.raises(ScenarioError, match=r"society\.guided\.policy"):
        load_sweep(tmp_path / "sweep.yaml")
    inline = {"name": "s", "society": {"size": 2, "norms": [{"norm": "fair", "proportion": 1.0}]}}
    inline["society"]["guided"] = {"count": 1, "policy": "bases/solved"}  # written inline: beside the sweep file
    (tmp_path / "sweep.yaml").write_text(
        yaml.safe_dump({"name": "w", "sweep": {"base": inline, "grid": {"seed": [1]}}})
    )
    _, base = load_sweep(tmp_path / "sweep.yaml")
    assert base["society"]["guided"]["policy"] == str((tmp_path / "bases" / "solved").resolve())
