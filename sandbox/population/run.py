"""A population run: generations of play and revision, written as they finish, resumable after a kill.

Run directory:
    scenario.yaml       the resolved scenario; resume reads it
    run.json            status and timings
    edges.csv           the interaction network (a, b), empty for a complete one
    population.csv      one row per generation and agent: strategy, fixed, payoff, cooperation (share of C moves)
    generations.csv     one row per generation: cooperation, mean payoff, and each strategy's share
    state.json          the strategies after the last finished generation and the tables' sizes then (what
                        resume starts from: it cuts the tables back to those sizes)
    summary.json        headline figures
    cooperation.png     cooperation and the strategies' shares over generations

Each generation draws from its own node of the seed tree, so a run resumed
after a kill writes the same tables as one that was not killed.
"""

from __future__ import annotations

import contextlib
import csv
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from sandbox.files import read_csv
from sandbox.population.dynamics import network_of, play, revise
from sandbox.population.scenario import PopulationScenario, empty_members, place_members
from sandbox.population.strategies import MatchTable, canonical, payoff_table
from sandbox.population.tables import load_state, save_state
from sandbox.run_dir import RunDirectory, default_out, hold, holding
from sandbox.scenario_file import load_run_scenario
from sandbox.seeding import Branch, generator
from sandbox.summary import write_summary

__all__ = ["GENERATIONS", "POPULATION", "play_scripted", "resume_population", "run_population"]

POPULATION = "population.csv"
GENERATIONS = "generations.csv"
EDGES = "edges.csv"
PLOT = "cooperation.png"

Hook = Callable[[int], Any] | None


class _Setup:
    """What every generation of a scenario needs: names, the match table, the network, who is fixed."""

    def __init__(self, scenario: PopulationScenario) -> None:
        block = scenario.population
        self.block = block
        self.names = [canonical(m.strategy) for m in block.members]
        table = payoff_table(block.game.name, block.game.temptation)
        self.table = MatchTable(self.names, table, block.game.turns)
        _, self.neighbours = network_of(block.agents, block.network, scenario.seed)
        self.pool = np.arange(len(self.names))
        own = [table.payoffs(a, b)[0] for a in "CD" for b in "CD"]
        self.spread = max(own) - min(own)  # D of the proportional rule: T - S in the prisoner's dilemma
        self.start = place_members(scenario)
        self.fixed = np.array([block.members[m].fixed for m in self.start], dtype=bool)


def play_scripted(run_dir: RunDirectory, scenario: PopulationScenario, *, models: Any = None, hooks: Hook = None,
                  ledgers: Any = ()) -> Path:  # fmt: skip
    """Play a matrix game among scripted strategies (`models` and `ledgers` are unused: no model is called)."""
    setup, block = _Setup(scenario), scenario.population
    path = run_dir.path
    state = load_state(path)  # cuts what a kill left after the last finished generation (a partial row included)
    done = state["generations_done"] if state else 0
    strategies = np.array(state["strategies"], dtype=np.int64) if state else setup.start
    share_columns = [f"share {name}" for name in setup.names]
    if not state:
        edges = setup.neighbours.edges if setup.neighbours.edges is not None else np.zeros((0, 2), dtype=np.int64)
        _write_csv(path / EDGES, ["a", "b"], edges.tolist())
        _write_csv(path / POPULATION, ["generation", "agent", "strategy", "fixed", "payoff", "cooperation"], [])
        _write_csv(path / GENERATIONS, ["generation", "cooperation", "mean_payoff", *share_columns, "seconds"], [])
    with _matches(setup) as matches, (path / POPULATION).open("a", newline="", encoding="utf-8") as agents_file, \
            (path / GENERATIONS).open("a", newline="", encoding="utf-8") as gens_file:  # fmt: skip
        agents_out, gens_out = csv.writer(agents_file), csv.writer(gens_file)
        for g in range(done, block.generations):
            started = time.perf_counter()
            rng = generator(scenario.seed, Branch.EPOCH, g)
            outcome = play(strategies, setup.table, setup.neighbours, self_play=block.self_play,
                           mean=block.revision.payoff == "mean", rng=rng, matches=matches)  # fmt: skip
            names = np.array(setup.names, dtype=object)[strategies]
            agents_out.writerows(zip([g] * block.agents, range(block.agents), names, setup.fixed.tolist(),
                                     np.round(outcome.payoff, 6).tolist(), np.round(outcome.cooperation, 6).tolist()))
            shares = np.bincount(strategies, minlength=len(setup.names)) / block.agents
            weights = setup.neighbours.degree() + (1 if block.self_play else 0)
            cooperation = float(np.average(outcome.cooperation, weights=weights)) if weights.sum() else 0.0
            strategies = revise(strategies, outcome, setup.neighbours, rule=block.revision.rule,
                                beta=block.revision.beta, mutation=block.revision.mutation, pool=setup.pool,
                                fixed=setup.fixed, rng=rng, spread=setup.spread)  # fmt: skip
            gens_out.writerow([g, round(cooperation, 6), round(float(outcome.payoff.mean()), 6),
                               *np.round(shares, 6).tolist(), round(time.perf_counter() - started, 4)])
            agents_file.flush()
            gens_file.flush()
            save_state(path, (POPULATION, GENERATIONS), generations_done=g + 1, strategies=strategies.tolist())
            if hooks:
                hooks(g)
    _finish(run_dir, scenario, setup)
    return path


def _matches(setup: _Setup) -> contextlib.AbstractContextManager[Any]:
    """Ray actors that play the matches (`population.actors` above 1), or None: play them in this process."""
    if setup.block.actors == 1:
        return contextlib.nullcontext(None)
    from sandbox.population.actors import ActorBlocks

    return ActorBlocks(setup.names, setup.block.game, setup.neighbours, setup.block.actors)


def _write_csv(path: Path, header: list[str], rows: list[Any]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def _finish(run_dir: RunDirectory, scenario: PopulationScenario, setup: _Setup) -> None:
    from sandbox.population.plots import plot_generations

    gens = read_csv(run_dir.path / GENERATIONS)
    last = gens.iloc[-1]
    final = {name: float(last[f"share {name}"]) for name in setup.names}
    block = scenario.population
    degree = setup.neighbours.degree()
    write_summary(run_dir, {
        "scenario": scenario.name, "agents": block.agents, "generations": block.generations,
        "network": block.network.kind, "mean_degree": float(degree.mean()), "game": block.game.name,
        "temptation": block.game.temptation, "rule": block.revision.rule,
        "initial_cooperation": float(gens["cooperation"].iloc[0]), "final_cooperation": float(last["cooperation"]),
        "final_shares": final,
    }, kind="population")  # fmt: skip
    plot_generations(gens, title=scenario.name).savefig(run_dir.path / PLOT, dpi=120)
    run_dir.write_status("complete")


def _dispatch(run_dir: RunDirectory, scenario: PopulationScenario, hooks: Hook, models: Any, ledgers: Any) -> Path:
    """Play the run with its game's player (`PopulationGameSpec.play_with`)."""
    from sandbox.kinds import resolve

    player = resolve(scenario.population.game.play_with())
    return player(run_dir, scenario, models=models, hooks=hooks, ledgers=ledgers)


def run_population(scenario: PopulationScenario, out: Path | str | None = None, *, hooks: Hook = None,
                   models: Any = None, ledgers: Any = (), source: str = "<scenario>") -> Path:  # fmt: skip
    """Play a population scenario into a new run directory (`out`, or `runs/<name>-<time>`); `models`: model
    objects by role for LLM members (`{"user": model}`), instead of the scenario's specs. A member whose share
    rounds to no agent is refused (`ScenarioError` naming `source`, the scenario's file), and nothing is written."""
    from sandbox.errors import ScenarioError

    problems = empty_members(scenario.population)
    if problems:
        raise ScenarioError(source, problems)
    path = Path(out) if out is not None else default_out(scenario)
    RunDirectory.check_new(path)
    with hold(path):
        return _dispatch(RunDirectory.create(path, scenario), scenario, hooks, models, ledgers)


@holding
def resume_population(path: Path | str, *, hooks: Hook = None, models: Any = None, ledgers: Any = ()) -> Path:
    """Play the generations a killed population run had left; the tables end as an uninterrupted run's."""
    run_dir = RunDirectory.open(path)
    run_dir.write_status("running")
    return _dispatch(run_dir, load_run_scenario(path), hooks, models, ledgers)
