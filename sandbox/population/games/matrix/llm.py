"""A matrix-game population whose members are LLM agents following principle texts (`game.play: llm`).

Each generation:

1. **Play.** Every pair of neighbours plays one match of `game.turns` turns
   of the 2x2 game; each turn both players are asked at once, each with its
   principle in the system prompt and, as the user turn, the moral
   package's implicit game prompt (Tennant et al.'s: neutral action tokens,
   the payoff table, the last `game.history` moves of the match;
   `sandbox.rules.matrix_prompt`). An answer that is not exactly one token
   is an illegal move: the turn pays the other player as if the illegal
   player had defected, and the illegal player nothing (it is recorded, and
   counted neither as cooperation nor defection).
2. **Score.** Each agent's payoff over its matches (summed, or averaged per
   neighbour with `revision.payoff: mean`), and its share of C moves.
3. **Revise** (`revision.rule`, `sandbox.population.revision.texts`): `reflect`,
   each member rewrites its principle from its own matches
   (`prompts/population/matrix/reflect.j2`, answered as "Revised principle:
   ...", read by SCAI's policy parser); `imitate`, the Fermi rule copies a
   better neighbour's principle. Fixed members never revise.

Run directory: `moves.csv` (every turn), `population.csv` (generation x
agent: norm id, principle, payoff, cooperation), `norms.csv`,
`revisions.csv`, `generations.csv` (cooperation, mean payoff, illegal
moves), `edges.csv`, `summary.json`, `cooperation.png`, the norm map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure

from sandbox.base.files import read_csv
from sandbox.base.jobs import gather_jobs, jobs_ahead
from sandbox.base.seeding import Branch, generator
from sandbox.core.run_dir import RunDirectory
from sandbox.engine.generations import GenerationState, Rows
from sandbox.population.game import ModelOf, PopulationGame
from sandbox.population.games.matrix.llm_agents import (
    AgentView,
    as_columns,
    columns_of,
    edit_agents,
    start_agents,
    texts_by_norm,
)
from sandbox.population.games.matrix.llm_players import Members, play_match
from sandbox.population.games.matrix.llm_records import (
    COLUMNS,
    GENERATIONS,
    MOVES,
    NORMS_TABLE,
    POPULATION,
    REVISIONS,
    GenerationRow,
    MatrixAgents,
    MatrixRevision,
    MoveRow,
    Scores,
    Turn,
)
from sandbox.population.games.matrix.report import print_llm_table
from sandbox.population.games.matrix.spec import MatrixSpec
from sandbox.population.llm_session import finish_llm_run, listed, model_label, summary_head
from sandbox.population.network import edge_at, edge_count, network_of
from sandbox.population.revision.texts import first_rows, revise_principles
from sandbox.population.settings import PopulationScenarioSettings
from sandbox.rules.matrix_prompt import ActionTokens

if TYPE_CHECKING:
    from sandbox.population.actors.llm import LLMActorBlocks

__all__ = ["LLMMatrixGame"]

SAMPLED_FROM = 10_000_000
"""Above this many pairs (a complete network of 4,500 agents or more), `game.activation` draws how many matches take
place and then which, not one draw a pair (a complete network of a million agents: 5e11 pairs); below, one draw a
pair, as before."""


def _move_row(g: int, k: int, t: int, pair: Sequence[int], turn: Turn) -> MoveRow:
    return {"generation": g, "match": k, "turn": t, "a": pair[0], "b": pair[1], **turn}


def _matches_text(i: int, rows: Sequence[MoveRow], tokens: ActionTokens) -> str:
    """What agent i did in its matches of the generation, for its reflection (in the prompt's action tokens)."""
    word = {"C": tokens.cooperate, "D": tokens.defect, "": "an illegal answer"}
    lines = []
    for r in rows:
        a, b = r["a"], r["b"]
        if i in (a, b):
            own, other, pay = (
                (r["move_a"], r["move_b"], r["payoff_a"]) if i == a else (r["move_b"], r["move_a"], r["payoff_b"])
            )
            lines.append(
                f"- against agent{b if i == a else a}, turn {r['turn'] + 1}: you played {word[own]}, "
                f"they played {word[other]}; you got {pay:g} points"
            )
    return "\n".join(lines)


class LLMMatrixGame(PopulationGame[MatrixSpec, MatrixAgents, list[MoveRow], list[int] | None, Scores, MatrixRevision]):
    """LLM members of a matrix game: the population is the agents as columns (kind, fixed, norm id; the norms'
    texts; the next norm id); every pair of neighbours meets each generation."""

    print_table = staticmethod(print_llm_table)

    columns = COLUMNS

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf | None) -> None:
        super().__init__(scenario, model)
        block = self.block
        _, self.neighbours = network_of(block.agents, block.network, scenario.seed)
        self.edges = edge_count(self.neighbours)  # match k is pair k of `match_edges` (`edge_at`)
        self.degree = np.maximum(self.neighbours.degree(), 1)
        self.members = Members(scenario, self.model("user"))
        self._actors: LLMActorBlocks[Members, list[Turn]] | None = None

    def __enter__(self) -> LLMMatrixGame:
        if self.block.actors > 1:  # Ray actors play the matches, each with its share of the pool
            from sandbox.population.actors.llm import LLMActorBlocks

            assert self.run_path is not None
            self._actors = LLMActorBlocks(
                self.scenario, self.block.actors, self.run_path, Members, play_match, on_call=self.on_call
            )
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._actors is not None:
            self._actors.__exit__(kind, error, tb)
            self._actors = None

    def start(self) -> tuple[MatrixAgents, Rows]:
        agents, first = start_agents(self.scenario)
        return agents, first_rows(self.neighbours, first)

    def pair(self, population: MatrixAgents, g: int) -> list[int] | None:
        """The matches that take place: every edge's (its index), or with `game.activation` below 1 each edge's
        with that probability, drawn from the generation's node of the seed tree (`Branch.EPOCH`)."""
        activation = self.spec.activation
        if activation >= 1:
            return None  # every match: nothing to checkpoint
        rng = generator(self.scenario.seed, Branch.EPOCH, g)
        if self.edges > SAMPLED_FROM:  # how many, then that many distinct pairs
            drawn = rng.choice(self.edges, size=rng.binomial(self.edges, activation), replace=False)
            return sorted(int(k) for k in drawn)
        return [int(k) for k in np.flatnonzero(rng.random(self.edges) < activation)]

    async def play(self, population: MatrixAgents, g: int, pairs: list[int] | None) -> list[MoveRow]:
        agents = AgentView(as_columns(population))  # a match's two agents as records, made when it is played
        matches = range(self.edges) if pairs is None else pairs
        if self._actors is not None:
            played = self._actors(agents, g, [[k, *self._pair(k)] for k in matches])
            if g + 1 >= self.block.generations:  # the last generation: Ray stops while the run writes its tables
                self._actors.release()
        else:
            played = await gather_jobs(  # a match asks two calls at once
                list(matches),
                lambda k: play_match(self.members, agents, g, k, *self._pair(k)),
                limit=jobs_ahead(self.scenario.concurrency, calls_per_job=2),
            )
        return [
            _move_row(g, k, t, self._pair(k), turn) for k, turns in zip(matches, played) for t, turn in enumerate(turns)
        ]

    def _pair(self, k: int) -> tuple[int, int]:
        return edge_at(self.neighbours, k)

    def score(self, population: MatrixAgents, g: int, rows: list[MoveRow]) -> Scores:
        """Each agent's payoff (summed, or the mean per neighbour met), legal moves and C moves."""
        n = len(as_columns(population)["norm"])
        payoff, moves, cooperated = np.zeros(n), np.zeros(n), np.zeros(n)
        met = np.zeros(n) if self.spec.activation < 1 else None
        for r in rows:
            for who, move, pay in ((r["a"], r["move_a"], r["payoff_a"]), (r["b"], r["move_b"], r["payoff_b"])):
                payoff[who] += pay
                moves[who] += move != ""
                cooperated[who] += move == "C"
                if met is not None and r["turn"] == 0:
                    met[who] += 1
        if self.block.revision.payoff == "mean":
            payoff = payoff / (self.degree if met is None else np.maximum(met, 1))
        return {"payoff": payoff.tolist(), "moves": moves.tolist(), "cooperated": cooperated.tolist()}

    async def revise(self, population: MatrixAgents, g: int, rows: list[MoveRow], scores: Scores) -> MatrixRevision:
        columns, block = as_columns(population), self.block
        if g + 1 >= block.generations:
            return {"agents": columns, "norms": [], "revisions": []}
        agents = list(AgentView(columns))  # the revision reads and writes records; the state holds columns
        payoff = np.array(scores["payoff"])
        reflect = block.revision.rule == "reflect"
        following, norm_rows, revision_rows, next_id = await revise_principles(
            agents,
            g,
            payoff,
            self.neighbours,
            rule=block.revision.rule,
            beta=block.revision.beta,
            rng=generator(self.scenario.seed, Branch.META, g),
            ask=lambda i: (
                self.members.reflect(agents[i], _matches_text(i, rows, self.members.tokens), payoff[i], g, i)
                if reflect
                else None
            ),
            evidence=lambda i: f"{sum(i in (r['a'], r['b']) for r in rows)} own turns",
            next_id=columns["next_id"],
        )
        return {"agents": columns_of(following, next_id), "norms": norm_rows, "revisions": revision_rows}

    def next_agents(self, state: GenerationState) -> MatrixAgents:
        revised: Mapping[str, Any] = self.generation(state).revised
        if isinstance(revised["agents"], list):  # a revision checkpointed before the agents were columns
            return columns_of(revised["agents"], int(revised["next_id"]))
        return cast(MatrixAgents, revised["agents"])

    def held(self, agents: MatrixAgents) -> list[str]:
        """Each agent's principle text (a fixed member's too), as population.csv's `strategy`."""
        columns = as_columns(agents)
        texts = texts_by_norm(columns)
        return [texts[norm] for norm in columns["norm"]]

    edit_state = staticmethod(edit_agents)  # a fork's state.agents.I.strategy=TEXT: a norm of its own; .kind, .fixed

    def record(self, state: GenerationState, seconds: float) -> Rows:
        step = self.generation(state)
        g, rows, revised, scores = step.g, step.played, step.revised, step.scores
        agents = as_columns(step.agents)
        texts = texts_by_norm(agents)
        payoff, moves, cooperated = (np.array(scores[k]) for k in ("payoff", "moves", "cooperated"))
        cooperation = np.divide(cooperated, moves, out=np.full(len(agents["norm"]), np.nan), where=moves > 0)
        # cells in population.csv's order (MemberPlay's), not a record a member, made as the table is written (a
        # generator: a million agents' rows are never held at once)
        population = (
            (g, i, f"agent{i}", kind, fixed, norm, texts[norm], round(pay, 6), "" if c != c else round(c, 6))
            for i, (kind, fixed, norm, pay, c) in enumerate(
                zip(agents["kind"], agents["fixed"], agents["norm"], payoff.tolist(), cooperation.tolist())
            )
        )
        total = 2 * len(rows)
        generation = GenerationRow(
            generation=g,
            cooperation=round(float(cooperated.sum() / moves.sum()), 6) if moves.sum() else "",
            mean_payoff=round(float(payoff.mean()), 6),
            illegal_rate=round(float(1 - moves.sum() / total), 6) if total else "",  # no match drawn: none
            moves=total,
            seconds=round(seconds, 3),
        )
        return {
            MOVES: rows,
            POPULATION: population,
            GENERATIONS: [generation],
            NORMS_TABLE: revised["norms"],
            REVISIONS: revised["revisions"],
        }

    figure_file = "cooperation.png"

    def figure(self, path: Path) -> Figure:
        from sandbox.population.games.matrix.report import plot_llm_cooperation
        from sandbox.population.report.caption import figure_title

        return plot_llm_cooperation(read_csv(path / GENERATIONS), title=figure_title(path))

    def finish(self, run_dir: RunDirectory, models: Mapping[str, BaseChatModel] | None) -> None:
        from sandbox.population.norm_map import norm_map_summary

        scenario, path, block = self.scenario, run_dir.path, self.block
        if block.actors > 1:
            from sandbox.population.actors.llm import merge_actor_transcripts

            merge_actor_transcripts(path)
        gens = read_csv(path / GENERATIONS)
        revisions = read_csv(path / REVISIONS)
        finish_llm_run(
            run_dir,
            {
                **summary_head(scenario, "matrix_llm"),
                "matrix_game": self.spec.name,
                "turns": self.spec.turns,
                "rule": block.revision.rule,
                "network": block.network.kind,
                "cooperation_by_generation": listed(gens["cooperation"]),  # a generation without a legal move: None
                "mean_payoff_by_generation": gens["mean_payoff"].round(4).tolist(),
                "norm_versions": int(read_csv(path / NORMS_TABLE)["norm"].nunique()),
                "revisions_changed": int(revisions["outcome"].isin(["new", "copied"]).sum()),
                "illegal_revisions": int((revisions["outcome"] == "illegal").sum()),
                "illegal_rate": (
                    float((gens["illegal_rate"] * gens["moves"]).sum() / gens["moves"].sum())
                    if gens["moves"].sum()
                    else None  # no match drawn in the whole run
                ),
                "model": model_label(scenario, models),
                **norm_map_summary(path),
            },
            lambda: self.figure(path),
            self.figure_file,
        )
