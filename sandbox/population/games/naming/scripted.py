"""The naming game among the theory's scripted agents (`game: {kind: naming, play: scripted}`), no model.

The rule is `sandbox.population.games.naming.dynamics`'s (the minimal naming game; with two words and a committed minority, Xie
et al.'s binary agreement model): a member with a word and `fixed: true` is committed to it (it always says it and
never changes), a word without `fixed` starts an agent's inventory with that word, and `empty` starts it with none
(it invents a name of its own when it must speak). `game.update`: sequential (one interaction at a time, the model
as published) or pairs (rounds of disjoint pairs at once).

A generation is N interactions (pairs: rounds until at least N), drawn from the generation's node of the seed tree,
all in the `play` step; the inventories are checkpointed as compressed arrays (each agent's count of names, their ids), so a run killed anywhere resumes to the
same tables. Consensus: every agent holds exactly one name, the same; `game.stop_at_consensus` ends the run there.

Tables: `generations.csv` (interactions so far, each word's share of the agents holding only it, the largest such
share of any name (`dominant_share`), the committed word's share, the share holding more than one name, the distinct names held, all names held at the generation's
end and at most within it, the interaction at which consensus came, seconds); `population.csv` only at the start
(generation -1) and after the last generation (each agent's names; an invented name is `#x`, agent x's), since
10,000 agents over hundreds of generations would be a table of millions of rows; `edges.csv`; `summary.json`;
`naming.png`.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

import numpy as np
import numpy.typing as npt
from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure
from typing_extensions import TypedDict

from sandbox.base.files import read_csv
from sandbox.base.seeding import Branch, generator
from sandbox.core.run_dir import RunDirectory
from sandbox.core.steps import StateEdit
from sandbox.core.summary import write_summary
from sandbox.engine.generations import GenerationState, Rows
from sandbox.population.game import ModelOf, PopulationGame
from sandbox.population.games.naming.dynamics import Inventories, play_pairs, play_sequential
from sandbox.population.games.naming.report import print_scripted_table
from sandbox.population.games.naming.spec import EMPTY, NamingSpec
from sandbox.population.network import network_of
from sandbox.population.settings import PopulationScenarioSettings, place_members

__all__ = ["ScriptedNamingGame"]

POPULATION, GENERATIONS, EDGES, PLOT = "population.csv", "generations.csv", "edges.csv", "naming.png"


class Packed(TypedDict):
    """The inventories as compressed bytes (the checkpoints keep every generation's: the binary model's 10,000
    agents hold mostly one name each, about 2 KB compressed, not 80 KB): each agent's count of names, and the names'
    ids, agent after agent."""

    sizes: bytes
    ids: bytes


class Inventoried(Packed):
    """The population: the packed inventories, the words (their ids' names), the interactions so far and the
    interaction at which consensus came (None: not yet)."""

    words: list[str]
    interactions: int
    consensus_at: int | None


class Played(Inventoried):
    """A generation's play: the population after it, its interactions and the most names held within it."""

    played: int
    peak: int


class AgentNames(TypedDict):
    """A row of population.csv: the agent's committed word ("" if none) and the names it holds (an invented name
    is `#x`, agent x's)."""

    generation: int
    agent: int
    committed: str
    names: str


def _pack(inventories: Inventories) -> Packed:
    def packed(array: npt.NDArray[np.int64]) -> bytes:
        return zlib.compress(array.astype(np.int32).tobytes(), 1)

    return Packed(sizes=packed(inventories.sizes), ids=packed(inventories.ids))


def _unpack(data: bytes) -> npt.NDArray[np.int64]:
    return np.frombuffer(zlib.decompress(data), dtype=np.int32).astype(np.int64)


class ScriptedNamingGame(PopulationGame[NamingSpec, Inventoried, Played]):
    """The scripted naming game: the population is the inventories (packed), the interactions so far and the
    interaction at which consensus came."""

    print_table = staticmethod(print_scripted_table)

    calls_models = False

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf | None = None) -> None:
        super().__init__(scenario, model)
        block, game = self.block, self.spec
        self.words = list(game.words)
        _, self.neighbours = network_of(block.agents, block.network, scenario.seed)
        self.members = place_members(scenario)
        self.fixed = np.array([block.members[m].fixed for m in self.members], dtype=bool)
        committed = {m.strategy for m in block.members if m.fixed}
        self.committed = next(iter(committed)) if len(committed) == 1 else None
        self.columns = {
            GENERATIONS: [
                "generation",
                "interactions",
                *(f"share {w}" for w in self.words),
                "dominant_share",
                "committed_share",
                "multiple_share",
                "distinct_names",
                "total_names",
                "peak_names",
                "consensus_at",
                "seconds",
            ],
            POPULATION: list(AgentNames.__annotations__),
            EDGES: ["a", "b"],
        }

    @staticmethod
    def edit_state(agents: Inventoried, name: str, value: object, generation: int) -> StateEdit:
        raise ValueError(
            "this game holds its population packed (scripted naming agents); change the members at generation 0"
        )

    def _inventories(self, state: Inventoried) -> Inventories:
        if state["words"] != self.words:
            raise ValueError(
                f"population.game.words {self.words}: this run's agents hold the words {state['words']} from "
                "generation 0; fork at generation 0 to change them"
            )
        return Inventories(_unpack(state["sizes"]), _unpack(state["ids"]), self.fixed)

    def start(self) -> tuple[Inventoried, Rows]:
        block = self.block
        words = np.array([self.words.index(m.strategy) if m.strategy != EMPTY else -1 for m in block.members])
        first = words[self.members]  # each agent's first name, -1 for none
        inventories = Inventories((first >= 0).astype(np.int64), first[first >= 0], self.fixed)
        edges = self.neighbours.edges
        state = Inventoried(
            **_pack(inventories),
            words=self.words,
            interactions=0,
            consensus_at=0 if inventories.consensus() else None,
        )
        rows = {EDGES: [] if edges is None else edges, POPULATION: self._population(-1, inventories)}
        return state, rows

    async def play(self, agents: Inventoried, g: int, pairs: None) -> Played:
        """The generation's N interactions (`game.activation` x N; none once agreed, with stop_at_consensus)."""
        game, n = self.spec, self.block.agents
        inventories = self._inventories(agents)
        stop = game.stop_at_consensus
        if agents["consensus_at"] is not None and stop:
            return Played(**agents, played=0, peak=int(inventories.sizes.sum()))
        step = play_sequential if game.update == "sequential" else play_pairs
        batch = step(
            inventories,
            game.interactions(n),
            generator(self.scenario.seed, Branch.EPOCH, g),
            words=len(self.words),
            indptr=self.neighbours.indptr,
            indices=self.neighbours.indices,
            stop=stop,
        )
        before = agents["interactions"]
        reached = agents["consensus_at"]
        if reached is None and batch.consensus is not None:
            reached = before + batch.consensus
        return Played(
            **_pack(batch.inventories),
            words=self.words,
            interactions=before + batch.interactions,
            consensus_at=reached,
            played=batch.interactions,
            peak=batch.peak,
        )

    def next_agents(self, state: GenerationState) -> Inventoried:
        played = self.generation(state).played
        return Inventoried(
            sizes=played["sizes"],
            ids=played["ids"],
            words=played["words"],
            interactions=played["interactions"],
            consensus_at=played["consensus_at"],
        )

    def stopped(self, state: GenerationState) -> bool:
        return self.generation(state).played["consensus_at"] is not None and self.spec.stop_at_consensus

    def held(self, agents: Inventoried) -> list[str]:
        """The name an agent holds alone (an invented one as `#x`), else `several` or `none`."""
        inventories = self._inventories(agents)
        sizes, w = inventories.sizes, len(self.words)
        singles = inventories.singles()
        names = np.array(self.words, dtype=object)[np.minimum(singles, w - 1)]
        invented = singles >= w
        names[invented] = [f"#{x - w}" for x in singles[invented].tolist()]
        labels = np.where(sizes > 1, "several", "none").astype(object)
        labels[sizes == 1] = names
        return cast(list[str], labels.tolist())

    def _population(self, g: int, inventories: Inventories) -> list[AgentNames]:
        w, members = len(self.words), self.block.members
        return [
            AgentNames(
                generation=g,
                agent=x,
                committed=members[m].strategy if members[m].fixed else "",
                names=" ".join(self.words[i] if i < w else f"#{i - w}" for i in names),
            )
            for x, (m, names) in enumerate(zip(self.members.tolist(), inventories.lists()))
        ]

    def record(self, state: GenerationState, seconds: float) -> Rows:
        step = self.generation(state)
        g, played, n = step.g, step.played, self.block.agents
        inventories = self._inventories(played)
        sizes, w = inventories.sizes, len(self.words)
        singles = np.bincount(inventories.singles(), minlength=w)  # agents holding only that name
        only = [float(singles[c]) / n for c in range(w)]
        committed = only[self.words.index(self.committed)] if self.committed else float("nan")
        row: dict[str, object] = {  # a share column for each word: the header is the game's (`columns`)
            "generation": g,
            "interactions": played["interactions"],
            **{f"share {word}": round(x, 6) for word, x in zip(self.words, only)},
            "dominant_share": round(float(singles.max(initial=0)) / n, 6),
            "committed_share": round(committed, 6),
            "multiple_share": round(float((sizes > 1).mean()), 6),
            "distinct_names": len(np.unique(inventories.ids)),
            "total_names": int(sizes.sum()),
            "peak_names": played["peak"],
            "consensus_at": "" if played["consensus_at"] is None else played["consensus_at"],
            "seconds": round(seconds, 4),
        }
        rows: dict[str, Sequence[Mapping[str, object]]] = {GENERATIONS: [row]}
        if g + 1 >= self.block.generations or self.stopped(state):
            rows[POPULATION] = self._population(g, inventories)
        return rows

    figure_file = PLOT

    def figure(self, path: Path) -> Figure:
        from sandbox.population.games.naming.report import plot_naming_scripted
        from sandbox.population.report.caption import figure_title

        return plot_naming_scripted(read_csv(path / GENERATIONS), self.words, title=figure_title(path))

    def finish(self, run_dir: RunDirectory, models: Mapping[str, BaseChatModel] | None) -> None:

        gens = read_csv(run_dir.path / GENERATIONS)
        block, last = self.block, gens.iloc[-1]
        reached = gens["consensus_at"].dropna()
        at = int(reached.iloc[0]) if len(reached) else None
        counts = np.bincount(self.members, minlength=len(block.members))
        committed = float(self.fixed.mean())
        write_summary(
            run_dir,
            {
                "scenario": self.scenario.name,
                "agents": block.agents,
                "game": "naming",
                "play": "scripted",
                "update": self.spec.update,
                "network": block.network.kind,
                "words": self.words,
                "committed_word": self.committed,
                "committed_share": committed,
                "members": {m.strategy: int(c) for m, c in zip(block.members, counts)},
                "generations_played": len(gens),
                "interactions": int(last["interactions"]),
                "consensus_reached": at is not None,
                "consensus_at": at,
                "consensus_per_agent": None if at is None else round(at / block.agents, 3),
                "final_shares": {w: float(last[f"share {w}"]) for w in self.words},
                "final_committed_share": None if self.committed is None else float(last["committed_share"]),
                "final_distinct_names": int(last["distinct_names"]),
                "peak_names": int(gens["peak_names"].max()),
            },
            kind="population",
        )
        self.figure(run_dir.path).savefig(run_dir.path / PLOT, dpi=120)
        run_dir.write_status("complete")
