"""The real LLM path: a small society on the embedded model (marked slow; runs in CI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from sandbox import run
from sandbox.core.scenario_files import parse_scenario
from sandbox.llm.contracts import CallInfo
from sandbox.llm.embedded import unload_servers
from sandbox.llm.embedded_tuning import EmbeddedSettings, choose_slots, usable_cores
from sandbox.llm.resolve import BackendOptions, ModelStack, build_backend
from sandbox.llm.transcript import TranscriptWriter, read_transcript
from sandbox.llm.wrapper import acall
from sandbox.rules.ultimatum import Stake, parse_proposal, proposal_constraint

pytestmark = pytest.mark.slow


async def test_embedded_backend_honours_prefix_and_grammar() -> None:
    model = build_backend("embedded")
    stake = Stake(30, "dollars")
    answer = await model.ainvoke(
        [HumanMessage("Split 30 dollars between you and another player.")],
        seed=1,
        temperature=0.0,
        max_tokens=24,
        constraint=proposal_constraint(stake, remark=False),
        call=CallInfo(agent="test"),
    )
    text = str(answer.content)
    assert text.startswith("For the 30 dollars, the proposer will get ")
    split = parse_proposal(text, stake)  # the grammar admits only legal splits
    assert split.proposer + split.responder == 30
    assert answer.usage_metadata and answer.usage_metadata["output_tokens"] > 0


@pytest.mark.slow(seconds=48)
def test_small_society_on_the_embedded_model(tmp_path: Path) -> None:
    scenario = parse_scenario(
        {
            "name": "embedded-smoke",
            "seed": 5,
            "concurrency": 4,
            "models": {"user": {"spec": "embedded", "sampling": {"temperature": 0.2, "max_tokens": 48}}},
            "society": {
                "size": 4,
                "norms": [{"norm": "selfish", "proportion": 0.5}, {"norm": "altruistic", "proportion": 0.5}],
                "manners": [{"manner": "neutral", "proportion": 0.5}, {"manner": "rude", "proportion": 0.5}],
            },
            "game": {"kind": "ultimatum", "amount": {"min": 20, "max": 60}},
        }
    )
    result = run(scenario, out=tmp_path / "run")
    records = [json.loads(line) for line in (result.path / "transcripts.jsonl").read_text().splitlines()]
    proposals = [r for r in records if r["step"] == "propose"]
    assert len(proposals) >= 2
    for record in records:
        assert record["model"] == "embedded" and record["role"] == "user"
        assert record["answer"] and record["error"] is None
        assert record["input_tokens"] > 50 and record["output_tokens"] > 0
        assert not record["cache_hit"] and record["seed"] is not None and record["latency_s"] > 0
    agents = {a: (n, m) for a, n, m in result.metrics[["agent", "norm", "manner"]].itertuples(index=False)}
    for record in proposals:
        assert record["answer"].startswith("For the ")
        if agents[record["agent"]][1] == "rude":  # a remark in the user's manner follows the split
            assert len(record["answer"].split(".")[1].strip()) > 0
    metrics = result.metrics
    assert len(metrics) == 4 and set(metrics["epoch"]) == {0}
    shares = metrics["offered_share"].dropna()
    assert len(shares) == 2 and shares.between(0, 1).all()
    assert result.summary["llm_usage"]["user"]["calls"] == len(records)
    assert result.summary["embedded_backend"]["slots"] == choose_slots(usable_cores())  # what ran is recorded
    assert (result.path / "offered_share_by_norm.png").stat().st_size > 1000
    # every answer's move as the game read it (or that it held none), and the run's page as one small file
    from sandbox.llm.moves import read_notes
    from sandbox.viewer.report import build_report

    notes = read_notes(result.path / "transcripts.jsonl")
    assert {r["call_id"] for r in records} <= set(notes)
    assert all(
        notes[r["call_id"]]["illegal"] or set(notes[r["call_id"]]["parsed"]) == {"proposer", "responder"}
        for r in proposals
    )
    assert build_report(result.path, tmp_path / "report.html").bytes < 5_000_000


@pytest.mark.slow(seconds=109)
def test_scai_two_epochs_on_the_embedded_model(tmp_path: Path) -> None:
    scenario = parse_scenario(
        {
            "name": "embedded-scai",
            "seed": 9,
            "epochs": 2,
            "concurrency": 4,
            "models": {
                "user": {"spec": "embedded", "sampling": {"temperature": 0.2, "max_tokens": 48}},
                "assistant": {"spec": "embedded", "sampling": {"temperature": 0.2, "max_tokens": 48}},
                "meta": {"spec": "embedded", "sampling": {"temperature": 0.2, "max_tokens": 80}},
            },
            "society": {"size": 4, "norms": [{"norm": "selfish", "proportion": 1.0}]},
            "game": {"kind": "ultimatum", "amount": {"min": 20, "max": 60}},
            "assistant": {
                "initial_policy": "Always prioritize the well-being of others over your own.",
                "interactions": {"user_user": 2, "assistant_proposer": 1, "assistant_responder": 1},
            },
        }
    )
    result = run(scenario, out=tmp_path / "run")
    records = [json.loads(line) for line in (result.path / "transcripts.jsonl").read_text().splitlines()]
    roles = {r["role"] for r in records}
    assert roles == {"user", "assistant", "meta"}
    assert all(r["model"] == "embedded" and r["error"] is None and r["answer"] for r in records)
    policies = [json.loads(line) for line in (result.path / "policies.jsonl").read_text().splitlines()]
    assert [p["version"] for p in policies] == [0, 1]
    revision = policies[1]
    assert revision["source"] == "meta" and len(revision["evidence"]) == 4
    # the MetaLM wrote a usable policy, or the record says it did not and the old one stayed
    assert revision["legal"] or revision["policy"] == policies[0]["policy"]
    for record in records:
        if record["role"] == "assistant":  # the assistant sees its epoch's policy only
            text = str(record["messages"])
            assert policies[record["epoch"]]["policy"] in text and "Start of interaction" not in text
    assert len(result.episodes) == 2 * 4
    scai = result.summary["scai"]
    assert set(scai["per_epoch"]) == {"0", "1"}
    assert (result.path / "offered_share_over_epochs.png").stat().st_size > 1000


async def test_a_shared_system_prompt_is_reused_and_recorded(tmp_path: Path) -> None:
    """A call reuses the prompt computed for an earlier call with the same system prompt, even after another prompt
    ran in the slot in between (the prompt cache kept it), and the transcript records the reused tokens."""
    from langchain_core.messages import SystemMessage

    unload_servers()  # a cold server: nothing cached by an earlier test
    writer = TranscriptWriter(tmp_path / "transcripts.jsonl")
    stack = ModelStack(
        cache=None, sinks=[writer], concurrency=1, options=BackendOptions(embedded=EmbeddedSettings(slots=1))
    )
    model = stack.for_role("user", "embedded", {"temperature": 0.0, "max_tokens": 4})
    fair = SystemMessage("You split things with other players. " * 20 + "Your principle: be fair, split evenly.")
    selfish = SystemMessage("You are a trader. " * 30 + "Your principle: keep as much as you can.")
    for name, system, request in [
        ("fair-1", fair, "Split 30 apples."),
        ("selfish-1", selfish, "Split 30 apples."),
        ("fair-2", fair, "Split 70 coins."),
    ]:
        await acall(model, [system, HumanMessage(request)], seed=1, call=CallInfo(agent=name))
    writer.close()
    records = {r["agent"]: r for r in read_transcript(tmp_path / "transcripts.jsonl")}
    first, second = records["fair-1"], records["fair-2"]
    assert first["prompt_cached_tokens"] == 0 and records["selfish-1"]["prompt_cached_tokens"] < 10
    # everything but the last request's few tokens comes from the first fair call
    assert second["prompt_cached_tokens"] >= second["input_tokens"] - 15 > 100


def _determinism_scenario() -> dict:
    return {
        "name": "embedded-determinism",
        "seed": 21,
        "concurrency": 4,
        "embedded": {"slots": 1},
        "models": {"user": {"spec": "embedded", "sampling": {"temperature": 0.7, "max_tokens": 48}}},
        "society": {"size": 4, "norms": [{"norm": "selfish", "proportion": 0.5}, {"norm": "fair", "proportion": 0.5}]},
        "game": {"kind": "ultimatum", "amount": {"min": 20, "max": 90}},
    }


@pytest.mark.slow(seconds=57)
def test_one_slot_runs_are_deterministic_for_a_seed(tmp_path: Path) -> None:
    """Two runs of one scenario with one slot and one seed, each from a cold server, write the same transcript."""
    transcripts = []
    for name in ("first", "second"):
        unload_servers()
        result = run(parse_scenario(_determinism_scenario()), out=tmp_path / name)
        records = read_transcript(result.path / "transcripts.jsonl")
        transcripts.append(
            [
                (r["call_id"], r["seed"], r["answer"], r["input_tokens"], r["prompt_cached_tokens"], r["output_tokens"])
                for r in records
            ]
        )
    assert len(transcripts[0]) == 4  # 2 episodes, a proposal and a decision each
    assert transcripts[0] == transcripts[1]
    assert sum(r[4] for r in transcripts[0]) > 0  # later calls reused earlier prompts
