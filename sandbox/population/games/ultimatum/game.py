"""An ultimatum-game population: every member follows a principle and revises it; SCAI's users and assistant can join.

Each generation:

1. **Play.** Every agent proposes to each neighbour `game.rounds` times
   (and the neighbour to it as often), each episode SCAI's
   (`sandbox.rules.ultimatum_episode.play_ultimatum`: a split in words, a
   decision, re-asks with the parse error, then an illegal move), with
   stakes drawn as SCAI draws them (`game.stakes`). Members play their
   principle as SCAI's assistant plays its policy (`agents.assistant`,
   `game.reading` and `game.responder`), as role `user`; fixed members are
   SCAI's users (`agents.user`: a norm of the library, or a text, and the
   neutral manner), also role `user`; the member `assistant` is SCAI's
   assistant, role `assistant`.
2. **Score.** Each agent's score is the mean share of the stake it got per
   episode (a rejection or an illegal move gets nothing).
3. **Revise** (`revision.rule`). `reflect`: each member's own MetaLM (SCAI's,
   `agents.meta`, role `meta`, the paper's meta-principle) rewrites its
   principle from the interactions it took part in, itself the flex-policy
   agent and its partners the fixed-policy agents: SCAI's revision applied to
   every member. `imitate`: each member compares itself with a random
   neighbour and copies its principle with the Fermi probability
   1/(1+exp(-beta (score_neighbour - score_own))). Under either rule the
   assistant revises as SCAI's does, from a seeded sample of up to
   `game.assistant_interactions` of the generation's interactions, the
   members' with each other included; fixed members never revise. A MetaLM
   answer that is not a usable principle (after `game.meta_reasks` re-asks)
   is recorded as illegal and the principle stays.

Every move and revision has its own node of the run's seed tree (a
principle's reading, as in SCAI, one seed for every move). The generation runs
on the engine (`sandbox.engine.generations`): its episodes are checkpointed
after play, its rows written when it ends, so a run killed inside one replays
it from the cache.

Run directory: `episodes.csv` (every episode), `population.csv`
(generation x agent: kind, norm id, principle, score, offered share as
proposer, acceptance as responder), `norms.csv` (every principle version
with its author, rule and parents), `revisions.csv`, `generations.csv`
(mean offered share, acceptance, the assistant's and the fixed members'
offered shares, illegal moves), `edges.csv`, `summary.json`,
`ultimatum.png`, and the norm map (`sandbox.population.norm_map`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal, SupportsFloat

import numpy as np
from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure

from agents.assistant import library_policies
from sandbox.base.files import read_csv
from sandbox.base.seeding import Branch, generator
from sandbox.core.run_dir import RunDirectory
from sandbox.engine.generations import GenerationState, Rows
from sandbox.population.game import ModelOf, PopulationGame
from sandbox.population.games.ultimatum.players import Players, play_generation, revise_agents
from sandbox.population.games.ultimatum.records import (
    COLUMNS,
    EPISODES,
    GENERATIONS,
    NORMS_TABLE,
    POPULATION,
    REVISIONS,
    Episode,
    EpisodeRow,
    GenerationRow,
    MemberPlay,
    UltimatumAgent,
    UltimatumPopulation,
    UltimatumRevision,
)
from sandbox.population.games.ultimatum.report import print_table
from sandbox.population.games.ultimatum.spec import UltimatumSpec
from sandbox.population.llm_session import finish_llm_run, listed, member_row, model_label, summary_head
from sandbox.population.network import edge_pairs, network_of
from sandbox.population.revision.texts import NormRow, edit_principle, first_principles, given_norm
from sandbox.population.settings import ASSISTANT, PopulationScenarioSettings, place_members, spec_of
from societies.norms import NORMS

__all__ = ["UltimatumGame"]


def _start(scenario: PopulationScenarioSettings) -> tuple[list[UltimatumAgent], list[NormRow]]:
    """The agents (name, kind, fixed, norm id, principle, member's strategy) and the first norms' rows."""
    block, game = scenario.population, spec_of(scenario, UltimatumSpec)
    agents: list[UltimatumAgent] = []
    rows: list[NormRow] = []
    ids: dict[tuple[bool, str, str], int] = {}
    for i, m in enumerate(place_members(scenario)):
        member = block.members[int(m)]
        if member.strategy == ASSISTANT:
            choices = library_policies()
            text = game.assistant_policy or choices[int(generator(scenario.seed, Branch.POLICY).integers(len(choices)))]
            kind: Literal["member", "fixed", "assistant"] = "assistant"
            name = ASSISTANT
        else:
            text = NORMS.get(member.strategy).text if member.strategy in NORMS.names() else member.strategy
            kind, name = "fixed" if member.fixed else "member", f"user-{i}"
        key = (kind == "fixed", member.strategy, text)
        if key not in ids:
            ids[key] = len(ids)
            rows.append(given_norm(0, ids[key], "scenario", "initial", text))
        agents.append(
            UltimatumAgent(
                name=name,
                kind=kind,
                fixed=member.fixed,
                label=member.strategy,
                norm=ids[key],
                strategy=text,
            )
        )
    return agents, rows


def _shares(record: Episode) -> tuple[float, float]:
    """What proposer and responder got, as shares of the stake."""
    proposer, responder = record["proposer_part"], record["responder_part"]
    if record["decision"] != "accept" or proposer is None or responder is None:  # an accepted split has both parts
        return 0.0, 0.0
    return proposer / record["amount"], responder / record["amount"]


def _scores(records: Sequence[Episode], n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per agent: the mean share of the stake it got, its mean offered share as proposer, its acceptance rate."""
    got, count = np.zeros(n), np.zeros(n)
    offered: list[list[float]] = [[] for _ in range(n)]
    decided: list[list[bool]] = [[] for _ in range(n)]
    for r in records:
        mine, theirs = _shares(r)
        got[r["a"]] += mine
        got[r["b"]] += theirs
        count[r["a"]] += 1
        count[r["b"]] += 1
        if r["offered_share"] is not None:
            offered[r["a"]].append(r["offered_share"])
        if r["decision"] is not None:
            decided[r["b"]].append(r["decision"] == "accept")
    mean = lambda v: float(np.mean(v)) if v else float("nan")
    return (
        np.divide(got, count, out=np.full(n, np.nan), where=count > 0),
        np.array([mean(v) for v in offered]),
        np.array([mean(v) for v in decided]),
    )


def _r6(value: SupportsFloat) -> float | str:
    """A table's number, rounded; a missing one (NaN) as ""."""
    return "" if value != value else round(float(value), 6)


def _rows(
    g: int,
    agents: list[UltimatumAgent],
    records: Sequence[Episode],
    seconds: float,
) -> tuple[list[EpisodeRow], list[MemberPlay], GenerationRow]:
    """The generation's episode rows, population rows and generations row."""
    n = len(agents)
    scores, offered, accepted = _scores(records, n)
    episodes = []
    for r in records:
        proposer_share, responder_share = _shares(r)
        episodes.append(
            EpisodeRow(
                generation=g,
                index=r["index"],
                proposer=r["a"],
                responder=r["b"],
                amount=r["amount"],
                currency=r["currency"],
                proposal=r["proposal"],
                proposal_legal=r["proposal_legal"],
                offered_share=_r6(r["offered_share"]) if r["offered_share"] is not None else "",
                response=r["response"] or "",
                decision=r["decision"] or "",
                proposer_share=_r6(proposer_share),
                responder_share=_r6(responder_share),
            )
        )
    population = [
        MemberPlay(
            **member_row(g, i, a),
            score=_r6(scores[i]),
            offered_share=_r6(offered[i]),
            acceptance=_r6(accepted[i]),
        )
        for i, a in enumerate(agents)
    ]
    legal = [r["offered_share"] for r in records if r["offered_share"] is not None]

    def offered_by(kind: str) -> float | str:
        shares = [
            r["offered_share"] for r in records if agents[r["a"]]["kind"] == kind and r["offered_share"] is not None
        ]
        return _r6(np.mean(shares)) if shares else ""

    decided = [r["decision"] == "accept" for r in records if r["decision"] is not None]
    illegal = sum((not r["proposal_legal"]) + (r["proposal_legal"] and r["decision"] is None) for r in records)
    generation = GenerationRow(
        generation=g,
        episodes=len(records),
        mean_offered_share=_r6(np.mean(legal)) if legal else "",
        acceptance_rate=_r6(np.mean(decided)) if decided else "",
        mean_score=_r6(np.nanmean(scores)),
        assistant_offered_share=offered_by(ASSISTANT),
        fixed_offered_share=offered_by("fixed"),
        members_offered_share=offered_by("member"),
        illegal_rate=_r6(illegal / max(1, 2 * len(records))),
        seconds=round(seconds, 3),
    )
    return episodes, population, generation


class UltimatumGame(
    PopulationGame[UltimatumSpec, UltimatumPopulation, list[Episode], None, list[float], UltimatumRevision]
):
    """The ultimatum game among principle-following members, SCAI's users and assistant: the population is the
    agents (name, kind, norm id, principle) and the next norm id; every pair of neighbours meets each generation.
    Its play is the generation's episodes, its scores each agent's mean share of the stake."""

    edit_state = staticmethod(edit_principle)  # a fork's state.agents.I.strategy=TEXT: a norm of its own
    print_table = staticmethod(print_table)

    columns = COLUMNS

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf | None) -> None:
        super().__init__(scenario, model)
        _, self.neighbours = network_of(self.block.agents, self.block.network, scenario.seed)
        self.pairs = edge_pairs(self.neighbours)
        self.players = Players(scenario, self.model)

    def start(self) -> tuple[UltimatumPopulation, Rows]:
        return first_principles(self.neighbours, _start(self.scenario))

    async def play(self, population: UltimatumPopulation, g: int, pairs: None) -> list[Episode]:
        return await play_generation(self.scenario, self.players, population["agents"], g, self.pairs)

    def score(self, population: UltimatumPopulation, g: int, records: list[Episode]) -> list[float]:
        return [float(s) for s in _scores(records, len(population["agents"]))[0]]

    async def revise(
        self, population: UltimatumPopulation, g: int, records: list[Episode], scores: list[float]
    ) -> UltimatumRevision:
        agents, next_id = population["agents"], population["next_id"]
        if g + 1 >= self.block.generations:
            return {"agents": agents, "norms": [], "revisions": [], "next_id": next_id}
        following, norms, revisions, next_id = await revise_agents(
            self.scenario, self.players, agents, g, records, np.array(scores), self.neighbours, next_id
        )
        return {"agents": following, "norms": norms, "revisions": revisions, "next_id": next_id}

    def next_agents(self, state: GenerationState) -> UltimatumPopulation:
        revised = self.generation(state).revised
        return {"agents": revised["agents"], "next_id": revised["next_id"]}

    def held(self, agents: UltimatumPopulation) -> list[str]:
        """Each agent's principle text (a fixed member's and the assistant's too), as population.csv's `strategy`."""
        return [a["strategy"] for a in agents["agents"]]

    def record(self, state: GenerationState, seconds: float) -> Rows:
        step = self.generation(state)
        episodes, population, generation = _rows(step.g, step.agents["agents"], step.played, seconds)
        return {
            EPISODES: episodes,
            POPULATION: population,
            GENERATIONS: [generation],
            NORMS_TABLE: step.revised["norms"],
            REVISIONS: step.revised["revisions"],
        }

    figure_file = "ultimatum.png"

    def figure(self, path: Path) -> Figure:
        from sandbox.population.games.ultimatum.report import plot_ultimatum
        from sandbox.population.report.caption import figure_title

        return plot_ultimatum(read_csv(path / GENERATIONS), title=figure_title(path))

    def finish(self, run_dir: RunDirectory, models: Mapping[str, BaseChatModel] | None) -> None:
        roles = self.spec.roles(self.block)
        specs = {role: model_label(self.scenario, models, role) for role in roles}
        _finish(run_dir, self.scenario, specs, lambda: self.figure(run_dir.path))


def _finish(
    run_dir: RunDirectory, scenario: PopulationScenarioSettings, specs: dict[str, str], figure: Callable[[], Figure]
) -> None:
    from sandbox.population.norm_map import norm_map_summary

    path, block = run_dir.path, scenario.population
    gens = read_csv(path / GENERATIONS)
    revisions = read_csv(path / REVISIONS)
    finish_llm_run(
        run_dir,
        {
            **summary_head(scenario, "ultimatum"),
            "rule": block.revision.rule,
            "network": block.network.kind,
            "offered_share_by_generation": listed(gens["mean_offered_share"]),
            "members_offered_share_by_generation": listed(gens["members_offered_share"]),
            "assistant_offered_share_by_generation": listed(gens["assistant_offered_share"]),
            "fixed_offered_share_by_generation": listed(gens["fixed_offered_share"]),
            "acceptance_by_generation": listed(gens["acceptance_rate"]),
            "norm_versions": int(read_csv(path / NORMS_TABLE)["norm"].nunique()),
            "revisions_changed": int(revisions["outcome"].isin(["new", "copied"]).sum()),
            "illegal_revisions": int((revisions["outcome"] == "illegal").sum()),
            "illegal_rate": float((gens["illegal_rate"] * gens["episodes"]).sum() / gens["episodes"].sum()),
            "models": specs,
            **norm_map_summary(path),
        },
        figure,
        UltimatumGame.figure_file,
    )
