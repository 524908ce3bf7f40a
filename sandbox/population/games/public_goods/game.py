"""The public goods game in a population (Fehr & Gächter 2000; Fischbacher & Gächter 2010): a period a generation.

Each period the population is cut into groups (`game.matching`: the same groups every period, or new ones drawn
from the period's node of the seed tree), every member contributes to its group's public account (`rules`), and
with `game.punishment` every member then assigns each groupmate points. Scripted members follow their type
(`rules.contribute`, `rules.punish`) from what their group did the last period; LLM members follow their norm,
shown their group's last `game.shown` periods (`prompts/population/public_goods/`), and an answer without a
readable contribution (or points) is asked again up to `game.retries` times, then recorded as an illegal move: it
contributes nothing (assigns no point). Nobody revises a norm: members adapt through what they saw
(`revision.rule: memory`).

Run directory: `population.csv` (period x agent: its group, contribution, points assigned and received, payoffs
before and after punishment, validity), `punishments.csv` (every point given: the period, group, punisher, target),
`norms.csv` (the LLM members' norms), `generations.csv` (the mean contribution, overall and by member, the mean
payoffs, the points per agent, the illegal rate), `edges.csv` (empty: groups are drawn from everyone),
`summary.json`, `contributions.png`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from pathlib import Path

import numpy as np
from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure
from typing_extensions import TypedDict

from sandbox.base.files import read_csv
from sandbox.base.seeding import Branch, generator
from sandbox.core.run_dir import RunDirectory
from sandbox.core.steps import StateEdit
from sandbox.engine.generations import GenerationState, Rows
from sandbox.population.game import ModelOf, PopulationGame
from sandbox.population.games.public_goods.players import GoodsMember, Players, Seen
from sandbox.population.games.public_goods.report import (
    MemberPeriod,
    PeriodRow,
    PunishmentRow,
    generations_columns,
    plot_contributions,
    print_table,
)
from sandbox.population.games.public_goods.rules import TYPES, contribute, group_payoffs, groups_of, punish
from sandbox.population.games.public_goods.spec import PublicGoodsSpec
from sandbox.population.llm_session import finish_llm_run, model_label
from sandbox.population.revision.texts import NORMS_COLUMNS, NormRow, edit_principle, given_norm
from sandbox.population.settings import PopulationScenarioSettings, place_members
from societies.norms import NORMS

__all__ = ["GoodsPopulation", "Period", "PublicGoodsGame", "member_label"]

POPULATION, GENERATIONS, PUNISHMENTS, NORMS_TABLE, EDGES = (
    "population.csv",
    "generations.csv",
    "punishments.csv",
    "norms.csv",
    "edges.csv",
)


class GoodsPopulation(TypedDict):
    """The population: its members, the groups with partner matching (None: drawn anew each period), and the id the
    run's next norm takes."""

    agents: list[GoodsMember]
    groups: list[list[int]] | None
    next_id: int


class Period(TypedDict):
    """A period's play: the groups, each member's contribution, whether it was legal and the attempts it took, every
    point given ([punisher, target, points], sorted), and whether each member's points were legal."""

    groups: list[list[int]]
    contributions: list[int]
    valid: list[bool]
    attempts: list[int]
    points: list[list[int]]
    punish_valid: list[bool]


class PeriodScores(TypedDict):
    """Each member's payoff before and after punishment, and the points it assigned and received."""

    first: list[float]
    payoff: list[float]
    assigned: list[int]
    received: list[int]


def member_label(strategy: str, index: int) -> str:
    """A member's name in tables and figures: its scripted type or library norm, else `norm K` (K its index)."""
    return strategy if strategy in TYPES or strategy in NORMS.names() else f"norm {index}"


class PublicGoodsGame(
    PopulationGame[PublicGoodsSpec, GoodsPopulation, Period, list[list[int]], PeriodScores, GoodsPopulation]
):
    """The public goods game: the population is its members (kind, norm, what their group did the last periods)
    and, with partner matching, the groups; a period's pairs are its groups, its revision the members' memory."""

    figure_file = "contributions.png"
    print_table = staticmethod(print_table)

    @staticmethod
    def edit_state(population: GoodsPopulation, name: str, value: object, generation: int) -> StateEdit:
        """A fork's state edit: `agents.I.strategy=TEXT` gives LLM member I that norm (a norm of its own, in
        norms.csv); a scripted member has no norm to give; the rest as `edit_principle` says."""
        parts = name.split(".")
        if len(parts) == 3 and parts[0] == "agents" and parts[1].isdigit() and parts[2] == "strategy":
            agents = population["agents"]
            if int(parts[1]) < len(agents) and agents[int(parts[1])]["kind"] != "llm":
                raise ValueError(
                    f"{name}: member {parts[1]} is a scripted {agents[int(parts[1])]['kind']}, with no norm"
                )
        return edit_principle(population, name, value, generation)

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf | None) -> None:
        super().__init__(scenario, model)
        block = self.block
        self.labels = [member_label(m.strategy, i) for i, m in enumerate(block.members)]
        self.columns = {
            POPULATION: tuple(MemberPeriod.__annotations__),
            PUNISHMENTS: tuple(PunishmentRow.__annotations__),
            NORMS_TABLE: NORMS_COLUMNS,
            EDGES: ("a", "b"),
            GENERATIONS: generations_columns(self.labels),
        }
        self._players: Players | None = None
        self.rules = self.spec.conditional()

    @property
    def players(self) -> Players:
        if self._players is None:
            self._players = Players(self.scenario, self.model("user"))
        return self._players

    def start(self) -> tuple[GoodsPopulation, Rows]:
        block = self.block
        agents: list[GoodsMember] = []
        rows: list[NormRow] = []
        norms: dict[str, int] = {}
        for i, m in enumerate(place_members(self.scenario)):
            member = block.members[int(m)]
            scripted = member.strategy in TYPES
            text = (
                ""
                if scripted
                else NORMS.get(member.strategy).text
                if member.strategy in NORMS.names()
                else member.strategy
            )
            if text and text not in norms:
                norms[text] = len(norms)
                rows.append(given_norm(0, norms[text], "scenario", "initial", text))
            agents.append(
                GoodsMember(
                    name=f"member{i}",
                    member=int(m),
                    kind=member.strategy if scripted else "llm",
                    norm=norms[text] if text else None,
                    strategy=text,
                    history=[],  # what it saw of each period played
                    belief=self.rules.belief_start if member.strategy in TYPES else None,
                )
            )
        groups = groups_of(block.agents, self.spec.group_size, None) if self.spec.matching == "partner" else None
        return {"agents": agents, "groups": groups, "next_id": len(norms)}, {NORMS_TABLE: rows, EDGES: []}

    def pair(self, population: GoodsPopulation, g: int) -> list[list[int]]:
        if population["groups"] is not None:
            return population["groups"]
        return groups_of(self.block.agents, self.spec.group_size, generator(self.scenario.seed, Branch.EPOCH, g))

    async def play(self, population: GoodsPopulation, g: int, groups: list[list[int]]) -> Period:
        """The period's contributions (the LLM members' asked concurrently), then with punishment the points."""
        agents, spec = population["agents"], self.spec
        n = len(agents)
        contributions, valid, attempts = [0] * n, [True] * n, [1] * n
        asks: dict[int, Awaitable[tuple[int | None, int]]] = {}
        for i, agent in enumerate(agents):
            if agent["kind"] == "llm":
                asks[i] = self.players.contribution(agent, g, i)
                continue
            last = agent["history"][-1] if agent["history"] else None
            belief = agent["belief"]
            assert belief is not None  # a scripted type holds one
            contributions[i] = contribute(
                agent["kind"],
                spec.endowment,
                belief=belief,
                others_last=float(np.mean(last["others"])) if last else None,
                own_last=last["own"] if last else None,
                received_last=last["received"] if last else 0,
                mpcr=spec.mpcr,
                effect=spec.point_effect,
                rules=self.rules,
                punishment=spec.punishment,
            )
        for i, (amount, tries) in zip(asks, await asyncio.gather(*asks.values())):
            contributions[i], valid[i], attempts[i] = (amount or 0), amount is not None, tries
        points: list[list[int]] = []  # [punisher, target, points] of every point given
        punish_valid = [True] * n
        if spec.punishment:
            points, punish_valid = await self._punish(agents, g, groups, contributions)
        return {
            "groups": groups,
            "contributions": contributions,
            "valid": valid,
            "attempts": attempts,
            "points": points,
            "punish_valid": punish_valid,
        }

    async def _punish(
        self, agents: list[GoodsMember], g: int, groups: list[list[int]], contributions: list[int]
    ) -> tuple[list[list[int]], list[bool]]:
        spec, points, punish_valid = self.spec, [], [True] * len(agents)
        asks: dict[int, Awaitable[tuple[list[int] | None, int]]] = {}
        others_of: dict[int, list[int]] = {}
        for group in groups:
            total = sum(contributions[j] for j in group)
            for i in group:
                others_of[i] = [j for j in group if j != i]
                if agents[i]["kind"] == "llm":
                    income = spec.endowment - contributions[i] + spec.mpcr * total
                    shown = [(agents[j]["name"], contributions[j]) for j in others_of[i]]
                    asks[i] = self.players.points(agents[i], contributions[i], shown, income, g, i)
                else:
                    given = punish(
                        agents[i]["kind"],
                        contributions[i],
                        [contributions[j] for j in others_of[i]],
                        rate=spec.rate,
                        max_points=spec.max_points,
                    )
                    points += [[i, j, p] for j, p in zip(others_of[i], given) if p]
        for i, (answer, _) in zip(asks, await asyncio.gather(*asks.values())):
            punish_valid[i] = answer is not None
            points += [[i, j, p] for j, p in zip(others_of[i], answer or []) if p]
        return sorted(points), punish_valid

    def score(self, population: GoodsPopulation, g: int, played: Period) -> PeriodScores:
        """Each member's payoffs before and after punishment, and the points it assigned and received."""
        spec, n = self.spec, len(population["agents"])
        first, final = np.zeros(n), np.zeros(n)
        assigned, received = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        groups = played["groups"]
        group_of = {a: k for k, group in enumerate(groups) for a in group}
        matrices = [np.zeros((len(group), len(group))) for group in groups]  # [giver, receiver] within each group
        for i, j, p in played["points"]:  # a point is given within a group
            assigned[i] += p
            received[j] += p
            matrices[group_of[i]][groups[group_of[i]].index(i), groups[group_of[i]].index(j)] = p
        for group, matrix in zip(groups, matrices):
            own = [played["contributions"][a] for a in group]
            f, p_ = group_payoffs(
                own, matrix if spec.punishment else None, spec.endowment, spec.mpcr, spec.point_cost, spec.point_effect
            )
            first[group], final[group] = f, p_
        return {
            "first": first.round(6).tolist(),
            "payoff": final.round(6).tolist(),
            "assigned": assigned.tolist(),
            "received": received.tolist(),
        }

    async def revise(
        self, population: GoodsPopulation, g: int, played: Period, scores: PeriodScores
    ) -> GoodsPopulation:
        """What each member saw this period joins its history (its memory: no norm is revised)."""
        contributions, agents = played["contributions"], population["agents"]
        following = list(agents)
        for group in played["groups"]:
            for i in group:
                seen = Seen(
                    period=g + 1,
                    own=contributions[i],
                    others=[contributions[j] for j in group if j != i],
                    income=scores["payoff"][i],
                    received=scores["received"][i],
                )
                keep = self.spec.shown if agents[i]["kind"] == "llm" else 1  # a scripted type reads the last only
                history = ([*agents[i]["history"], seen])[-keep:] if keep else []
                belief = agents[i]["belief"]
                if belief is not None:
                    belief = self.rules.next_belief(belief, float(np.mean(seen["others"])))
                following[i] = {**agents[i], "history": history, "belief": belief}
        return {**population, "agents": following}

    def held(self, agents: GoodsPopulation) -> list[str]:
        """Each member's scripted type, or an LLM member's norm text (population.csv's `kind`, its `norm`'s text)."""
        return [a["strategy"] if a["kind"] == "llm" else a["kind"] for a in agents["agents"]]

    def next_agents(self, state: GenerationState) -> GoodsPopulation:
        return self.generation(state).revised

    def record(self, state: GenerationState, seconds: float) -> Rows:
        step = self.generation(state)
        g, played, scores = step.g, step.played, step.scores
        agents, n = step.agents["agents"], self.block.agents
        group_of = {a: k for k, group in enumerate(played["groups"]) for a in group}
        rows = [
            MemberPeriod(
                generation=g,
                agent=i,
                name=agent["name"],
                kind=agent["kind"],
                norm="" if agent["norm"] is None else agent["norm"],
                group=group_of[i],
                belief="" if agent["belief"] is None else agent["belief"],
                contribution=played["contributions"][i],
                valid=played["valid"][i],
                attempts=played["attempts"][i],
                assigned=scores["assigned"][i],
                received=scores["received"][i],
                punish_valid=played["punish_valid"][i],
                first_payoff=scores["first"][i],
                payoff=scores["payoff"][i],
            )
            for i, agent in enumerate(agents)
        ]
        contributions = np.array(played["contributions"], dtype=float)
        members = np.array([agent["member"] for agent in agents])
        by_member = {
            f"contribution {label}": round(float(contributions[members == k].mean()), 6) if (members == k).any() else ""
            for k, label in enumerate(self.labels)
        }
        llm = [i for i, agent in enumerate(agents) if agent["kind"] == "llm"]
        asked = len(llm) * (2 if self.spec.punishment else 1)
        illegal = sum(not played["valid"][i] for i in llm) + sum(not played["punish_valid"][i] for i in llm)
        period = PeriodRow(
            generation=g,
            mean_contribution=round(float(contributions.mean()), 6),
            mean_first_payoff=round(float(np.mean(scores["first"])), 6),
            mean_payoff=round(float(np.mean(scores["payoff"])), 6),
            points_per_agent=round(float(np.sum(scores["assigned"])) / n, 6),
            punished_share=round(float(np.mean(np.array(scores["received"]) > 0)), 6),
            illegal_rate=round(illegal / asked, 6) if asked else 0.0,
            seconds=round(seconds, 4),
        )
        generation: dict[str, object] = {**period, **by_member}  # the header puts each member's after the mean
        punishments = [
            PunishmentRow(
                generation=g, group=group_of[i], punisher=agents[i]["name"], target=agents[j]["name"], points=p
            )
            for i, j, p in played["points"]
        ]
        return {POPULATION: rows, GENERATIONS: [generation], PUNISHMENTS: punishments}

    def figure(self, path: Path) -> Figure:
        from sandbox.population.report.caption import figure_title

        return plot_contributions(read_csv(path / GENERATIONS), self.spec, title=figure_title(path))

    def finish(self, run_dir: RunDirectory, models: Mapping[str, BaseChatModel] | None) -> None:
        spec, block = self.spec, self.block
        gens = read_csv(run_dir.path / GENERATIONS)
        summary = {
            "scenario": self.scenario.name,
            "agents": block.agents,
            "generations": block.generations,
            "game": "public_goods",
            "group_size": spec.group_size,
            "endowment": spec.endowment,
            "mpcr": spec.mpcr,
            "matching": spec.matching,
            "punishment": spec.punishment,
            "members": {label: m.share for label, m in zip(self.labels, block.members)},
            "contribution_by_period": gens["mean_contribution"].round(4).tolist(),
            "mean_contribution": round(float(gens["mean_contribution"].mean()), 4),
            "final_contribution": round(float(gens["mean_contribution"].iloc[-1]), 4),
            "points_per_agent_by_period": gens["points_per_agent"].round(4).tolist(),
            "mean_payoff": round(float(gens["mean_payoff"].mean()), 4),
            "illegal_rate": round(float(gens["illegal_rate"].mean()), 4),
            "model": model_label(self.scenario, models) if spec.roles(block) else "none (scripted types)",
        }
        finish_llm_run(run_dir, summary, lambda: self.figure(run_dir.path), self.figure_file)
