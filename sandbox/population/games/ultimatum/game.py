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
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure

from agents.assistant import PolicyFollowingAssistant, library_policies
from agents.meta import Interaction, MetaLM
from agents.user import NormFollowingUser
from sandbox.base.files import read_csv
from sandbox.base.seeding import Branch, call_seed, generator, seed_node
from sandbox.core.run_dir import RunDirectory
from sandbox.engine.generations import GenerationState
from sandbox.llm.contracts import CallInfo
from sandbox.population.game import ModelOf, PopulationGame
from sandbox.population.games.ultimatum.report import print_table
from sandbox.population.games.ultimatum.spec import UltimatumSpec
from sandbox.population.llm_session import finish_llm_run, listed, member_columns, model_label, summary_head
from sandbox.population.network import Neighbours, edge_pairs, network_of
from sandbox.population.revision.texts import REVISIONS_COLUMNS, edit_principle, first_principles, revise_principles
from sandbox.population.settings import ASSISTANT, PopulationScenarioSettings, place_members, spec_of
from sandbox.rules.ultimatum import Stake
from sandbox.rules.ultimatum_episode import play_ultimatum
from sandbox.society.nodes import draw_stakes
from societies.contracts import UserProfile
from societies.manners import MANNERS
from societies.norms import NORMS, resolve_norm

__all__ = ["UltimatumGame"]

POPULATION, GENERATIONS, EPISODES, NORMS_TABLE, REVISIONS, EDGES = (
    "population.csv",
    "generations.csv",
    "episodes.csv",
    "norms.csv",
    "revisions.csv",
    "edges.csv",
)
COLUMNS = {
    EPISODES: [
        "generation",
        "index",
        "proposer",
        "responder",
        "amount",
        "currency",
        "proposal",
        "proposal_legal",
        "offered_share",
        "response",
        "decision",
        "proposer_share",
        "responder_share",
    ],
    POPULATION: [
        "generation",
        "agent",
        "name",
        "kind",
        "fixed",
        "norm",
        "strategy",
        "score",
        "offered_share",
        "acceptance",
    ],
    NORMS_TABLE: ["generation", "norm", "author", "rule", "strategy", "found", "parents", "justification", "evidence"],
    REVISIONS: REVISIONS_COLUMNS,
    GENERATIONS: [
        "generation",
        "episodes",
        "mean_offered_share",
        "acceptance_rate",
        "mean_score",
        "assistant_offered_share",
        "fixed_offered_share",
        "members_offered_share",
        "illegal_rate",
        "seconds",
    ],
    EDGES: ["a", "b"],
}


def _start(scenario: PopulationScenarioSettings) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    """The agents (name, kind, fixed, norm id, principle) and the first norms' rows."""
    block, game = scenario.population, spec_of(scenario, UltimatumSpec)
    agents: list[dict[str, Any]] = []
    rows: list[list[Any]] = []
    ids: dict[tuple[bool, str, str], int] = {}
    for i, m in enumerate(place_members(scenario)):
        member = block.members[int(m)]
        if member.strategy == ASSISTANT:
            choices = library_policies()
            text = game.assistant_policy or choices[int(generator(scenario.seed, Branch.POLICY).integers(len(choices)))]
            kind, name = ASSISTANT, ASSISTANT
        else:
            text = NORMS.get(member.strategy).text if member.strategy in NORMS.names() else member.strategy
            kind, name = "fixed" if member.fixed else "member", f"user-{i}"
        key = (kind == "fixed", member.strategy, text)
        if key not in ids:
            ids[key] = len(ids)
            rows.append([0, ids[key], "scenario", "initial", text, True, "", "", ""])
        agents.append(
            {
                "name": name,
                "kind": kind,
                "fixed": member.fixed,
                "label": member.strategy,
                "norm": ids[key],
                "strategy": text,
            }
        )
    return agents, rows


class _Players:
    """The generation's players and MetaLMs, through the run's model stack."""

    def __init__(self, scenario: PopulationScenarioSettings, model: Any) -> None:
        self.scenario, self.game = scenario, spec_of(scenario, UltimatumSpec)
        self.model = model  # a role's model is built when first used: an unread role's backend never is

    def player(self, agent: dict[str, Any], i: int) -> Any:
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

    async def revise(self, agent: dict[str, Any], interactions: Sequence[Interaction], g: int, i: int) -> Any:
        meta = MetaLM(self.model("meta"), max_reasks=self.game.meta_reasks)
        seeds = [call_seed(self.scenario.seed, Branch.META, g, i, a) for a in range(self.game.meta_reasks + 2)]
        call = CallInfo(role="meta", agent=agent["name"], run=0, epoch=g, step="revise")
        return await meta.revise(agent["strategy"], interactions, seeds=seeds, call=call)


def _interaction(record: dict[str, Any], flex: str) -> Interaction:
    """An episode as a MetaLM reads it, `flex` (an agent's name, or the assistant) the flex-policy agent."""
    return Interaction.from_episode(record, lambda name: name == flex)


def _shares(record: dict[str, Any]) -> tuple[float, float]:
    """What proposer and responder got, as shares of the stake."""
    if record["decision"] != "accept":
        return 0.0, 0.0
    return record["proposer_part"] / record["amount"], record["responder_part"] / record["amount"]


async def _generation(
    scenario: PopulationScenarioSettings,
    players: _Players,
    agents: list[dict[str, Any]],
    g: int,
    pairs: list[tuple[int, int]],
) -> list[dict[str, Any]]:
    game = spec_of(scenario, UltimatumSpec)
    episodes = [(a, b) for _ in range(game.rounds) for x, y in pairs for a, b in ((x, y), (y, x))]
    amounts, currencies = draw_stakes(
        SimpleNamespace(seed=scenario.seed, game=game), 0, g, generator(scenario.seed, Branch.EPOCH, g), len(episodes)
    )
    lineup = [players.player(a, i) for i, a in enumerate(agents)]

    async def one(k: int, a: int, b: int) -> dict[str, Any]:
        stake = Stake(amounts[k], game.currencies[currencies[k]])
        record = await play_ultimatum(
            lineup[a],
            lineup[b],
            stake,
            seed=seed_node(scenario.seed, Branch.EPISODE, g, k),
            info={"run": 0, "epoch": g, "episode": f"g{g}-i{k:05d}", "index": k},
            max_reasks=game.max_reasks,
        )
        return {**record, "a": a, "b": b}

    return list(await asyncio.gather(*(one(k, a, b) for k, (a, b) in enumerate(episodes))))


def _scores(records: Sequence[dict[str, Any]], n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    agents: list[dict[str, Any]],
    g: int,
    records: Sequence[dict[str, Any]],
    scores: np.ndarray,
    neighbours: Neighbours,
    next_id: int,
) -> tuple[list[dict[str, Any]], list[list[Any]], list[list[Any]], int]:
    """The agents after generation `g`'s revision (`revise_principles`): the assistant's MetaLM reads a sample of the
    generation's interactions; under reflect, each member's MetaLM reads its own."""
    revision, game = scenario.population.revision, spec_of(scenario, UltimatumSpec)

    def own(i: int) -> list[dict[str, Any]]:
        return [r for r in records if i in (r["a"], r["b"])]

    def ask(i: int) -> Any:
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


def _rows(
    g: int,
    agents: list[dict[str, Any]],
    records: Sequence[dict[str, Any]],
    seconds: float,
) -> tuple[list[list[Any]], list[list[Any]], list[Any]]:
    """The generation's episode rows, population rows and generations row."""
    n = len(agents)
    scores, offered, accepted = _scores(records, n)
    r6 = lambda v: "" if v != v else round(float(v), 6)
    episodes = [
        [
            g,
            r["index"],
            r["a"],
            r["b"],
            r["amount"],
            r["currency"],
            r["proposal"],
            r["proposal_legal"],
            r6(r["offered_share"]) if r["offered_share"] is not None else "",
            r["response"] or "",
            r["decision"] or "",
            *(r6(s) for s in _shares(r)),
        ]
        for r in records
    ]
    population = [
        [
            *member_columns(g, i, a),
            r6(scores[i]),
            r6(offered[i]),
            r6(accepted[i]),
        ]
        for i, a in enumerate(agents)
    ]
    legal = [r["offered_share"] for r in records if r["offered_share"] is not None]

    def offered_by(kind: str) -> Any:
        shares = [
            r["offered_share"] for r in records if agents[r["a"]]["kind"] == kind and r["offered_share"] is not None
        ]
        return r6(np.mean(shares)) if shares else ""

    decided = [r["decision"] == "accept" for r in records if r["decision"] is not None]
    illegal = sum((not r["proposal_legal"]) + (r["proposal_legal"] and r["decision"] is None) for r in records)
    generation = [
        g,
        len(records),
        r6(np.mean(legal)) if legal else "",
        r6(np.mean(decided)) if decided else "",
        r6(np.nanmean(scores)),
        offered_by(ASSISTANT),
        offered_by("fixed"),
        offered_by("member"),
        r6(illegal / max(1, 2 * len(records))),
        round(seconds, 3),
    ]
    return episodes, population, generation


class UltimatumGame(PopulationGame[UltimatumSpec]):
    """The ultimatum game among principle-following members, SCAI's users and assistant: the population is the
    agents (name, kind, norm id, principle) and the next norm id; every pair of neighbours meets each generation."""

    edit_state = staticmethod(edit_principle)  # a fork's state.agents.I.strategy=TEXT: a norm of its own
    print_table = staticmethod(print_table)

    columns = COLUMNS

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf | None) -> None:
        super().__init__(scenario, model)
        _, self.neighbours = network_of(self.block.agents, self.block.network, scenario.seed)
        self.pairs = edge_pairs(self.neighbours)
        self.players = _Players(scenario, self.model)

    def start(self) -> tuple[Any, dict[str, list[list[Any]]]]:
        return first_principles(self.neighbours, _start(self.scenario))

    async def play(self, population: Any, g: int, pairs: Any) -> Any:
        return await _generation(self.scenario, self.players, population["agents"], g, self.pairs)

    def score(self, population: Any, g: int, records: Any) -> Any:
        return _scores(records, len(population["agents"]))[0].tolist()

    async def revise(self, population: Any, g: int, records: Any, scores: Any) -> Any:
        agents, next_id = population["agents"], population["next_id"]
        if g + 1 >= self.block.generations:
            return {"agents": agents, "norms": [], "revisions": [], "next_id": next_id}
        following, norms, revisions, next_id = await _revise(
            self.scenario, self.players, agents, g, records, np.array(scores), self.neighbours, next_id
        )
        return {"agents": following, "norms": norms, "revisions": revisions, "next_id": next_id}

    def next_agents(self, state: GenerationState) -> Any:
        revised = state["revised"]
        return {"agents": revised["agents"], "next_id": revised["next_id"]}

    def record(self, state: GenerationState, seconds: float) -> dict[str, list[list[Any]]]:
        episodes, population, generation = _rows(
            state["generation"], state["agents"]["agents"], state["played"], seconds
        )
        return {
            EPISODES: episodes,
            POPULATION: population,
            GENERATIONS: [generation],
            NORMS_TABLE: state["revised"]["norms"],
            REVISIONS: state["revised"]["revisions"],
        }

    figure_file = "ultimatum.png"

    def figure(self, path: Path) -> Figure:
        from sandbox.population.games.ultimatum.report import plot_ultimatum

        return plot_ultimatum(read_csv(path / GENERATIONS), title=self.scenario.name)

    def finish(self, run_dir: RunDirectory, models: Mapping[str, BaseChatModel] | None) -> None:
        roles = self.spec.roles(self.block)
        specs = {role: model_label(self.scenario, models, role) for role in roles}
        _finish(run_dir, self.scenario, specs, lambda: self.figure(run_dir.path))


def _finish(run_dir: RunDirectory, scenario: PopulationScenarioSettings, specs: dict[str, str], figure: Any) -> None:
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
