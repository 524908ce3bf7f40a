"""Runs with the scripted model: outputs, determinism, resume after an interruption, illegal moves."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from sandbox import RunFailedError, RunResult, aresume, arun, run
from sandbox.base.errors import UsageError
from sandbox.llm.scripted import ScriptedChatModel, scripted
from sandbox.society.nodes import fan_out
from sandbox.society.results import METRIC_COLUMNS
from tests.conftest import (
    scripted_propose,
    scripted_respond,
    small_scenario,
    ultimatum_model,
)


def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Transcript records without what legitimately differs between two runs (timing, cache)."""
    return [{k: v for k, v in r.items() if k not in ("latency_s", "cache_hit")} for r in records]


def transcript(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (path / "transcripts.jsonl").read_text().splitlines()]


def test_run_writes_the_run_directory(tmp_path: Path) -> None:
    result = run(small_scenario(), out=tmp_path / "run", models={"user": ultimatum_model()})
    names = {p.name for p in result.path.iterdir()}
    assert {
        "scenario.yaml",
        "run.json",
        "store.sqlite",
        "cache.sqlite",
        "transcripts.jsonl",
        "agents.csv",
        "episodes.csv",
        "metrics.csv",
        "summary.json",
        "offered_share_by_norm.png",
    } <= names
    assert json.loads((result.path / "run.json").read_text())["status"] == "complete"
    # tidy metrics: one row per agent, epoch and run
    metrics = result.metrics
    assert list(metrics.columns) == METRIC_COLUMNS
    assert not metrics.duplicated(["run", "epoch", "agent"]).any()
    assert set(metrics["run"]) == {0, 1} and set(metrics["epoch"]) == {0, 1}
    # every user plays once per epoch in a maximal matching of 12
    assert (metrics.groupby(["run", "epoch"]).size() == 12).all()
    # the scripted players follow their norms exactly, so the table must show it
    by_norm = metrics.groupby("norm")["offered_share"].mean()
    assert by_norm["selfish"] == pytest.approx(0.1, abs=0.03)
    assert by_norm["fair"] == pytest.approx(0.5, abs=0.03)
    assert by_norm["altruistic"] == pytest.approx(0.9, abs=0.03)
    summary = result.summary
    assert summary["episodes"] == 2 * 2 * 6
    assert summary["illegal_answer_rate"] == 0
    assert summary["offered_share_by_norm"]["selfish"]["ci_over"] == "runs"
    assert summary["llm_usage"]["user"]["calls"] == 2 * summary["episodes"]
    # the scripted altruistic and fair responders accept everything; selfish ones reject offers under 20%
    assert summary["acceptance_rate_by_responder_norm"]["fair"] == 1.0
    assert summary["acceptance_rate_by_responder_norm"]["selfish"] < 1.0
    # payoffs follow decisions: a rejection pays nothing
    episodes = result.episodes
    rejected = episodes[episodes["decision"] == "reject"]
    assert (rejected["proposer_payoff"] == 0).all() and (rejected["responder_payoff"] == 0).all()
    accepted = episodes[episodes["decision"] == "accept"]
    assert (accepted["proposer_payoff"] + accepted["responder_payoff"] == accepted["amount"]).all()
    # the store holds the results too
    import sqlite3

    with sqlite3.connect(result.path / "store.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0] == 24
    assert result.plot() is not None


def test_same_seed_gives_identical_transcripts(tmp_path: Path) -> None:
    a = run(small_scenario(), out=tmp_path / "a", models={"user": ultimatum_model()})
    b = run(small_scenario(), out=tmp_path / "b", models={"user": ultimatum_model()})
    c = run(small_scenario(seed=4), out=tmp_path / "c", models={"user": ultimatum_model()})
    assert comparable(transcript(a.path)) == comparable(transcript(b.path))
    assert comparable(transcript(a.path)) != comparable(transcript(c.path))
    pd.testing.assert_frame_equal(a.metrics, b.metrics)
    seeds = [r["seed"] for r in transcript(a.path)]
    assert len(set(seeds)) == len(seeds)  # every call has its own recorded seed


def stored_episodes(store: Path, folder: Path) -> int:
    """The episodes table's rows in a copy of the file `store` alone (no -wal or -shm beside it) in `folder`."""
    import shutil
    import sqlite3
    from contextlib import closing

    folder.mkdir(parents=True)
    shutil.copyfile(store, folder / store.name)
    with closing(sqlite3.connect(folder / store.name)) as db:
        return int(db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])


class Interrupt(RuntimeError):
    """Stands in for a crash partway through a run."""


def crashing_model(after: int) -> ScriptedChatModel:
    """A scripted player that crashes on its call number `after` + 1 and every call after it."""
    count = {"calls": 0}

    def guard(answer: Any) -> Any:
        def wrapped(messages: list[Any], kwargs: dict[str, Any]) -> str:
            count["calls"] += 1
            if count["calls"] > after:
                raise Interrupt("killed")
            return answer(messages, kwargs)

        return wrapped

    return scripted(
        [(r"You are the proposer", guard(scripted_propose)), (r"You are the responder", guard(scripted_respond))]
    )


@pytest.mark.parametrize("after", [5, 30])
def test_resume_after_an_interruption_matches_an_uninterrupted_run(tmp_path: Path, after: int) -> None:
    scenario = small_scenario(runs=2, epochs=3)
    whole = run(scenario, out=tmp_path / "whole", models={"user": ultimatum_model()})
    with pytest.raises(RunFailedError, match="resumable"):
        asyncio.run(arun(scenario, out=tmp_path / "cut", models={"user": crashing_model(after)}))
    assert json.loads((tmp_path / "cut" / "run.json").read_text())["status"] == "failed"
    assert not (tmp_path / "cut" / "metrics.csv").exists()
    resumed_model = ultimatum_model()
    asyncio.run(aresume(tmp_path / "cut", models={"user": resumed_model}))
    cut = RunResult.load(tmp_path / "cut")
    pd.testing.assert_frame_equal(whole.metrics, cut.metrics)
    pd.testing.assert_frame_equal(whole.episodes, cut.episodes)
    assert comparable(transcript(whole.path)) == comparable(transcript(cut.path))
    # the parsed-move notes beside the transcript: one line per call, as an uninterrupted run's
    notes = (cut.path / "transcripts.parsed.jsonl").read_text().splitlines()
    assert len(notes) == len(transcript(cut.path))
    assert notes == (whole.path / "transcripts.parsed.jsonl").read_text().splitlines()
    # the store's write-ahead log is folded into store.sqlite: the file alone, copied, holds every episode
    for done in (whole.path, cut.path):
        assert not (done / "store.sqlite-wal").exists()
        assert stored_episodes(done / "store.sqlite", tmp_path / "copy" / done.name) == len(whole.episodes)
    # finished episodes were not played again: the resumed run made fewer calls than a whole run
    assert resumed_model.calls < whole.summary["llm_usage"]["user"]["calls"]


def test_resume_of_a_finished_run_changes_nothing(tmp_path: Path) -> None:
    first = run(small_scenario(), out=tmp_path / "r", models={"user": ultimatum_model()})
    model = ultimatum_model()
    asyncio.run(aresume(tmp_path / "r", models={"user": model}))
    assert model.calls == 0
    pd.testing.assert_frame_equal(first.metrics, RunResult.load(tmp_path / "r").metrics)


def test_garbage_answers_are_recorded_illegal_moves(tmp_path: Path) -> None:
    garbage = scripted([(r"You are the proposer", "I like turtles."), (r"You are the responder", "accept.")])
    result = run(small_scenario(runs=1, epochs=1), out=tmp_path / "g", models={"user": garbage})
    episodes = result.episodes
    assert (~episodes["proposal_legal"]).all()
    assert episodes["proposer_payoff"].isna().all() and episodes["decision"].isna().all()
    assert (episodes["proposal_illegal_answers"] == 2).all()  # the answer and one re-ask
    assert result.summary["illegal_proposals"] == 6
    assert result.summary["illegal_answer_rate"] == 1.0
    # the re-ask carried the parse error back to the model
    reasks = [r for r in transcript(result.path) if r["attempt"] == 1]
    assert reasks and all("could not find both parts" in r["messages"][-1]["content"] for r in reasks)


def test_a_reask_can_recover(tmp_path: Path) -> None:
    def propose_after_reask(messages: list[Any], kwargs: dict[str, Any]) -> str:
        if "not a legal answer" in str(messages[-1].content):
            return "the proposer will get 5, and the responder will get 5"
        return "Half each, obviously."

    model = scripted(
        [
            (r"not a legal answer", propose_after_reask),
            (r"You are the proposer", propose_after_reask),
            (r"You are the responder", "accept."),
        ]
    )
    data = small_scenario(runs=1, epochs=1).model_dump()
    data["game"]["amount"] = {"min": 10, "max": 10}
    from sandbox.core.scenario_files import parse_scenario

    result = run(parse_scenario(data), out=tmp_path / "r", models={"user": model})
    assert result.episodes["proposal_legal"].all()
    assert (result.episodes["proposal_illegal_answers"] == 1).all()
    assert result.summary["illegal_answer_rate"] == pytest.approx(6 / 18)


def test_a_new_run_never_writes_into_a_used_directory(tmp_path: Path) -> None:
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="already exists"):
        run(small_scenario(), out=tmp_path / "used", models={"user": ultimatum_model()})
    assert [p.name for p in (tmp_path / "used").iterdir()] == ["notes.txt"]


def test_a_run_killed_before_it_started_is_run_again(tmp_path: Path) -> None:
    # killed after the scenario's temporary file was written, before it was renamed to scenario.yaml
    out = tmp_path / "killed"
    out.mkdir()
    (out / ".scenario.yaml.4242.tmp").write_text("name: half a scen")
    with pytest.raises(UsageError, match="not a run directory .*killed before it started"):
        asyncio.run(aresume(out, models={"user": ultimatum_model()}))
    result = run(small_scenario(), out=out, models={"user": ultimatum_model()})
    assert result.summary["episodes"] == 2 * 2 * 6
    assert not (out / ".scenario.yaml.4242.tmp").exists()
    # a leftover beside anything else is still a used directory
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / ".scenario.yaml.4242.tmp").write_text("name: half a scen")
    (tmp_path / "used" / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="already exists"):
        run(small_scenario(), out=tmp_path / "used", models={"user": ultimatum_model()})


def test_unknown_role_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown roles"):
        run(small_scenario(), out=tmp_path / "x", models={"cook": ultimatum_model()})
    assert not (tmp_path / "x").exists()


def test_ring_network_society(tmp_path: Path) -> None:
    data = small_scenario(runs=1, epochs=1, interactions_per_epoch=20).model_dump()
    data["society"]["network"] = {"kind": "ring"}
    from sandbox.core.scenario_files import parse_scenario

    result = run(parse_scenario(data), out=tmp_path / "ring", models={"user": ultimatum_model()})
    episodes = result.episodes
    assert len(episodes) == 20
    ids = episodes[["proposer", "responder"]].map(lambda a: int(a.split("-")[1]))
    assert ((ids["proposer"] - ids["responder"]) % 12).isin([1, 11]).all()  # ring neighbours only


def test_drive_resumes_a_superstep_whose_tasks_all_saved_their_writes() -> None:
    """LangGraph reports no `next` when every task of an uncommitted superstep saved its writes;
    the run is still unfinished and must be continued, not taken as done."""
    from types import SimpleNamespace

    from sandbox.society.runner import drive

    calls: list[Any] = []

    class Graph:
        def __init__(self, values: dict[str, Any]) -> None:
            self.values = values

        async def aget_state(self, config: Any) -> Any:
            return SimpleNamespace(values=self.values, next=())

        async def ainvoke(self, state: Any, config: Any, context: Any) -> None:
            calls.append(state)

    asyncio.run(drive(Graph({"epoch": 0, "episodes": [{}]}), None, run=0, epochs=2))  # type: ignore[arg-type]
    assert calls == [None]
    asyncio.run(drive(Graph({"epoch": 2}), None, run=0, epochs=2))  # type: ignore[arg-type]
    assert calls == [None]  # a finished run is left alone
    asyncio.run(drive(Graph({}), None, run=1, epochs=2))  # type: ignore[arg-type]
    assert calls[-1]["run"] == 1 and calls[-1]["epoch"] == 0  # a run never started starts


@pytest.mark.parametrize(
    ("episodes", "sizes"), [(10, [10]), (40, [16, 16, 8]), (64, [16] * 4), (5000, [79] * 63 + [23])]
)
def test_an_epoch_is_played_in_batches_of_at_least_16_and_at_most_64_tasks(episodes: int, sizes: list[int]) -> None:
    tasks = [{"index": i} for i in range(episodes)]
    sends = fan_out({"tasks": tasks})  # type: ignore[typeddict-item]
    assert [len(s.arg["batch"]) for s in sends] == sizes
    assert [t for s in sends for t in s.arg["batch"]] == tasks  # every episode once, in order
