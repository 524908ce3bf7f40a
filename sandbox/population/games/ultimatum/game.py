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

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal, SupportsFloat

import numpy as np
from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure
from typing_extensions import TypedDict

from agents.assistant import PolicyFollowingAssistant, library_policies
from agents.meta import Interaction, MetaLM, Revision
from agents.user import NormFollowingUser
from sandbox.base.files import read_csv
from sandbox.base.seeding import Branch, call_seed, generator, seed_node
from sandbox.core.run_dir import RunDirectory
from sandbox.engine.generations import GenerationState, Rows
from sandbox.llm.contracts import CallInfo
from sandbox.population.game import ModelOf, PopulationGame
from sandbox.population.games.ultimatum.report import print_table
from sandbox.population.games.ultimatum.spec import UltimatumSpec
from sandbox.population.llm_session import MemberRow, finish_llm_run, listed, member_row, model_label, summary_head
from sandbox.population.network import Neighbours, edge_pairs, network_of
from sandbox.population.revision.texts import (
    NORMS_COLUMNS,
    REVISIONS_COLUMNS,
    NormRow,
    PrincipledAgent,
    PrincipledPopulation,
    PrincipledRevision,
    RevisionRow,
    edit_principle,
    first_principles,
    revise_principles,
)
from sandbox.population.settings import ASSISTANT, PopulationScenarioSettings, place_members, spec_of
from sandbox.rules.ultimatum import Stake
from sandbox.rules.ultimatum_episode import play_ultimatum
from sandbox.society.nodes import draw_stakes
from societies.contracts import UserProfile
from societies.manners import MANNERS
from societies.norms import NORMS, resolve_norm

__all__ = ["Episode", "UltimatumAgent", "UltimatumGame"]

POPULATION, GENERATIONS, EPISODES, NORMS_TABLE, REVISIONS, EDGES = (
    "population.csv",
    "generations.csv",
    "episodes.csv",
    "norms.csv",
    "revisions.csv",
    "edges.csv",
)


class UltimatumAgent(PrincipledAgent):
    """A member who follows a principle, and the strategy its scenario member names (a library norm's name, a
    principle's text, or the assistant): a fixed member plays that norm as SCAI's user."""

    label: str


UltimatumPopulation = PrincipledPopulation[UltimatumAgent]  # the agents and the next norm id
UltimatumRevision = PrincipledRevision[UltimatumAgent]  # the next agents, the new norms, the revisions, the next id


class Episode(TypedDict):
    """An episode as SCAI's `play_ultimatum` records it (its ids, the players' names, the stake, both moves and
    their illegal answers, the parts and payoffs, an instructed player's style), and the players' indices: `a`
    proposed to `b`."""

    run: int
    epoch: int
    episode: str
    index: int
    proposer: str
    responder: str
    amount: int
    currency: str
    proposal: str
    proposal_legal: bool
    proposal_illegal_answers: int
    proposer_part: int | None
    responder_part: int | None
    offered_share: float | None
    response: str | None
    decision: str | None
    decision_legal: bool | None
    response_illegal_answers: int
    proposer_payoff: int | None
    responder_payoff: int | None
    proposer_instruction: str | None
    responder_instruction: str | None
    a: int
    b: int


class EpisodeRow(TypedDict):
    """A row of episodes.csv: the generation, the episode, the proposer's and the responder's indices, the stake,
    the proposal and whether it was legal, the offered share, the response and the decision ("" for none), and the
    shares of the stake each got."""

    generation: int
    index: int
    proposer: int
    responder: int
    amount: int
    currency: str
    proposal: str
    proposal_legal: bool
    offered_share: float | str
    response: str
    decision: str
    proposer_share: float | str
    responder_share: float | str


class MemberPlay(MemberRow):
    """A row of population.csv: the member, its mean share of the stake, its mean offered share as proposer and its
    acceptance rate as responder ("" for none)."""

    score: float | str
    offered_share: float | str
    acceptance: float | str


class GenerationRow(TypedDict):
    """A row of generations.csv: the episodes, the mean offered share, the acceptance rate, the mean score, the
    offered shares of the assistant, the fixed members and the members ("" for none), the share of illegal moves, the
    seconds so far."""

    generation: int
    episodes: int
    mean_offered_share: float | str
    acceptance_rate: float | str
    mean_score: float | str
    assistant_offered_share: float | str
    fixed_offered_share: float | str
    members_offered_share: float | str
    illegal_rate: float | str
    seconds: float


COLUMNS = {
    EPISODES: tuple(EpisodeRow.__annotations__),
    POPULATION: tuple(MemberPlay.__annotations__),
    NORMS_TABLE: NORMS_COLUMNS,
    REVISIONS: REVISIONS_COLUMNS,
    GENERATIONS: tuple(GenerationRow.__annotations__),
    EDGES: ("a", "b"),
}


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
            rows.append(
                NormRow(
                    generation=0,
                    norm=ids[key],
                    author="scenario",
                    rule="initial",
                    strategy=text,
                    found=True,
                    parents="",
                    justification="",
                    evidence="",
                )
            )
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


class _Players:
    """The generation's players and MetaLMs, through the run's model stack."""

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf) -> None:
        self.scenario, self.game = scenario, spec_of(scenario, UltimatumSpec)
        self.model = model  # a role's model is built when first used: an unread role's backend never is

    # SCAI's user or assistant: an `UltimatumPlayer`, save that the protocol asks settable `agent_id` and `remarks`
    # where they give read-only ones (a property, a frozen field)
    def player(self, agent: UltimatumAgent, i: int) -> Any:
        game = self.game
        if agent["kind"] == "fixed":
            norm = (
                NORMS.get(agent["label"])
                if agent["label"] in NORMS.names()
                else resolve_norm(f"norm{agent['norm']}", agent["strategy"])
            )
            return NormFollowingUser(UserProfile(i, norm, MANNERS.get("neutral")), self.model("user"), rules=game.rules)
        model = self.model(ASSISTANT if agent["kind"] == ASSISTANT else "user")
        return PolicyFollowingAssistant(
            policy=agent["strategy"],
            model=model,
            agent_id=agent["name"],
            rules=game.rules,
            reading=game.reading,
            responder=game.responder,
        )

    async def revise(self, agent: UltimatumAgent, interactions: Sequence[Interaction], g: int, i: int) -> Revision:
        meta = MetaLM(self.model("meta"), max_reasks=self.game.meta_reasks)
        seeds = [call_seed(self.scenario.seed, Branch.META, g, i, a) for a in range(self.game.meta_reasks + 2)]
        call = CallInfo(role="meta", agent=agent["name"], run=0, epoch=g, step="revise")
        return await meta.revise(agent["strategy"], interactions, seeds=seeds, call=call)


def _interaction(record: Episode, flex: str) -> Interaction:
    """An episode as a MetaLM reads it, `flex` (an agent's name, or the assistant) the flex-policy agent."""
    return Interaction.from_episode(record, lambda name: name == flex)


def _shares(record: Episode) -> tuple[float, float]:
    """What proposer and responder got, as shares of the stake."""
    proposer, responder = record["proposer_part"], record["responder_part"]
    if record["decision"] != "accept" or proposer is None or responder is None:  # an accepted split has both parts
        return 0.0, 0.0
    return proposer / record["amount"], responder / record["amount"]


async def _generation(
    scenario: PopulationScenarioSettings,
    players: _Players,
    agents: list[UltimatumAgent],
    g: int,
    pairs: list[tuple[int, int]],
) -> list[Episode]:
    game = spec_of(scenario, UltimatumSpec)
    episodes = [(a, b) for _ in range(game.rounds) for x, y in pairs for a, b in ((x, y), (y, x))]
    amounts, currencies = draw_stakes(
        SimpleNamespace(seed=scenario.seed, game=game), 0, g, generator(scenario.seed, Branch.EPOCH, g), len(episodes)
    )
    lineup = [players.player(a, i) for i, a in enumerate(agents)]

    async def one(k: int, a: int, b: int) -> Episode:
        stake = Stake(amounts[k], game.currencies[currencies[k]])
        record = await play_ultimatum(
            lineup[a],
            lineup[b],
            stake,
            seed=seed_node(scenario.seed, Branch.EPISODE, g, k),
            info={"run": 0, "epoch": g, "episode": f"g{g}-i{k:05d}", "index": k},
            max_reasks=game.max_reasks,
        )
        return Episode(
            run=record["run"],
            epoch=record["epoch"],
            episode=record["episode"],
            index=record["index"],
            proposer=record["proposer"],
            responder=record["responder"],
            amount=record["amount"],
            currency=record["currency"],
            proposal=record["proposal"],
            proposal_legal=record["proposal_legal"],
            proposal_illegal_answers=record["proposal_illegal_answers"],
            proposer_part=record["proposer_part"],
            responder_part=record["responder_part"],
            offered_share=record["offered_share"],
            response=record["response"],
            decision=record["decision"],
            decision_legal=record["decision_legal"],
            response_illegal_answers=record["response_illegal_answers"],
            proposer_payoff=record["proposer_payoff"],
            responder_payoff=record["responder_payoff"],
            proposer_instruction=record["proposer_instruction"],
            responder_instruction=record["responder_instruction"],
            a=a,
            b=b,
        )

    return list(await asyncio.gather(*(one(k, a, b) for k, (a, b) in enumerate(episodes))))


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


async def _revise(
    scenario: PopulationScenarioSettings,
    players: _Players,
    agents: list[UltimatumAgent],
    g: int,
    records: Sequence[Episode],
    scores: np.ndarray,
    neighbours: Neighbours,
    next_id: int,
) -> tuple[list[UltimatumAgent], list[NormRow], list[RevisionRow], int]:
    """The agents after generation `g`'s revision (`revise_principles`): the assistant's MetaLM reads a sample of the
    generation's interactions; under reflect, each member's MetaLM reads its own."""
    revision, game = scenario.population.revision, spec_of(scenario, UltimatumSpec)

    def own(i: int) -> list[Episode]:
        return [r for r in records if i in (r["a"], r["b"])]

    def ask(i: int) -> Awaitable[Revision] | None:
        agent = agents[i]
        if agent["kind"] == ASSISTANT:
            order = generator(scenario.seed, Branch.META, g, i).permutation(len(records))[: game.assistant_interactions]
            return players.revise(agent, [_interaction(records[k], agent["name"]) for k in sorted(order)], g, i)
        if revision.rule == "reflect":
            return players.revise(agent, [_interaction(r, agent["name"]) for r in own(i)], g, i)
        return None

    def evidence(i: int) -> str:
        if agents[i]["kind"] == ASSISTANT:
            return f"{min(len(records), game.assistant_interactions)} interactions of the generation"
        return f"{len(own(i))} own interactions"

    return await revise_principles(
        agents,
        g,
        scores,
        neighbours,
        rule=revision.rule,
        beta=revision.beta,
        rng=generator(scenario.seed, Branch.META, g),
        ask=ask,
        evidence=evidence,
        next_id=next_id,
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
        self.players = _Players(scenario, self.model)

    def start(self) -> tuple[UltimatumPopulation, Rows]:
        return first_principles(self.neighbours, _start(self.scenario))

    async def play(self, population: UltimatumPopulation, g: int, pairs: None) -> list[Episode]:
        return await _generation(self.scenario, self.players, population["agents"], g, self.pairs)

    def score(self, population: UltimatumPopulation, g: int, records: list[Episode]) -> list[float]:
        return [float(s) for s in _scores(records, len(population["agents"]))[0]]

    async def revise(
        self, population: UltimatumPopulation, g: int, records: list[Episode], scores: list[float]
    ) -> UltimatumRevision:
        agents, next_id = population["agents"], population["next_id"]
        if g + 1 >= self.block.generations:
            return {"agents": agents, "norms": [], "revisions": [], "next_id": next_id}
        following, norms, revisions, next_id = await _revise(
            self.scenario, self.players, agents, g, records, np.array(scores), self.neighbours, next_id
        )
        return {"agents": following, "norms": norms, "revisions": revisions, "next_id": next_id}

    def next_agents(self, state: GenerationState) -> UltimatumPopulation:
        revised = self.generation(state).revised
        return {"agents": revised["agents"], "next_id": revised["next_id"]}

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

        return plot_ultimatum(read_csv(path / GENERATIONS), title=self.scenario.name)

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
