"""A matrix game among scripted strategies (axelrod's), vectorised over the whole population each step.

Each generation: every agent plays each neighbour (`sandbox.population.network.play`, on Ray actors with
`population.actors` above 1), then revises by the block's rule (imitate, proportional, best, mutate). The play
and the revision draw, in that order, from the generation's node of the seed tree; the generator's state passes
from play to revision through the checkpoint, so a run resumed between them draws what an uninterrupted run draws.

Tables: `population.csv` (generation x agent: strategy, fixed, payoff, cooperation), `generations.csv`
(cooperation, mean payoff, each strategy's share), `edges.csv`; `cooperation.png`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure

from sandbox.base.files import read_csv
from sandbox.base.seeding import Branch, generator
from sandbox.core.run_dir import RunDirectory
from sandbox.core.summary import write_summary
from sandbox.engine.generations import GenerationState, Rows
from sandbox.population.game import ModelOf, PopulationGame
from sandbox.population.games.matrix.dynamics import play
from sandbox.population.games.matrix.report import print_scripted_table
from sandbox.population.games.matrix.spec import MatrixSpec
from sandbox.population.games.matrix.strategies import MatchTable, canonical, payoff_table
from sandbox.population.network import network_of
from sandbox.population.revision.rules import revise
from sandbox.population.settings import place_members
from sandbox.rules.matrix import MOVES

__all__ = ["ScriptedMatrixGame"]

POPULATION, GENERATIONS, EDGES, PLOT = "population.csv", "generations.csv", "edges.csv", "cooperation.png"


def _packed(values: np.ndarray) -> bytes:
    return np.ascontiguousarray(values).tobytes()


def _unpacked(data: bytes, dtype: type) -> np.ndarray:
    return np.frombuffer(data, dtype=dtype).copy()  # a copy: a step never changes what the checkpoint holds


class ScriptedMatrixGame(PopulationGame[MatrixSpec]):
    """Scripted strategies: the match table, the network, who is fixed."""

    print_table = staticmethod(print_scripted_table)

    calls_models = False

    def __init__(self, scenario: Any, model: ModelOf | None = None) -> None:
        super().__init__(scenario, model)
        block = self.block
        self.names = [canonical(m.strategy) for m in block.members]
        table = payoff_table(self.spec.name, self.spec.temptation)
        self.table = MatchTable(self.names, table, self.spec.turns)
        _, self.neighbours = network_of(block.agents, block.network, scenario.seed)
        self.pool = np.arange(len(self.names))
        own = [table.payoffs(a, b)[0] for a in MOVES for b in MOVES]
        self.spread = max(own) - min(own)  # D of the proportional rule: T - S in the prisoner's dilemma
        self.start_strategies = place_members(scenario)
        self.fixed = np.array([block.members[m].fixed for m in self.start_strategies], dtype=bool)
        self.columns = {
            POPULATION: ["generation", "agent", "strategy", "fixed", "payoff", "cooperation"],
            GENERATIONS: ["generation", "cooperation", "mean_payoff", *(f"share {n}" for n in self.names), "seconds"],
            EDGES: ["a", "b"],
        }
        self._actors: contextlib.AbstractContextManager[Any] = contextlib.nullcontext(None)
        self.matches: Any = None

    def __enter__(self) -> ScriptedMatrixGame:
        if self.block.actors > 1:  # Ray actors play the matches
            from sandbox.population.games.matrix.actors import ActorBlocks

            self._actors = ActorBlocks(self.names, self.spec, self.neighbours, self.block.actors, run_dir=self.run_path)
        self.matches = self._actors.__enter__()
        return self

    def __exit__(self, *error: Any) -> None:
        self._actors.__exit__(*error)

    def start(self) -> tuple[Any, dict[str, list[list[Any]]]]:
        edges = self.neighbours.edges
        return _packed(self.start_strategies), {EDGES: [] if edges is None else edges.tolist()}

    async def play(self, agents: Any, g: int, pairs: Any) -> Any:
        rng = generator(self.scenario.seed, Branch.EPOCH, g)
        outcome = play(
            _unpacked(agents, np.int64),
            self.table,
            self.neighbours,
            self_play=self.block.self_play,
            mean=self.block.revision.payoff == "mean",
            rng=rng,
            matches=self.matches,
        )
        return {
            "payoff": _packed(outcome.payoff),
            "cooperation": _packed(outcome.cooperation),
            "rng": json.dumps(rng.bit_generator.state),
        }  # 128-bit integers: kept as text

    async def revise(self, agents: Any, g: int, played: Any, scores: Any) -> Any:
        revision = self.block.revision
        rng = np.random.default_rng()
        rng.bit_generator.state = json.loads(played["rng"])
        return _packed(
            revise(
                _unpacked(agents, np.int64),
                _unpacked(played["payoff"], np.float64),
                self.neighbours,
                rule=revision.rule,
                beta=revision.beta,
                mutation=revision.mutation,
                pool=self.pool,
                fixed=self.fixed,
                rng=rng,
                spread=self.spread,
            )
        )

    def next_agents(self, state: GenerationState) -> Any:
        return state["revised"]

    def record(self, state: GenerationState, seconds: float) -> Rows:
        g, block, played = state["generation"], self.block, state["played"]
        strategies = _unpacked(state["agents"], np.int64)
        payoff, cooperation = _unpacked(played["payoff"], np.float64), _unpacked(played["cooperation"], np.float64)
        names = np.array(self.names, dtype=object)[strategies]
        shares = np.bincount(strategies, minlength=len(self.names)) / block.agents
        weights = self.neighbours.degree() + (1 if block.self_play else 0)
        mean_cooperation = float(np.average(cooperation, weights=weights)) if weights.sum() else 0.0
        rows = list(
            zip(
                [g] * block.agents,
                range(block.agents),
                names,
                self.fixed.tolist(),
                np.round(payoff, 6).tolist(),
                np.round(cooperation, 6).tolist(),
            )
        )
        generation = [
            g,
            round(mean_cooperation, 6),
            round(float(payoff.mean()), 6),
            *np.round(shares, 6).tolist(),
            round(seconds, 4),
        ]
        return {POPULATION: rows, GENERATIONS: [generation]}

    figure_file = PLOT

    def figure(self, path: Path) -> Figure:
        from sandbox.population.games.matrix.report import plot_generations

        return plot_generations(read_csv(path / GENERATIONS), title=self.scenario.name)

    def finish(self, run_dir: RunDirectory, models: Mapping[str, BaseChatModel] | None) -> None:
        gens = read_csv(run_dir.path / GENERATIONS)
        last = gens.iloc[-1]
        block = self.block
        write_summary(
            run_dir,
            {
                "scenario": self.scenario.name,
                "agents": block.agents,
                "generations": block.generations,
                "network": block.network.kind,
                "mean_degree": float(self.neighbours.degree().mean()),
                "game": self.spec.name,
                "temptation": self.spec.temptation,
                "rule": block.revision.rule,
                "initial_cooperation": float(gens["cooperation"].iloc[0]),
                "final_cooperation": float(last["cooperation"]),
                "final_shares": {name: float(last[f"share {name}"]) for name in self.names},
            },
            kind="population",
        )
        self.figure(run_dir.path).savefig(run_dir.path / PLOT, dpi=120)
        run_dir.write_status("complete")
