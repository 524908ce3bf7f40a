"""`sandbox bench population`: one generation of a large scripted population, against a bare loop.

The framework's generation (play every neighbour through the match table,
Fermi imitation, the tables written, the state checkpointed) is timed against
a bare Python loop over the same per-agent work (each agent sums its
neighbours' payoffs from the same table and makes the same Fermi draw),
measured in the same run; memory per agent is the peak traced memory
(tracemalloc) of a second, untimed run over the agents. The generation's
seconds include writing its 10,000 rows of `population.csv`.
"""

from __future__ import annotations

import math
import random
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["bench_population"]


def _scenario(agents: int, generations: int) -> Any:
    from sandbox.scenario_file import parse_kind

    return parse_kind("population", {"name": "bench-population", "seed": 0, "population": {
        "agents": agents, "generations": generations,
        "members": [{"strategy": "Cooperator", "share": 0.5}, {"strategy": "Defector", "share": 0.5}],
        "game": {"name": "weak_prisoners_dilemma", "temptation": 1.5},
        "network": {"kind": "small_world", "k": 4, "p": 0.1}, "revision": {"rule": "imitate", "beta": 1.0}}})  # fmt: skip


def _bare_generation(setup: Any, beta: float) -> float:
    """The same generation as plain Python: per agent, its neighbours' payoffs from the table, one Fermi draw."""
    nb, table, strategies = setup.neighbours, setup.table.payoff, setup.start.tolist()
    indptr, indices = nb.indptr.tolist(), nb.indices.tolist()
    started = time.perf_counter()
    payoff = [sum(table[strategies[x], strategies[y]] for y in indices[indptr[x]:indptr[x + 1]])
              for x in range(nb.size)]  # fmt: skip
    rng = random.Random(0)
    new = list(strategies)
    for x in range(nb.size):
        around = indices[indptr[x]:indptr[x + 1]]
        y = around[int(rng.random() * len(around))]
        if rng.random() < 1.0 / (1.0 + math.exp(-beta * (payoff[y] - payoff[x]))):
            new[x] = strategies[y]
    return time.perf_counter() - started


def bench_population(agents: int = 10_000) -> dict[str, Any]:
    """Seconds for one generation of `agents` scripted agents: the framework's and a bare loop's."""
    from sandbox.files import read_csv
    from sandbox.population.run import _Setup, run_population

    scenario = _scenario(agents, 1)
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        path = run_population(scenario, Path(tmp) / "run")
        whole = time.perf_counter() - started
        generation = float(read_csv(path / "generations.csv")["seconds"].iloc[0])
        tracemalloc.start()  # a second run: tracing slows Python down, so it is not the timed one
        run_population(scenario, Path(tmp) / "traced")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    bare = _bare_generation(_Setup(scenario), beta=1.0)
    figures = {"agents": agents, "generation_s": generation, "whole_run_s": whole, "bare_loop_s": bare,
               "framework_vs_bare": generation / bare, "us_per_agent_round": 1e6 * generation / agents,
               "peak_bytes_per_agent": peak / agents}  # fmt: skip
    table = Table(title=f"One generation of {agents:,} scripted agents (small-world graph, k = 4)")
    for column in ("", "seconds", "us per agent-round", "vs bare loop"):
        table.add_column(column, justify="right")
    table.add_row("framework: play + revise", f"{generation:.3f}", f"{1e6 * generation / agents:.1f}",
                  f"{generation / bare:.2f}x")  # fmt: skip
    table.add_row("framework: whole run (setup, tables, plot)", f"{whole:.2f}", f"{1e6 * whole / agents:.1f}",
                  f"{whole / bare:.2f}x")  # fmt: skip
    table.add_row("bare Python loop over the same calls", f"{bare:.3f}", f"{1e6 * bare / agents:.1f}", "1.00x")
    Console().print(table)
    Console().print(f"peak traced memory: {peak / 2**20:.1f} MiB, {peak / agents:.0f} bytes per agent")
    return figures
