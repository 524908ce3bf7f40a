"""Budgets: a cap on calls, tokens or dollars stops a run cleanly, and a resume with a higher cap ends with the same
results as an uninterrupted run; a sweep's ledger is shared between processes; the dry run counts the calls."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sandbox import RunResult
from sandbox.cli.runs import app
from sandbox.llm.budget import Budget, BudgetExhaustedError, Ledger, Price, Spent, refused, spent_in_transcript
from sandbox.llm.scripted import scripted
from sandbox.scai.dry_run import dry_run
from sandbox.society.runner import aresume, arun
from tests.conftest import scripted_propose, scripted_respond, small_scenario, ultimatum_model

runner = CliRunner()


def test_a_ledger_refuses_at_each_cap() -> None:
    ledger = Ledger(Budget(calls=2))
    ledger.reserve()
    ledger.reserve()
    with pytest.raises(BudgetExhaustedError, match="calls cap 2 reached"):
        ledger.reserve()
    tokens = Ledger(Budget(tokens=100), Spent(calls=3, tokens=90))
    tokens.reserve()  # 90 < 100: the call may go; what it spends is settled after
    tokens.settle(20, 0.0)
    with pytest.raises(BudgetExhaustedError, match="tokens cap 100 reached \\(110 spent\\)"):
        tokens.reserve()
    price = Price(input=2.0, output=8.0)
    assert price.cost(1_000_000, 500_000) == pytest.approx(6.0)
    spent = spent_in_transcript(
        [
            {"role": "user", "cache_hit": False, "input_tokens": 10, "output_tokens": 5},
            {"role": "user", "cache_hit": True, "input_tokens": 10, "output_tokens": 5},
            {
                "role": "user",
                "cache_hit": False,
                "input_tokens": 0,
                "output_tokens": 0,
                "error": "BudgetExhaustedError: the run budget's calls cap 1 reached",
            },
        ],
        {"user": price},
    )
    assert (spent.calls, spent.tokens, spent.usd) == (1, 15, pytest.approx(60e-6))


WORKER = """
import sys
from sandbox.llm.budget import Budget, BudgetExhaustedError, FileLedger
ledger = FileLedger(Budget(calls=int(sys.argv[2])), sys.argv[1])
made = 0
try:
    while True:
        ledger.reserve()
        ledger.settle(3, 0.0)
        made += 1
except BudgetExhaustedError:
    print(made)
"""


def test_a_sweep_ledger_is_exact_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "budget.json"
    workers = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(path), "60"], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    made = [int(w.communicate()[0]) for w in workers]
    assert sum(made) == 60  # never more calls than the cap, however the workers interleave
    assert json.loads(path.read_text()) == {"calls": 60, "tokens": 180, "usd": 0.0}


def test_a_call_cap_stops_the_run_and_a_higher_cap_finishes_it_with_the_same_results(tmp_path: Path) -> None:
    scenario = small_scenario(runs=2, epochs=3)
    whole = asyncio.run(arun(scenario, out=tmp_path / "whole", models={"user": ultimatum_model()}))
    calls = RunResult.load(whole).summary["llm_usage"]["user"]["calls"]
    capped = scenario.model_copy(update={"budget": Budget(calls=calls // 3)})
    with pytest.raises(BudgetExhaustedError, match="calls cap"):
        asyncio.run(arun(capped, out=tmp_path / "cut", models={"user": ultimatum_model()}))
    status = json.loads((tmp_path / "cut" / "run.json").read_text())
    assert status["status"] == "stopped" and "calls cap" in status["reason"]
    records = [json.loads(line) for line in (tmp_path / "cut" / "transcripts.jsonl").read_text().splitlines()]
    assert sum(not r["cache_hit"] and not refused(r) for r in records) == calls // 3  # the call cap is exact
    assert any(refused(r) for r in records)  # the refused calls are in the transcript, as failed calls
    with pytest.raises(BudgetExhaustedError):  # the same cap again: nothing left to spend
        asyncio.run(aresume(tmp_path / "cut", models={"user": ultimatum_model()}))
    asyncio.run(aresume(tmp_path / "cut", models={"user": ultimatum_model()}, budget=Budget(calls=10 * calls)))
    a, b = RunResult.load(whole), RunResult.load(tmp_path / "cut")
    pd.testing.assert_frame_equal(a.metrics, b.metrics)
    pd.testing.assert_frame_equal(a.episodes, b.episodes)
    assert yaml.safe_load((tmp_path / "cut" / "scenario.yaml").read_text())["budget"]["calls"] == 10 * calls


def test_the_calls_in_flight_when_a_cap_is_reached_finish_and_are_in_the_transcript(tmp_path: Path) -> None:
    # 6 proposals at once under a cap of 3: three are reserved and sent (each takes 0.2 s), three are refused at once
    scenario = small_scenario(runs=1, epochs=1, budget={"calls": 3})
    model = scripted(
        [(r"You are the proposer", scripted_propose), (r"You are the responder", scripted_respond)], latency_s=0.2
    )
    with pytest.raises(BudgetExhaustedError, match="calls cap 3"):
        asyncio.run(arun(scenario, out=tmp_path / "cut", models={"user": model}))
    records = [json.loads(line) for line in (tmp_path / "cut" / "transcripts.jsonl").read_text().splitlines()]
    sent = [r for r in records if not refused(r)]
    # the run stopped once they had finished: each is in the transcript with its answer (and in the cache)
    assert model.calls == len(sent) == 3 and all(r["answer"] and r["error"] is None for r in sent)


def test_a_token_cap_and_a_dollar_cap_stop_a_run(tmp_path: Path) -> None:
    for budget, words in ((Budget(tokens=500), "tokens cap"), (Budget(usd=0.001), "usd cap")):
        scenario = small_scenario(
            budget=budget.model_dump(), models={"user": {"spec": "embedded", "price": {"input": 2.0, "output": 8.0}}}
        )
        with pytest.raises(BudgetExhaustedError, match=words):
            asyncio.run(arun(scenario, out=tmp_path / words.split()[0], models={"user": ultimatum_model()}))


def test_the_cli_stops_with_exit_3_and_resumes_with_a_higher_cap(tmp_path: Path) -> None:
    from tests.loopback_openai import loopback_openai
    from tests.test_kill_and_resume import SCENARIO, answer

    file = tmp_path / "s.yaml"
    with loopback_openai(answer) as server:
        file.write_text(yaml.safe_dump({**SCENARIO, "models": {"user": f"openai:loopback@{server.url}"}}))
        result = runner.invoke(app, ["run", str(file), "--out", str(tmp_path / "run"), "--max-calls", "7"])
        assert result.exit_code == 3, result.output
        assert "calls cap 7 reached" in " ".join(result.output.split())
        records = [json.loads(line) for line in (tmp_path / "run" / "transcripts.jsonl").read_text().splitlines()]
        sent = [r for r in records if not r["cache_hit"] and not refused(r)]
        # The cap counts the calls it lets past the cache (a call and its retries once). When it refuses one, the
        # play step lets its other episodes' calls end before the run stops, so each of the 7 calls it let through
        # was sent and answered, and the transcript holds it: the server saw exactly those 7 (a retry resends the
        # same body), no more and no fewer. Before, a failed step's other calls outlived it, and either one was
        # cancelled unsent and recorded as made (the server saw 6), or one reached the server after the transcript
        # closed and was lost from it.
        assert len(sent) == 7 and all(r["answer"] and r["error"] is None for r in sent)
        assert len({json.dumps(body, sort_keys=True) for body in server.requests}) == 7
        result = runner.invoke(app, ["resume", str(tmp_path / "run"), "--max-calls", "1000"])
        assert result.exit_code == 0, result.output
    assert (tmp_path / "run" / "summary.json").is_file()


def test_the_dry_run_counts_the_calls_of_a_run_whose_answers_are_all_legal(tmp_path: Path) -> None:
    scenario = small_scenario(runs=2, epochs=2)
    real = RunResult.load(asyncio.run(arun(scenario, out=tmp_path / "real", models={"user": ultimatum_model()})))
    table = dry_run(scenario).set_index("role")
    assert table.loc["user", "calls"] == real.summary["llm_usage"]["user"]["calls"]
    assert table.loc["user", "prompt_tokens"] > 0
    assert table.loc["user", "max_answer_tokens"] == (table.loc["user", "calls"] - table.loc["user", "cache_hits"]) * 96
    result = runner.invoke(
        app,
        [
            "run",
            "--dry-run",
            str(Path(__file__).parents[1] / "scenarios" / "default.yaml"),
            "--out",
            str(tmp_path / "never"),
        ],
    )
    assert result.exit_code == 0 and "no model called" in result.output and not (tmp_path / "never").exists()


def test_a_labeling_run_stops_at_its_cap_and_a_higher_one_finishes_it(tmp_path: Path) -> None:
    from sandbox.core.scenario_files import parse_kind
    from sandbox.llm.scripted import scripted
    from sandbox.proxy.label_run import label_scenario, resume_labeling
    from tests.test_proxy_label import rule_judge, scenario

    capped = parse_kind("proxy", {**scenario().model_dump(mode="json"), "budget": {"calls": 5}})
    whole = label_scenario(scenario(), tmp_path / "whole", models={"judge": scripted([(r"Ultimatum", rule_judge)])})
    with pytest.raises(BudgetExhaustedError, match="calls cap 5"):
        label_scenario(capped, tmp_path / "cut", models={"judge": scripted([(r"Ultimatum", rule_judge)])})
    assert json.loads((tmp_path / "cut" / "run.json").read_text())["status"] == "stopped"
    result = runner.invoke(app, ["resume", str(tmp_path / "cut"), "--max-calls", "1000", "--device", "cpu"])
    assert result.exit_code == 2 and "--device: not an option for" in result.output and "a label run" in result.output
    assert (
        "budget" not in yaml.safe_load((tmp_path / "cut" / "scenario.yaml").read_text())
        or yaml.safe_load((tmp_path / "cut" / "scenario.yaml").read_text())["budget"]["calls"] == 5
    )  # options are checked first
    from sandbox.core.budget import set_budget

    set_budget(tmp_path / "cut", Budget(calls=1000))
    resume_labeling(tmp_path / "cut", models={"judge": scripted([(r"Ultimatum", rule_judge)])})
    pd.testing.assert_frame_equal(pd.read_csv(whole / "labels.csv"), pd.read_csv(tmp_path / "cut" / "labels.csv"))


def test_a_solve_stops_at_its_cap_and_a_higher_one_finishes_it(tmp_path: Path) -> None:
    from sandbox.core.budget import set_budget
    from sandbox.dialogue.run import resume_solve, solve_scenario
    from tests.dialogue_helpers import ultimatum_model as dialogue_model
    from tests.test_dialogue import dialogue_scenario

    model = dialogue_model()
    whole = solve_scenario(dialogue_scenario(), tmp_path / "whole", models={"players": model, "judge": model})
    with pytest.raises(BudgetExhaustedError, match="calls cap 4"):
        solve_scenario(
            dialogue_scenario(budget={"calls": 4}), tmp_path / "cut", models={"players": model, "judge": model}
        )
    assert json.loads((tmp_path / "cut" / "run.json").read_text())["status"] == "stopped"
    set_budget(tmp_path / "cut", Budget(calls=1000))
    model = dialogue_model()
    resume_solve(tmp_path / "cut", models={"players": model, "judge": model})
    pd.testing.assert_frame_equal(pd.read_csv(whole / "policy.csv"), pd.read_csv(tmp_path / "cut" / "policy.csv"))
