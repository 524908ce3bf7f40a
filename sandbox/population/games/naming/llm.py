"""A naming-game population (Ashery, Aiello & Baronchelli 2025): LLM agents coordinate on a name by memory alone.

Each interaction, as in the authors' code: a random agent and a random
neighbour of it both pick a name from `game.words` at once, each shown its
own last `game.memory` interactions (its pick, the partner's, the payoff)
and its score over them (`prompts/population/naming/`); the same name pays
both `game.reward`, different names `game.penalty`. The order of the words
is shuffled for every prompt. An answer without a readable `'value'` among
the words is asked again up to `game.retries` times, then recorded as an
illegal move, which fails the interaction; with `game.answer: constrained`
the answer is prefilled with `{'value': '` and held to one of the words,
with no reason (the embedded model otherwise reasons first and runs out of
tokens). Committed members (a word with
`fixed: true`) always play their word and call no model. With
`game.prepared`, every memory starts full of successful plays of that name
(the code's setup for a committed minority). The population has converged
after 3 N successes in a row (`sandbox.population.games.naming.rules.Convergence`); with
`game.stop_at_consensus` the run ends there.

A generation is N interactions (each agent plays about twice) on the engine
(`sandbox.engine.generations`): `pair` draws the N pairs, `play` plays them in
order (the memories are the game's revision), `record` writes the rows; the
agents' memories are checkpointed, so a run killed inside a generation replays
it from the cache and ends with the same tables.

Run directory: `interactions.csv` (every interaction: the pair, both picks,
validity, attempts, success), `population.csv` (generation x agent: its
last pick, the name it held (its most frequent pick in memory, the latest
on a tie) and its score over its memory), `generations.csv` (success rate,
the dominant name and its share, the committed name's share, illegal rate,
the interaction at which consensus was reached), `edges.csv`,
`summary.json`, `naming.png`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd
from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure

from sandbox.base.files import read_csv
from sandbox.base.jobs import gather_jobs, jobs_ahead
from sandbox.base.seeding import Branch, generator
from sandbox.core.run_dir import RunDirectory
from sandbox.engine.generations import GenerationState, Rows
from sandbox.population.game import ModelOf, PopulationGame
from sandbox.population.games.naming.dynamics import disjoint_pairs
from sandbox.population.games.naming.players import Players, memory_score, pick_of, play_pair
from sandbox.population.games.naming.records import (
    COLUMNS,
    EDGES,
    GENERATIONS,
    INTERACTIONS,
    POPULATION,
    GenerationRow,
    InteractionRow,
    NamingAgent,
    NamingPopulation,
    Played,
    Remembered,
)
from sandbox.population.games.naming.report import print_table
from sandbox.population.games.naming.rules import Convergence
from sandbox.population.games.naming.spec import NamingSpec
from sandbox.population.llm_session import finish_llm_run, listed, model_label
from sandbox.population.network import neighbour_of, network_of
from sandbox.population.settings import LLM, PopulationScenarioSettings, PopulationSettings, place_members, spec_of

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

    from sandbox.population.actors.llm import LLMActorBlocks

__all__ = ["LLMNamingGame"]


def _held(memory: Sequence[Remembered]) -> str:
    """The name an agent holds: its most frequent own pick in memory, the latest among ties ("" if none)."""
    picks = [m["own"] for m in memory if m["own"]]
    if not picks:
        return ""
    counts = Counter(picks)
    top = max(counts.values())
    return next(p for p in reversed(picks) if counts[p] == top)


def _cells(agents: Sequence[NamingAgent]) -> list[tuple[str, str, str, float]]:
    """Each agent's committed word, last pick, held name (committed, else its top pick, else "") and memory score:
    worked out once per record, which the agents that have not played yet share (at a million agents and
    activation 0.01, 98% of them: one record, not 980,000)."""
    seen: dict[int, tuple[str, str, str, float]] = {}
    cells = []
    for a in agents:
        cell = seen.get(id(a))
        if cell is None:
            held = a["committed"] or _held(a["memory"])
            cell = seen[id(a)] = (a["committed"], a["last"], held, memory_score(a["memory"]))
        cells.append(cell)
    return cells


Pair = list[int]  # two agents' indices


class LLMNamingGame(PopulationGame[NamingSpec, NamingPopulation, Played, list[Pair] | list[list[Pair]]]):
    """The naming game: the population is the agents (committed word, memory, last pick), the run of successes
    and the interaction at which consensus was reached."""

    print_table = staticmethod(print_table)

    columns = COLUMNS

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf | None) -> None:
        super().__init__(scenario, model)
        block = self.block
        _, self.neighbours = network_of(block.agents, block.network, scenario.seed)
        self.committed = committed_word(block)
        self.players = Players(scenario, self.model("user"))
        self._actors: LLMActorBlocks[Players, list[tuple[str | None, int]]] | None = None
        self._last_cells: tuple[list[NamingAgent], list[tuple[str, str, str, float]]] | None = None

    def __enter__(self) -> LLMNamingGame:
        if self.block.actors > 1:  # Ray actors play each round's pairs, each with its share of the pool
            from sandbox.population.actors.llm import LLMActorBlocks

            assert self.run_path is not None
            self._actors = LLMActorBlocks(
                self.scenario, self.block.actors, self.run_path, Players, play_pair, on_call=self.on_call
            )
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._actors is not None:
            self._actors.__exit__(kind, error, tb)
            self._actors = None

    def start(self) -> tuple[NamingPopulation, Rows]:
        block, game = self.block, self.spec
        prepared = Remembered(own=game.prepared, other=game.prepared, payoff=game.reward)
        words = ["" if m.strategy == LLM else m.strategy for m in block.members]  # a committed member's word, or ""
        kinds = [
            NamingAgent(committed=w, memory=[] if w or not game.prepared else [prepared] * game.memory, last="")
            for w in words
        ]
        # one record a member, shared by its agents until one plays (`play` replaces an agent's record, never
        # changes it): a million agents start in milliseconds
        agents = [kinds[m] for m in place_members(self.scenario).tolist()]
        edges = self.neighbours.edges
        return {"agents": agents, "run": 0, "consensus_at": None, "interactions": 0}, {
            EDGES: [] if edges is None else edges
        }

    def pair(self, population: NamingPopulation, g: int) -> list[Pair] | list[list[Pair]]:
        """The generation's pairs, in order: sequential, N pairs (`game.activation` x N), each a random agent and a
        random neighbour of it; pairs, rounds of disjoint random pairs (`disjoint_pairs`), each a list, the last cut
        to make that many (a million agents at activation 0.01 play 10,000 of a round's 500,000 pairs)."""
        game, n = self.spec, self.block.agents
        rng = generator(self.scenario.seed, Branch.EPOCH, g)
        wanted = game.interactions(n)
        if game.update == "pairs":
            rounds: list[list[Pair]] = []
            count = 0
            nb = self.neighbours
            while count < wanted:
                speakers, hearers = disjoint_pairs(n, nb.indptr, nb.indices, rng)
                round_ = np.stack([speakers, hearers], axis=1)[: wanted - count]  # the last round: those wanted
                rounds.append(round_.tolist())
                count += len(round_)
            return rounds
        pairs: list[Pair] = []
        for _ in range(wanted):
            a = int(rng.integers(n))
            pairs.append([a, neighbour_of(a, self.neighbours, rng)])
        return pairs

    async def play(self, population: NamingPopulation, g: int, pairs: list[Pair] | list[list[Pair]]) -> Played:
        """Play the interactions in order, each pair's two picks at once (with `update: pairs`, every pair of a
        round at once, each shown its memory as the round began), each agent's memory updated as it goes; the
        interaction rows, the agents after them, and the interaction (1-based, over the run) at which the population
        converged, if it did here (with `update: pairs` the round that reaches it is played out)."""
        game, n = self.spec, self.block.agents
        agents = list(population["agents"])  # an agent's record is replaced, never changed, as it plays
        convergence = Convergence(n, population["run"])
        rows: list[InteractionRow] = []
        reached: int | None = None
        start = population["interactions"]
        rounds = cast("list[list[Pair]]", pairs) if game.update == "pairs" else [[cast(Pair, p)] for p in pairs]

        for round_pairs in rounds:
            first = start + len(rows)
            picks = await self._picks(agents, g, first, round_pairs)
            for k, pair in enumerate(round_pairs):
                if self._interaction(agents, rows, (g, first + k), pair, picks[2 * k : 2 * k + 2], convergence):
                    reached = reached or first + k + 1
            if reached is not None and game.stop_at_consensus:
                break
        if self._actors is not None and g + 1 >= self.block.generations:
            self._actors.release()  # the last generation: Ray stops while the run writes its tables
        return Played(
            rows=rows,
            agents=agents,
            run=convergence.run,
            consensus_at=population["consensus_at"] or reached,
            interactions=start + len(rows),
        )

    async def _picks(
        self, agents: list[NamingAgent], g: int, first: int, pairs: list[Pair]
    ) -> list[tuple[str | None, int]]:
        """A round's picks (its first interaction `first`, 0-based over the run), two a pair in order: every ask at
        once here, or each actor its block of the pairs (`population.actors`)."""
        if self._actors is not None:
            played = self._actors(agents, g, [[first + k, a, b] for k, (a, b) in enumerate(pairs)])
            return [pick for pair in played for pick in pair]
        asks = [(x, first + k, side) for k, pair in enumerate(pairs) for side, x in enumerate(pair)]
        return await gather_jobs(
            asks,
            lambda ask: pick_of(self.players, agents[ask[0]], ask[0], g, *ask[1:]),
            limit=jobs_ahead(self.scenario.concurrency),
        )

    def _interaction(
        self,
        agents: list[NamingAgent],
        rows: list[InteractionRow],
        at: tuple[int, int],
        pair: Sequence[int],
        picks: Sequence[tuple[str | None, int]],
        convergence: Convergence,
    ) -> bool:
        """Record one interaction (`at`: the generation and the interaction's 0-based index over the run; the pair's
        two agents and their (name or None, attempts)): its row, both memories; whether the population has converged
        with it."""
        game = self.spec
        (g, index), (a, b), ((name_a, tries_a), (name_b, tries_b)) = at, pair, picks
        success = name_a is not None and name_a == name_b
        payoff = game.reward if success else game.penalty  # an illegal move fails the interaction
        for x, own, other in ((a, name_a, name_b), (b, name_b, name_a)):
            remembered = Remembered(own=own, other=other, payoff=payoff)
            agents[x] = {**agents[x], "memory": [*agents[x]["memory"], remembered][-game.memory :], "last": own or ""}
        rows.append(
            InteractionRow(
                generation=g,
                interaction=index + 1,
                a=a,
                b=b,
                name_a=name_a or "",
                name_b=name_b or "",
                valid_a=name_a is not None,
                valid_b=name_b is not None,
                attempts_a=tries_a,
                attempts_b=tries_b,
                success=success,
                payoff=payoff,
            )
        )
        return convergence.update(success)

    def next_agents(self, state: GenerationState) -> NamingPopulation:
        played = self.generation(state).played
        return NamingPopulation(
            agents=played["agents"],
            run=played["run"],
            consensus_at=played["consensus_at"],
            interactions=played["interactions"],
        )

    def held(self, agents: NamingPopulation) -> list[str]:
        """The name each agent holds, as population.csv's `held` (committed, else its top pick), else `none`."""
        return [held or "none" for _, _, held, _ in self._cells(agents["agents"])]

    def _cells(self, agents: list[NamingAgent]) -> list[tuple[str, str, str, float]]:
        """`_cells(agents)`, kept for the list it was worked out for: `record` and `held` ask for the same agents."""
        if self._last_cells is None or self._last_cells[0] is not agents:
            self._last_cells = (agents, _cells(agents))
        return self._last_cells[1]

    def stopped(self, state: GenerationState) -> bool:
        return self.generation(state).played["consensus_at"] is not None and self.spec.stop_at_consensus

    def record(self, state: GenerationState, seconds: float) -> Rows:
        step = self.generation(state)
        g, played = step.g, step.played
        cells = self._cells(played["agents"])
        return {
            INTERACTIONS: played["rows"],
            # AgentRow's cells, in its order (the table's columns): a million rows as tuples, not dicts
            POPULATION: ((g, x, *cell) for x, cell in enumerate(cells)),  # made as the table is written
            GENERATIONS: [_generation_row(g, played["rows"], cells, self.committed, played["consensus_at"], seconds)],
        }

    figure_file = "naming.png"

    def figure(self, path: Path) -> Figure:
        from sandbox.population.games.naming.report import plot_naming
        from sandbox.population.report.caption import figure_title

        return plot_naming(read_csv(path / GENERATIONS), title=figure_title(path))

    def finish(self, run_dir: RunDirectory, models: Mapping[str, BaseChatModel] | None) -> None:
        _finish(run_dir, self.scenario, model_label(self.scenario, models), lambda: self.figure(run_dir.path))


def _generation_row(
    g: int,
    rows: list[InteractionRow],
    cells: list[tuple[str, str, str, float]],
    committed: str | None,
    reached: int | None,
    seconds: float,
) -> GenerationRow:
    held = [h for _, _, h, _ in cells]
    counts = Counter(h for h in held if h)
    dominant, top = counts.most_common(1)[0] if counts else ("", 0)
    illegal = sum((not r["valid_a"]) + (not r["valid_b"]) for r in rows) / max(1, 2 * len(rows))
    committed_share = held.count(committed) / len(held) if committed else float("nan")
    return GenerationRow(
        generation=g,
        interactions=len(rows),
        success_rate=round(float(np.mean([r["success"] for r in rows])) if rows else float("nan"), 6),
        dominant=dominant,
        dominant_share=round(top / len(cells), 6),
        committed_share=round(committed_share, 6),
        illegal_rate=round(illegal, 6),
        consensus_at=reached or "",
        seconds=round(seconds, 3),
    )


def committed_word(block: PopulationSettings) -> str | None:
    """The committed minority's word: the one word of the members with `fixed: true` (None without them)."""
    words = {m.strategy for m in block.members if m.fixed}
    return next(iter(words)) if len(words) == 1 else None


def committed_agents(block: PopulationSettings) -> int:
    """The agents of the committed members (`member_counts`: their shares of the agents, as placed)."""
    from sandbox.population.settings import member_counts

    counts = member_counts([m.share for m in block.members], block.agents)
    return sum(n for m, n in zip(block.members, counts) if m.fixed)


def _finish(
    run_dir: RunDirectory, scenario: PopulationScenarioSettings, model: str, figure: Callable[[], Figure]
) -> None:
    path, block, spec = run_dir.path, scenario.population, spec_of(scenario, NamingSpec)
    if block.actors > 1:
        from sandbox.population.actors.llm import merge_actor_transcripts

        merge_actor_transcripts(path)
    gens = read_csv(path / GENERATIONS)
    reached = gens["consensus_at"].dropna()
    at = int(reached.iloc[0]) if len(reached) else None
    rows = read_csv(path / INTERACTIONS)
    agreed = str(rows.loc[rows["interaction"] == at, "name_a"].iloc[0]) if at is not None else None
    last = gens.iloc[-1]
    finish_llm_run(
        run_dir,
        {
            "scenario": scenario.name,
            "agents": block.agents,
            "game": "naming",
            "play": "llm",
            "update": spec.update,
            "words": spec.words,
            "network": block.network.kind,
            "generations_played": len(gens),
            "interactions": int(gens["interactions"].sum()),
            "consensus_at": at,
            "consensus_reached": at is not None,
            "consensus_per_agent": None if at is None else round(at / block.agents, 3),
            "committed_share": round(committed_agents(block) / block.agents, 6),  # the phase diagram's axis
            "consensus_name": agreed,  # the name played at the interaction that completed the 3 N successes
            "committed_word": committed_word(block),  # a flip is a consensus on it (naming_plots.naming_phase)
            "final_dominant": str(last["dominant"]),
            "final_dominant_share": float(last["dominant_share"]),
            "success_rate_by_generation": gens["success_rate"].round(4).tolist(),
            "committed_share_by_generation": listed(gens["committed_share"]),
            # the committed word's share of the agents at the end (the committed included), as the scripted game's
            "final_committed_share": None if pd.isna(last["committed_share"]) else float(last["committed_share"]),
            "illegal_rate": float((gens["illegal_rate"] * gens["interactions"]).sum() / gens["interactions"].sum()),
            "model": model,
        },
        figure,
        LLMNamingGame.figure_file,
    )
