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

from sandbox.base.files import read_json
from sandbox.core.scenario_files import parse_scenario
from sandbox.llm.scripted import ScriptedChatModel
from sandbox.scai.scenario import Scenario
from sandbox.society.benchmarks import console, fake_scai_models
from sandbox.society.runner import ProgressHooks, arun


def _scai_society(runs: int, epochs: int, concurrency: int, strategy: str = "single") -> Scenario:
    return parse_scenario(
        {
            "name": "bench-scai",
            "runs": runs,
            "epochs": epochs,
            "concurrency": concurrency,
            "society": {"size": 16, "norms": [{"norm": "fair", "proportion": 1.0}]},
            "assistant": {
                "initial_policy": "Share everything equally with everyone.",
                "final_proposals": 0,
                "revision": {"strategy": strategy, "candidates": 4},
                "interactions": {"user_user": 8, "assistant_proposer": 1, "assistant_responder": 1},
            },
        },
        "<bench>",
    )


async def time_scai(scenario: Scenario, models: dict[str, ScriptedChatModel] | None, with_calls: bool = False) -> Any:
    """Seconds from the first epoch's pairing to the last finished episode of every run.

    `with_calls`: (seconds, calls by role, this process's CPU seconds over the same interval) instead.
    `models` None: the scenario's own specs (the `openai:` path to a loopback server).
    """
    marks: dict[str, float] = {}

    def start(*_: Any) -> None:
        if "start" not in marks:
            marks["start"], marks["cpu_start"] = time.perf_counter(), time.process_time()

    def end(_: Any) -> None:
        marks["end"], marks["cpu_end"] = time.perf_counter(), time.process_time()

    hooks = ProgressHooks(on_epoch_start=start, on_episode=end)
    with tempfile.TemporaryDirectory() as tmp:
        path = await arun(scenario, out=Path(tmp) / "run", models=models, hooks=hooks)
        if not with_calls:
            return marks["end"] - marks["start"]
        usage = read_json(path / "summary.json")["llm_usage"]
        return (
            marks["end"] - marks["start"],
            {role: u["calls"] for role, u in usage.items()},
            marks["cpu_end"] - marks["cpu_start"],
        )


def search_cost(latency_s: float, runs: int, epochs: int) -> dict[str, Any]:
    """The `search` revision (4 candidates) against the single draw: wall time and calls, measured in one process.

    The search adds, per revision, the candidates' draws (concurrent) and
    their replays (concurrent), so its chain grows by one call per revision.
    """
    concurrency = 4 * runs * 10
    single, single_calls, _ = asyncio.run(
        time_scai(_scai_society(runs, epochs, concurrency), fake_scai_models(latency_s), True)
    )
    search, search_calls, _ = asyncio.run(
        time_scai(_scai_society(runs, epochs, concurrency, "search"), fake_scai_models(latency_s), True)
    )
    table = Table(
        title="SCAI revision: search (4 candidates and the current policy, replayed) against the single draw",
        title_justify="left",
    )
    for column in ("revision", "seconds", "calls (user / assistant / meta)", "chain of calls"):
        table.add_column(column, justify="left" if column == "revision" else "right")
    for name, seconds, calls, chain in (
        ("single (the paper's)", single, single_calls, epochs * 3 - 1),
        ("search", search, search_calls, epochs * 3 - 1 + epochs - 1),
    ):
        table.add_row(
            name,
            f"{seconds:.3f}",
            f"{sum(calls.values())} ({calls.get('user', 0)} / {calls.get('assistant', 0)} / {calls.get('meta', 0)})",
            str(chain),
        )
    table.add_row(
        "search / single",
        f"{search / single:.2f} x",
        f"{sum(search_calls.values()) / sum(single_calls.values()):.2f} x",
        f"{(epochs * 4 - 2) / (epochs * 3 - 1):.2f} x",
    )
    console.print(table)
    return {
        "single_s": single,
        "search_s": search,
        "single_calls": single_calls,
        "search_calls": search_calls,
        "time_ratio": search / single,
        "calls_ratio": sum(search_calls.values()) / sum(single_calls.values()),
    }


def http_scenario(runs: int, epochs: int, url: str) -> Scenario:
    """The benchmark's society with every role on `openai:bench` at `url` (a loopback `sandbox.society.loopback_server`)."""
    data = _scai_society(runs, epochs, 4 * runs * 10).model_dump(mode="json")
    data["models"] = {role: f"openai:bench@{url}" for role in ("user", "assistant", "meta")}
    return parse_scenario(data, "<bench>")


def bench_scai(latency_s: float = 0.2, runs: int = 20, epochs: int = 5, repeats: int = 3) -> dict[str, Any]:
    """SCAI: `runs` runs of `epochs` epochs (8 user-user + 2 assistant-user) against the critical path.

    The critical path is epochs x the longest chain of dependent calls in an
    epoch (propose, respond, then the MetaLM's revision: 3 calls) x the
    latency. The last epoch has no revision, so the true chain is one call
    shorter; both are printed. The concurrent run is timed `repeats` times
    and judged by the median (a 2-core machine's scheduling noise is about
    10%). The baseline is the same scenario run with one call at a time.

    The same runs then go over real HTTP: the `openai:` backend against a
    loopback OpenAI-compatible server in its own process
    (`sandbox.society.loopback_server`) that answers after the same latency. Both cases
    report the client's CPU per call (this process's CPU time over the timed
    interval, divided by the calls): the framework's cost per call on each path.
    """
    from sandbox.society.loopback_server import server_process

    calls = runs * (epochs * 2 * 10 + (epochs - 1))
    critical = epochs * 3 * latency_s
    chain = (epochs * 3 - 1) * latency_s
    scripted = sorted(
        (
            asyncio.run(time_scai(_scai_society(runs, epochs, 4 * runs * 10), fake_scai_models(latency_s), True))
            for _ in range(repeats)
        ),
        key=lambda r: r[0],
    )
    times = [r[0] for r in scripted]
    concurrent = statistics.median(times)
    scripted_cpu_ms = statistics.median(r[2] / sum(r[1].values()) * 1000 for r in scripted)
    with server_process(latency_s=latency_s, rules="scai") as url:
        http = sorted(
            (asyncio.run(time_scai(http_scenario(runs, epochs, url), None, True)) for _ in range(repeats)),
            key=lambda r: r[0],
        )
    http_times = [r[0] for r in http]
    over_http = statistics.median(http_times)
    http_cpu_ms = statistics.median(r[2] / sum(r[1].values()) * 1000 for r in http)
    sequential = asyncio.run(time_scai(_scai_society(runs, epochs, 1), fake_scai_models(latency_s)))
    table = Table(
        title=f"SCAI: {runs} runs x {epochs} epochs, 8+2 interactions, {latency_s * 1000:.0f} ms per call, "
        f"{calls} calls",
        title_justify="left",
    )
    for column in ("setting", "seconds", "ratio", "client CPU per call"):
        table.add_column(column, justify="left" if column == "setting" else "right")
    table.add_row(f"critical path ({epochs} epochs x 3 calls x latency)", f"{critical:.3f}", "1.00", "")
    table.add_row(
        f"exact chain ({epochs * 3 - 1} calls: no revision after the last epoch)",
        f"{chain:.3f}",
        f"{chain / critical:.2f}",
        "",
    )
    table.add_row(
        f"scripted model, all runs concurrently, median of {repeats}",
        f"{concurrent:.3f}",
        f"{concurrent / critical:.2f} x critical path (target <= 1.3)",
        f"{scripted_cpu_ms:.2f} ms",
    )
    table.add_row(
        f"  each of the {repeats}",
        " ".join(f"{t:.2f}" for t in times),
        " ".join(f"{t / critical:.2f}" for t in times),
        "",
    )
    table.add_row(
        f"openai: over loopback HTTP, median of {repeats}",
        f"{over_http:.3f}",
        f"{over_http / chain:.2f} x chain (target <= 1.3)",
        f"{http_cpu_ms:.2f} ms (target < 2)",
    )
    table.add_row(
        f"  each of the {repeats}",
        " ".join(f"{t:.2f}" for t in http_times),
        " ".join(f"{t / chain:.2f}" for t in http_times),
        "",
    )
    table.add_row(
        "sequential (one call at a time)",
        f"{sequential:.3f}",
        f"{sequential / concurrent:.1f} x concurrent (expected {calls * latency_s / critical:.0f})",
        "",
    )
    console.print(table)
    return {
        "critical_s": critical,
        "chain_s": chain,
        "concurrent_s": concurrent,
        "concurrent_runs_s": times,
        "sequential_s": sequential,
        "ratio_to_critical": concurrent / critical,
        "speedup": sequential / concurrent,
        "scripted_cpu_ms_per_call": scripted_cpu_ms,
        "http_s": over_http,
        "http_runs_s": http_times,
        "http_ratio_to_chain": over_http / chain,
        "http_cpu_ms_per_call": http_cpu_ms,
        "search": search_cost(latency_s, runs, epochs),
    }
