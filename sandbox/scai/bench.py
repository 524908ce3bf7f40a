"""`sandbox bench scai`: SCAI runs on a fake model at a fixed latency, against the critical path and a sequential
run; then the `search` revision against the paper's single draw, in calls and wall time. Timing figures only."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.table import Table

from sandbox.bench import _propose, console
from sandbox.llm.scripted import ScriptedChatModel, scripted
from sandbox.runner import ProgressHooks, arun
from sandbox.scenario import Scenario
from sandbox.scenario_file import parse_scenario
from sandbox.files import read_json


def _principle(_: list[Any], kwargs: dict[str, Any]) -> str:
    """The single draw's principle; a search's candidate k gets its own words, so each is replayed."""
    step = kwargs["call"].step or ""
    variant = f" Candidate {step.split('-')[-1]}." if step.startswith("candidate-") else ""
    return f"Revised principle: Share everything equally with everyone.{variant}"


def fake_scai_models(latency_s: float) -> dict[str, ScriptedChatModel]:
    """One scripted model for the user, assistant and meta roles, sleeping `latency_s` per call (timing only).

    One object, so the roles share one concurrency limit, as they share the
    embedded backend in a real run (and "sequential" means one call at a time).
    """
    model = scripted(
        [(r"extract a principle", _principle), (r"You are the proposer", _propose), (r"You are the responder", "yes")],
        latency_s=latency_s,
    )
    return {"user": model, "assistant": model, "meta": model}


def _scai_society(runs: int, epochs: int, concurrency: int, strategy: str = "single") -> Scenario:
    return parse_scenario(
        {
            "name": "bench-scai", "runs": runs, "epochs": epochs, "concurrency": concurrency,
            "society": {"size": 16, "norms": [{"norm": "fair", "proportion": 1.0}]},
            "assistant": {"initial_policy": "Share everything equally with everyone.", "final_proposals": 0,
                          "revision": {"strategy": strategy, "candidates": 4},
                          "interactions": {"user_user": 8, "assistant_proposer": 1, "assistant_responder": 1}},
        },
        "<bench>",
    )  # fmt: skip


async def time_scai(scenario: Scenario, models: dict[str, ScriptedChatModel], with_calls: bool = False) -> Any:
    """Seconds from the first epoch's pairing to the last finished episode of every run.

    `with_calls`: (seconds, calls by role) instead.
    """
    marks: dict[str, float] = {}
    hooks = ProgressHooks(
        on_epoch_start=lambda *_: marks.setdefault("start", time.perf_counter()),
        on_episode=lambda _: marks.__setitem__("end", time.perf_counter()),
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = await arun(scenario, out=Path(tmp) / "run", models=models, hooks=hooks)
        if not with_calls:
            return marks["end"] - marks["start"]

        usage = read_json(path / "summary.json")["llm_usage"]
        return marks["end"] - marks["start"], {role: u["calls"] for role, u in usage.items()}


def search_cost(latency_s: float, runs: int, epochs: int) -> dict[str, Any]:
    """The `search` revision (4 candidates) against the single draw: wall time and calls, measured in one process.

    The search adds, per revision, the candidates' draws (concurrent) and
    their replays (concurrent), so its chain grows by one call per revision.
    """
    concurrency = 4 * runs * 10
    single, single_calls = asyncio.run(time_scai(_scai_society(runs, epochs, concurrency), fake_scai_models(latency_s), True))
    search, search_calls = asyncio.run(
        time_scai(_scai_society(runs, epochs, concurrency, "search"), fake_scai_models(latency_s), True)
    )
    table = Table(title="SCAI revision: search (4 candidates and the current policy, replayed) against the single draw",
                  title_justify="left")  # fmt: skip
    for column in ("revision", "seconds", "calls (user / assistant / meta)", "chain of calls"):
        table.add_column(column, justify="left" if column == "revision" else "right")
    for name, seconds, calls, chain in (("single (the paper's)", single, single_calls, epochs * 3 - 1),
                                        ("search", search, search_calls, epochs * 3 - 1 + epochs - 1)):  # fmt: skip
        table.add_row(name, f"{seconds:.3f}", f"{sum(calls.values())} ({calls.get('user', 0)} / "
                      f"{calls.get('assistant', 0)} / {calls.get('meta', 0)})", str(chain))  # fmt: skip
    table.add_row("search / single", f"{search / single:.2f} x",
                  f"{sum(search_calls.values()) / sum(single_calls.values()):.2f} x",
                  f"{(epochs * 4 - 2) / (epochs * 3 - 1):.2f} x")  # fmt: skip
    console.print(table)
    return {"single_s": single, "search_s": search, "single_calls": single_calls, "search_calls": search_calls,
            "time_ratio": search / single, "calls_ratio": sum(search_calls.values()) / sum(single_calls.values())}


def bench_scai(latency_s: float = 0.2, runs: int = 20, epochs: int = 5, repeats: int = 3) -> dict[str, Any]:
    """SCAI: `runs` runs of `epochs` epochs (8 user-user + 2 assistant-user) against the critical path.

    The critical path is epochs x the longest chain of dependent calls in an
    epoch (propose, respond, then the MetaLM's revision: 3 calls) x the
    latency. The last epoch has no revision, so the true chain is one call
    shorter; both are printed. The concurrent run is timed `repeats` times
    and judged by the median (a 2-core machine's scheduling noise is about
    10%). The baseline is the same scenario run with one call at a time.
    """
    calls = runs * (epochs * 2 * 10 + (epochs - 1))
    critical = epochs * 3 * latency_s
    chain = (epochs * 3 - 1) * latency_s
    times = sorted(
        asyncio.run(time_scai(_scai_society(runs, epochs, 4 * runs * 10), fake_scai_models(latency_s)))
        for _ in range(repeats)
    )
    concurrent = statistics.median(times)
    sequential = asyncio.run(time_scai(_scai_society(runs, epochs, 1), fake_scai_models(latency_s)))
    table = Table(title=f"SCAI: {runs} runs x {epochs} epochs, 8+2 interactions, {latency_s * 1000:.0f} ms per call, "
                        f"{calls} calls", title_justify="left")  # fmt: skip
    for column in ("setting", "seconds", "ratio"):
        table.add_column(column, justify="left" if column == "setting" else "right")
    table.add_row(f"critical path ({epochs} epochs x 3 calls x latency)", f"{critical:.3f}", "1.00")
    table.add_row(f"exact chain ({epochs * 3 - 1} calls: no revision after the last epoch)", f"{chain:.3f}",
                  f"{chain / critical:.2f}")  # fmt: skip
    table.add_row(f"all runs concurrently, median of {repeats}", f"{concurrent:.3f}",
                  f"{concurrent / critical:.2f} x critical path (target <= 1.3)")  # fmt: skip
    table.add_row(f"  each of the {repeats}", " ".join(f"{t:.2f}" for t in times),
                  " ".join(f"{t / critical:.2f}" for t in times))  # fmt: skip
    table.add_row("sequential (one call at a time)", f"{sequential:.3f}",
                  f"{sequential / concurrent:.1f} x concurrent (expected {calls * latency_s / critical:.0f})")  # fmt: skip
    console.print(table)
    return {"critical_s": critical, "chain_s": chain, "concurrent_s": concurrent, "concurrent_runs_s": times,
            "sequential_s": sequential, "ratio_to_critical": concurrent / critical,
            "speedup": sequential / concurrent, "search": search_cost(latency_s, runs, epochs)}  # fmt: skip
