"""`sandbox bench population`: one generation of a large scripted population, against a bare loop.

The framework's generation on the engine (play every neighbour through the
match table, Fermi imitation) is timed against a bare Python loop over the same
per-agent work (each agent sums its neighbours' payoffs from the same table and
makes the same Fermi draw), measured in the same run, two ways: the steps'
own seconds (`generations.csv`: pair, play, score, revise and the rows made),
and a whole generation all in (the steps, LangGraph's five checkpoints, its
10,000 rows of `population.csv` written): the difference between a run of
`GENERATIONS` generations and a run of one, per generation, the least of
`REPEATS` pairs (after an untimed run that pays the imports and the first
plot). Memory per agent is
the peak traced memory (tracemalloc) of a third, untimed run over the agents.
"""

from __future__ import annotations

import math
import random
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from sandbox.population.games.matrix.actors import ActorBlocks
    from sandbox.population.games.matrix.scripted import ScriptedMatrixGame
    from sandbox.population.scenario import PopulationScenario

__all__ = ["bench_population", "bench_population_actors"]

GENERATIONS = 21  # the longer run of the all-in figure
REPEATS = 3


def _scenario(agents: int, generations: int) -> PopulationScenario:
    from sandbox.core.scenario_files import parse_kind

    return parse_kind(
        "population",
        {
            "name": "bench-population",
            "seed": 0,
            "population": {
                "agents": agents,
                "generations": generations,
                "members": [{"strategy": "Cooperator", "share": 0.5}, {"strategy": "Defector", "share": 0.5}],
                "game": {"name": "weak_prisoners_dilemma", "temptation": 1.5},
                "network": {"kind": "small_world", "k": 4, "p": 0.1},
                "revision": {"rule": "imitate", "beta": 1.0},
            },
        },
    )


def _bare_generation(setup: ScriptedMatrixGame, beta: float) -> float:
    """The same generation as plain Python: per agent, its neighbours' payoffs from the table, one Fermi draw."""
    nb, table, strategies = setup.neighbours, setup.table.payoff, setup.start_strategies.tolist()
    _, csr_indptr, csr_indices = nb.csr()
    indptr, indices = csr_indptr.tolist(), csr_indices.tolist()
    started = time.perf_counter()
    payoff = [
        sum(table[strategies[x], strategies[y]] for y in indices[indptr[x] : indptr[x + 1]]) for x in range(nb.size)
    ]
    rng = random.Random(0)
    new = list(strategies)
    for x in range(nb.size):
        around = indices[indptr[x] : indptr[x + 1]]
        y = around[int(rng.random() * len(around))]
        if rng.random() < 1.0 / (1.0 + math.exp(-beta * (payoff[y] - payoff[x]))):
            new[x] = strategies[y]
    return time.perf_counter() - started


def bench_population(agents: int = 10_000) -> dict[str, float]:
    """Seconds for one generation of `agents` scripted agents: the framework's and a bare loop's."""
    from sandbox.base.files import read_csv
    from sandbox.population.games.matrix.scripted import ScriptedMatrixGame
    from sandbox.population.run import run_population

    scenario = _scenario(agents, 1)
    with tempfile.TemporaryDirectory() as tmp:
        run_population(scenario, Path(tmp) / "warm")  # imports, the first plot: paid before the timed runs
        wholes, longer = [], []
        for k in range(REPEATS):  # the least of each: this machine's noise is of the order of a generation
            started = time.perf_counter()
            path = run_population(scenario, Path(tmp) / f"run{k}")
            wholes.append(time.perf_counter() - started)
            started = time.perf_counter()
            run_population(_scenario(agents, GENERATIONS), Path(tmp) / f"longer{k}")
            longer.append(time.perf_counter() - started)
        whole = min(wholes)
        generation = float(read_csv(path / "generations.csv")["seconds"].iloc[0])
        all_in = (min(longer) - whole) / (GENERATIONS - 1)
        tracemalloc.start()  # a second run: tracing slows Python down, so it is not the timed one
        run_population(scenario, Path(tmp) / "traced")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    bare = _bare_generation(ScriptedMatrixGame(scenario), beta=1.0)
    figures = {
        "agents": agents,
        "generation_s": generation,
        "generation_all_in_s": all_in,
        "whole_run_s": whole,
        "bare_loop_s": bare,
        "framework_vs_bare": generation / bare,
        "us_per_agent_round": 1e6 * generation / agents,
        "peak_bytes_per_agent": peak / agents,
    }
    table = Table(title=f"One generation of {agents:,} scripted agents (small-world graph, k = 4)")
    for column in ("", "seconds", "us per agent-round", "vs bare loop"):
        table.add_column(column, justify="right")
    table.add_row(
        "framework: the steps (pair, play, score, revise, rows made)",
        f"{generation:.3f}",
        f"{1e6 * generation / agents:.1f}",
        f"{generation / bare:.2f}x",
    )
    table.add_row(
        "framework: a generation all in (steps, checkpoints, rows written)",
        f"{all_in:.3f}",
        f"{1e6 * all_in / agents:.1f}",
        f"{all_in / bare:.2f}x",
    )
    table.add_row(
        "framework: whole run (setup, tables, plot)",
        f"{whole:.2f}",
        f"{1e6 * whole / agents:.1f}",
        f"{whole / bare:.2f}x",
    )
    table.add_row("bare Python loop over the same calls", f"{bare:.3f}", f"{1e6 * bare / agents:.1f}", "1.00x")
    Console().print(table)
    Console().print(f"peak traced memory: {peak / 2**20:.1f} MiB, {peak / agents:.0f} bytes per agent")
    return figures


def _stochastic_scenario(agents: int) -> PopulationScenario:
    """A population whose matches cost real work: a third play the stochastic axelrod `Random`, whose every edge
    plays its own 5-turn match."""
    from sandbox.core.scenario_files import parse_kind

    return parse_kind(
        "population",
        {
            "name": "bench-population-actors",
            "seed": 0,
            "population": {
                "agents": agents,
                "generations": 1,
                "members": [
                    {"strategy": "Cooperator", "share": 0.35},
                    {"strategy": "Defector", "share": 0.35},
                    {"strategy": "Random", "share": 0.3},
                ],
                "game": {"name": "weak_prisoners_dilemma", "temptation": 1.5, "turns": 5},
                "network": {"kind": "small_world", "k": 4, "p": 0.1},
                "revision": {"rule": "imitate", "beta": 1.0},
            },
        },
    )


def bench_population_actors(agents: int = 100_000, counts: tuple[int, ...] = (1, 2)) -> dict[str, float | None]:
    """One generation's play of `agents` agents (a third stochastic) in this process, then on 1 and 2 Ray actors;
    the actors' start is timed apart, and every way must give the same payoffs."""
    import numpy as np

    from sandbox.base.seeding import Branch, generator
    from sandbox.population.games.matrix.actors import ActorBlocks
    from sandbox.population.games.matrix.dynamics import play
    from sandbox.population.games.matrix.scripted import ScriptedMatrixGame
    from sandbox.population.revision.rules import revise

    setup = ScriptedMatrixGame(_stochastic_scenario(agents))

    def generation(matches: ActorBlocks | None) -> tuple[float, npt.NDArray[np.float64]]:
        started = time.perf_counter()
        rng = generator(0, Branch.EPOCH, 0)
        outcome = play(
            setup.start_strategies, setup.table, setup.neighbours, self_play=False, mean=False, rng=rng, matches=matches
        )
        revise(
            setup.start_strategies,
            outcome.payoff,
            setup.neighbours,
            rule="imitate",
            beta=1.0,
            mutation=0.0,
            pool=setup.pool,
            fixed=setup.fixed,
            rng=rng,
        )
        return time.perf_counter() - started, outcome.payoff

    alone, reference = generation(None)
    rows: list[tuple[str, float, float]] = [("in this process", 0.0, alone)]
    for count in counts:
        started = time.perf_counter()
        with ActorBlocks(setup.names, setup.spec, setup.neighbours, count) as blocks:
            blocks.wait()
            ready = time.perf_counter() - started
            seconds, payoff = generation(blocks)
        if not np.array_equal(payoff, reference):
            raise RuntimeError(f"{count} actors gave other payoffs than the play in one process")
        rows.append((f"{count} Ray actor{'s' if count > 1 else ''}", ready, seconds))
    one = rows[1][2] if len(rows) > 1 else alone
    table = Table(title=f"One generation of {agents:,} agents, 30% playing Random (small-world graph, k = 4)")
    for column in ("", "actors' start s", "generation s", "us per agent-round", "speed-up vs 1 actor"):
        table.add_column(column, justify="right")
    for label, ready, seconds in rows:
        table.add_row(label, f"{ready:.1f}", f"{seconds:.2f}", f"{1e6 * seconds / agents:.1f}", f"{one / seconds:.2f}x")
    Console().print(table)
    return {
        "agents": agents,
        "in_process_s": alone,
        **{f"actors_{c}_s": rows[i + 1][2] for i, c in enumerate(counts)},
        **{f"actors_{c}_start_s": rows[i + 1][1] for i, c in enumerate(counts)},
        "speedup_1_to_2": one / rows[2][2] if len(rows) > 2 else None,
    }
