"""A matrix game among scripted strategies (axelrod's), vectorised over the whole population each step.

Each generation: every agent plays each neighbour (`sandbox.population.network.play`, on Ray actors with
`population.actors` above 1), then revises by the block's rule (imitate, proportional, best, mutate). The play
and the revision draw, in that order, from the generation's node of the seed tree; the generator's state passes
from play to revision through the checkpoint, so a run resumed between them draws what an uninterrupted run draws.

Tables: `population.csv` (generation x agent: strategy, fixed, payoff, cooperation), `generations.csv`
(cooperation, mean payoff, each strategy's share), `lineage.csv` (each agent whose strategy changed by taking
another's: the generation revised after, the agent, the one it took it from), `edges.csv`; `cooperation.png`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import cast

import numpy as np
from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure
from typing_extensions import TypedDict

from sandbox.base.files import read_csv
from sandbox.base.seeding import Branch, generator
from sandbox.core.run_dir import RunDirectory
from sandbox.core.summary import write_summary
from sandbox.engine.generations import GenerationState, Rows
from sandbox.population.game import ModelOf, PopulationGame
from sandbox.population.games.matrix.dynamics import Matches, play
from sandbox.population.games.matrix.report import print_scripted_table
from sandbox.population.games.matrix.spec import MatrixSpec
from sandbox.population.games.matrix.strategies import MatchTable, canonical, payoff_table
from sandbox.population.network import network_of
from sandbox.population.report.lineage import LINEAGE
from sandbox.population.revision.rules import revise
from sandbox.population.settings import PopulationScenarioSettings, place_members
from sandbox.rules.matrix import MOVES

__all__ = ["PackedPlay", "Revised", "ScriptedMatrixGame", "Strategies"]

POPULATION, GENERATIONS, EDGES, PLOT = "population.csv", "generations.csv", "edges.csv", "cooperation.png"

Strategies = bytes  # the population: each agent's strategy (its index among the members'), an int64 array packed


class PackedPlay(TypedDict):
    """A generation's play, packed: each agent's payoff and share of C moves (float64 arrays), and the state of the
    generation's generator after the play's draws (JSON: its 128-bit integers kept as text), which revision goes on
    drawing from."""

    payoff: bytes
    cooperation: bytes
    rng: str


class Revised(TypedDict):
    """A generation's revision, packed: the next population (`Strategies`) and, for each agent, the agent whose
    strategy it took (int64, -1: none; `revise`)."""

    strategies: Strategies
    sources: bytes


class LineageRow(TypedDict):
    """A row of lineage.csv: an agent whose strategy changed in the revision after `generation` to the one it took
    from `source` (a change by mutation has no row)."""

    generation: int
    agent: int
    source: int


class AgentRow(TypedDict):
    """A row of population.csv: the generation, the agent, its strategy's name, whether it is fixed, its payoff and
    its share of C moves. The rows are written as these cells in this order (`AgentCells`), zipped from the
    population's columns: a dict per agent would slow a large population's generation."""

    generation: int
    agent: int
    strategy: str
    fixed: bool
    payoff: float
    cooperation: float


AgentCells = tuple[int, int, str, bool, float, float]  # an `AgentRow`'s cells, in its order


class GenerationRow(TypedDict):
    """A row of generations.csv, but for each strategy's share of the agents (`share NAME`, before the seconds): the
    share of C moves (over the matches played), the mean payoff, the seconds so far."""

    generation: int
    cooperation: float
    mean_payoff: float
    seconds: float


def generations_columns(names: Sequence[str]) -> tuple[str, ...]:
    """generations.csv's header: a generation row's, with each member's strategy's share (by name) before the
    seconds."""
    columns = tuple(GenerationRow.__annotations__)
    at = columns.index("seconds")
    return (*columns[:at], *(f"share {name}" for name in names), *columns[at:])


def generations_cells(row: GenerationRow, shares: Sequence[float]) -> list[float]:
    """A generation row's cells in `generations_columns`' order, each member's share in its own cell (two members
    of one strategy, fixed and not, have a column each under one name)."""
    return [row["generation"], row["cooperation"], row["mean_payoff"], *shares, row["seconds"]]


def _packed(values: np.ndarray) -> bytes:
    return np.ascontiguousarray(values).tobytes()


def _unpacked(data: bytes, dtype: type[np.generic]) -> np.ndarray:
    return np.frombuffer(data, dtype=dtype).copy()  # a copy: a step never changes what the checkpoint holds


class ScriptedMatrixGame(PopulationGame[MatrixSpec, Strategies, PackedPlay, None, None, Revised]):
    """Scripted strategies: the match table, the network, who is fixed. The population, its play and its revision
    are packed arrays (`Strategies`, `PackedPlay`)."""

    print_table = staticmethod(print_scripted_table)

    calls_models = False

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf | None = None) -> None:
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
            POPULATION: tuple(AgentRow.__annotations__),
            GENERATIONS: generations_columns(self.names),
            LINEAGE: tuple(LineageRow.__annotations__),
            EDGES: ("a", "b"),
        }
        # what plays the edges' matches: Ray actors (`population.actors`), or None (`play_edges`, in this process)
        self._actors: contextlib.AbstractContextManager[Matches | None] = contextlib.nullcontext(None)
        self.matches: Matches | None = None

    def __enter__(self) -> ScriptedMatrixGame:
        if self.block.actors > 1:  # Ray actors play the matches
            from sandbox.population.games.matrix.actors import ActorBlocks

            self._actors = ActorBlocks(self.names, self.spec, self.neighbours, self.block.actors, run_dir=self.run_path)
        self.matches = self._actors.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._actors.__exit__(kind, error, tb)

    def start(self) -> tuple[Strategies, Rows]:
        edges = self.neighbours.edges
        return _packed(self.start_strategies), {EDGES: [] if edges is None else edges}

    async def play(self, agents: Strategies, g: int, pairs: None) -> PackedPlay:
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

    async def revise(self, agents: Strategies, g: int, played: PackedPlay, scores: None) -> Revised:
        revision = self.block.revision
        rng = np.random.default_rng()
        rng.bit_generator.state = json.loads(played["rng"])
        strategies, sources = revise(
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
        return {"strategies": _packed(strategies), "sources": _packed(sources.astype(np.int64))}

    def next_agents(self, state: GenerationState) -> Strategies:
        return self.generation(state).revised["strategies"]

    def held(self, agents: Strategies) -> list[str]:
        """Each agent's strategy, by name."""
        return cast(list[str], np.array(self.names, dtype=object)[_unpacked(agents, np.int64)].tolist())

    def record(self, state: GenerationState, seconds: float) -> Rows:
        step, block = self.generation(state), self.block
        g, played = step.g, step.played
        strategies = _unpacked(step.agents, np.int64)
        payoff, cooperation = _unpacked(played["payoff"], np.float64), _unpacked(played["cooperation"], np.float64)
        names = np.array(self.names, dtype=object)[strategies]
        shares = np.bincount(strategies, minlength=len(self.names)) / block.agents
        weights = self.neighbours.degree() + (1 if block.self_play else 0)
        mean_cooperation = float(np.average(cooperation, weights=weights)) if weights.sum() else 0.0
        rows: list[AgentCells] = list(
            zip(
                [g] * block.agents,
                range(block.agents),
                names,
                self.fixed.tolist(),
                np.round(payoff, 6).tolist(),
                np.round(cooperation, 6).tolist(),
            )
        )
        generation = GenerationRow(
            generation=g,
            cooperation=round(mean_cooperation, 6),
            mean_payoff=round(float(payoff.mean()), 6),
            seconds=round(seconds, 4),
        )
        sources = _unpacked(step.revised["sources"], np.int64)
        changed = _unpacked(step.revised["strategies"], np.int64) != strategies
        took = np.flatnonzero((sources >= 0) & changed)  # a copy of its own strategy changes nothing to draw
        lineage = list(zip([g] * len(took), took.tolist(), sources[took].tolist()))
        return {
            POPULATION: rows,
            GENERATIONS: [generations_cells(generation, np.round(shares, 6).tolist())],
            LINEAGE: lineage,
        }

    figure_file = PLOT

    def figure(self, path: Path) -> Figure:
        from sandbox.population.games.matrix.report import plot_generations
        from sandbox.population.report.caption import figure_title

        return plot_generations(read_csv(path / GENERATIONS), title=figure_title(path))

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
