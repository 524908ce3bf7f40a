"""`sandbox bench pool`: a society run over two loopback OpenAI-compatible servers, one failing every third call,
against the same run on one healthy server: the split, the fail-overs, and whether anything was lost.

Timing and bookkeeping figures only; the servers answer from the benchmarks' scripted rules.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from rich.table import Table

__all__ = ["bench_pool"]


def bench_pool(runs: int = 4, epochs: int = 3, latency_s: float = 0.05) -> dict[str, Any]:
    """Play the SCAI benchmark society over a pool of two servers (B fails every third call) and over one."""
    from sandbox.core.result import RunResult
    from sandbox.scai.bench import http_scenario
    from sandbox.society.benchmarks import console
    from sandbox.society.loopback_server import server_process
    from sandbox.society.runner import arun

    with tempfile.TemporaryDirectory() as tmp, server_process(latency_s=latency_s, rules="scai") as healthy:
        one = RunResult.load(asyncio.run(arun(http_scenario(runs, epochs, healthy), out=Path(tmp) / "one")))
        with server_process(latency_s=latency_s, rules="scai", fail_every=3) as flaky:
            pooled = RunResult.load(
                asyncio.run(arun(http_scenario(runs, epochs, f"{healthy},{flaky}"), out=Path(tmp) / "pool"))
            )
        every = pooled.transcripts
        calls = every[~every["cache_hit"].astype(bool)]  # what reached a server (a policy's reading repeats: cached)
        answered = calls["endpoint"].map({healthy: "A (healthy)", flaky: "B (fails every third)"}).value_counts()
        failovers = calls["endpoint_failures"].dropna()
        same = one.metrics.equals(pooled.metrics) and one.episodes.equals(pooled.episodes)
        lost = int(calls["answer"].isna().sum())
        figures = {
            "calls": len(calls),
            "answered_by": answered.to_dict(),
            "failed_over": len(failovers),
            "failures_seen": int(sum(len(f) for f in failovers)),
            "same_results_as_one_server": same,
            "unanswered": lost,
            "calls_one_server": int((~one.transcripts["cache_hit"].astype(bool)).sum()),
        }
    table = Table(
        title=f"Endpoint pool: {runs} SCAI runs x {epochs} epochs over two loopback servers "
        f"({latency_s * 1000:.0f} ms), B failing every third call",
        title_justify="left",
    )
    for column in ("measure", "value"):
        table.add_column(column, justify="left" if column == "measure" else "right")
    table.add_row("calls (one healthy server: same run)", f"{figures['calls']} ({figures['calls_one_server']})")
    for name, count in sorted(figures["answered_by"].items()):
        table.add_row(f"answered by {name}", f"{count} ({count / figures['calls']:.0%})")
    table.add_row("calls that failed over (B failed, then A answered)", str(figures["failed_over"]))
    table.add_row("unanswered calls", str(lost))
    table.add_row("results equal to the one-server run (metrics, episodes)", "yes" if same else "NO")
    console.print(table)
    return figures
