"""`sandbox bench sweep`: a sweep of small society runs on a local Ray with 2 workers, against the same runs one
after another in one process, measured in the same run. Timing figures only.

Every run plays against a loopback OpenAI-compatible server that answers
after a fixed latency (`sandbox.society.loopback_server`, its own process), so a run
spends its time waiting, as a run against a real endpoint does, and the
workers overlap those waits. The sweep's time includes starting Ray and its
workers; both are printed.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.table import Table

__all__ = ["bench_sweep"]


def _sweep_data(url: str, runs: int, epochs: int, workers: int) -> dict[str, Any]:
    base = {
        "name": "bench-sweep",
        "seed": 0,
        "epochs": epochs,
        "concurrency": 64,
        "models": {"user": f"openai:bench@{url}"},
        "society": {"size": 8, "norms": [{"norm": "fair", "proportion": 1.0}]},
    }
    return {"name": "bench-sweep", "sweep": {"base": base, "seeds": runs, "executor": "ray", "workers": workers}}


def bench_sweep(runs: int = 16, workers: int = 2, latency_s: float = 0.2, epochs: int = 5) -> dict[str, Any]:
    """Seconds for `runs` society runs on a local Ray with `workers` workers, and one after another in this process."""
    import ray

    from sandbox.base.local_ray import init_local_ray
    from sandbox.society.benchmarks import console
    from sandbox.society.loopback_server import server_process
    from sandbox.society.runner import arun
    from sandbox.sweep.config import expand, parse_sweep
    from sandbox.sweep.run import start_sweep

    with server_process(latency_s=latency_s) as url, tempfile.TemporaryDirectory() as tmp:
        data = _sweep_data(url, runs, epochs, workers)
        scenarios = [run.scenario for run in expand(*parse_sweep(data, "<bench>", Path(tmp)), "<bench>")]
        started = time.perf_counter()
        for k, scenario in enumerate(scenarios):
            asyncio.run(arun(scenario, out=Path(tmp) / "sequential" / f"run-{k}"))
        sequential = time.perf_counter() - started
        started = time.perf_counter()
        init_local_ray(workers)
        ray_start = time.perf_counter() - started
        try:
            start_sweep(data, "<bench>", Path(tmp), Path(tmp) / "sweep")
        finally:
            ray.shutdown()
        swept = time.perf_counter() - started
    per_run = sequential / runs
    table = Table(
        title=f"Sweep: {runs} society runs ({epochs} epochs, 8 users, {latency_s * 1000:.0f} ms per call) on a "
        f"local Ray with {workers} workers",
        title_justify="left",
    )
    for column in ("setting", "seconds", "ratio"):
        table.add_column(column, justify="left" if column == "setting" else "right")
    table.add_row("one after another in one process (baseline)", f"{sequential:.2f}", "1.00")
    table.add_row(
        f"local Ray, {workers} workers, Ray's start included",
        f"{swept:.2f}",
        f"{sequential / swept:.2f} x faster (ideal {workers})",
    )
    table.add_row("  of which starting Ray", f"{ray_start:.2f}", "")
    table.add_row(
        "  without Ray's start", f"{swept - ray_start:.2f}", f"{sequential / (swept - ray_start):.2f} x faster"
    )
    console.print(table)
    return {
        "runs": runs,
        "workers": workers,
        "sequential_s": sequential,
        "sweep_s": swept,
        "ray_start_s": ray_start,
        "speedup": sequential / swept,
        "per_run_s": per_run,
    }
