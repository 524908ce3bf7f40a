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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from matplotlib.figure import Figure

from prompts import render, render_once
from sandbox.base.files import read_csv
from sandbox.base.seeding import Branch, call_seed, generator
from sandbox.core.run_dir import RunDirectory
from sandbox.core.steps import StateEdit
from sandbox.engine.generations import GenerationState, Rows
from sandbox.llm.contracts import CallInfo
from sandbox.llm.moves import note_move
from sandbox.llm.wrapper import acall
from sandbox.population.game import ModelOf, PopulationGame
from sandbox.population.games.public_goods.report import plot_contributions, print_table
from sandbox.population.games.public_goods.rules import (
    TYPES,
    contribute,
    group_payoffs,
    groups_of,
    parse_contribution,
    parse_points,
    punish,
)
from sandbox.population.games.public_goods.spec import PublicGoodsSpec
from sandbox.population.llm_session import finish_llm_run, model_label
from sandbox.population.revision.texts import edit_principle
from sandbox.population.settings import PopulationScenarioSettings, place_members, spec_of
from societies.norms import NORMS

__all__ = ["PublicGoodsGame", "member_label"]

POPULATION, GENERATIONS, PUNISHMENTS, NORMS_TABLE, EDGES = (
    "population.csv",
    "generations.csv",
    "punishments.csv",
    "norms.csv",
    "edges.csv",
)
POPULATION_COLUMNS = [
    "generation",
    "agent",
    "name",
    "kind",
    "norm",
    "group",
    "belief",
    "contribution",
    "valid",
    "attempts",
    "assigned",
    "received",
    "punish_valid",
    "first_payoff",
    "payoff",
]
NORMS_COLUMNS = ["generation", "norm", "author", "rule", "strategy", "found", "parents", "justification", "evidence"]


def member_label(strategy: str, index: int) -> str:
    """A member's name in tables and figures: its scripted type or library norm, else `norm K` (K its index)."""
    return strategy if strategy in TYPES or strategy in NORMS.names() else f"norm {index}"


class _Players:
    """The LLM members' calls: a contribution, and with punishment the points for each groupmate."""

    def __init__(self, scenario: PopulationScenarioSettings, model: BaseChatModel) -> None:
        self.scenario, self.model, self.game = scenario, model, spec_of(scenario, PublicGoodsSpec)

    def _system(self, agent: Mapping[str, Any]) -> str:
        game = self.game
        return render_once(
            "population/public_goods/system.j2",
            norm=agent["strategy"],
            member=agent["name"],
            size=game.group_size,
            periods=self.scenario.population.generations,
            endowment=game.endowment,
            mpcr=game.mpcr,
            punishment=game.punishment,
            max_points=game.max_points,
            point_cost=game.point_cost,
            point_effect=game.point_effect,
            matching=game.matching,
        )

    async def _ask(self, agent: Mapping[str, Any], prompt: str, g: int, i: int, step: str, parse: Any) -> Any:
        """The parsed answer (None: illegal after the retries) and the attempts made."""
        system = self._system(agent)
        for attempt in range(self.game.retries + 1):
            call = CallInfo(
                role="user", agent=agent["name"], run=0, epoch=g, episode=f"period{g}", step=step, attempt=attempt
            )
            seed = call_seed(self.scenario.seed, Branch.EPISODE, g, i, 0 if step == "contribute" else 1, attempt)
            answer = await acall(self.model, [SystemMessage(system), HumanMessage(prompt)], seed=seed, call=call)
            parsed = parse(str(answer.content))
            note_move(call, parsed)
            if parsed is not None:
                return parsed, attempt + 1
        return None, self.game.retries + 1

    async def contribution(self, agent: Mapping[str, Any], g: int, i: int) -> tuple[int | None, int]:
        game = self.game
        prompt = render(
            "population/public_goods/contribute.j2",
            history=agent["history"][-game.shown :] if game.shown else [],
            punishment=game.punishment,
            period=g + 1,
            periods=self.scenario.population.generations,
            endowment=game.endowment,
        )
        result: tuple[int | None, int] = await self._ask(
            agent, prompt, g, i, "contribute", lambda text: parse_contribution(text, game.endowment)
        )
        return result

    async def points(
        self, agent: Mapping[str, Any], own: int, others: Sequence[tuple[str, int]], income: float, g: int, i: int
    ) -> tuple[list[int] | None, int]:
        game = self.game
        prompt = render(
            "population/public_goods/punish.j2",
            period=g + 1,
            own=own,
            others=list(others),
            income=income,
            max_points=game.max_points,
            point_cost=game.point_cost,
            point_effect=game.point_effect,
        )
        names = [name for name, _ in others]
        result: tuple[list[int] | None, int] = await self._ask(
            agent, prompt, g, i, "punish", lambda text: parse_points(text, names, game.max_points)
        )
        return result


class PublicGoodsGame(PopulationGame[PublicGoodsSpec]):
    """The public goods game: the population is its members (kind, norm, what their group did the last periods)
    and, with partner matching, the groups."""

    figure_file = "contributions.png"
    print_table = staticmethod(print_table)

    @staticmethod
    def edit_state(population: Mapping[str, Any], name: str, value: Any, generation: int) -> StateEdit:
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
            POPULATION: POPULATION_COLUMNS,
            PUNISHMENTS: ["generation", "group", "punisher", "target", "points"],
            NORMS_TABLE: NORMS_COLUMNS,
            EDGES: ["a", "b"],
            GENERATIONS: [
                "generation",
                "mean_contribution",
                *(f"contribution {label}" for label in self.labels),
                "mean_first_payoff",
                "mean_payoff",
                "points_per_agent",
                "punished_share",
                "illegal_rate",
                "seconds",
            ],
        }
        self._players: _Players | None = None
        self.rules = self.spec.conditional()

    @property
    def players(self) -> _Players:
        if self._players is None:
            self._players = _Players(self.scenario, self.model("user"))
        return self._players

    def start(self) -> tuple[Any, Rows]:
        block, agents, rows = self.block, [], []
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
                rows.append([0, norms[text], "scenario", "initial", text, True, "", "", ""])
            agents.append(
                {
                    "name": f"member{i}",
                    "member": int(m),
                    "kind": member.strategy if scripted else "llm",
                    "norm": norms[text] if text else None,
                    "strategy": text,
                    "history": [],  # {period, own, others, income, received} of each period played
                    "belief": self.rules.belief_start if member.strategy in TYPES else None,
                }
            )
        groups = groups_of(block.agents, self.spec.group_size, None) if self.spec.matching == "partner" else None
        return {"agents": agents, "groups": groups, "next_id": len(norms)}, {NORMS_TABLE: rows, EDGES: []}

    def pair(self, population: Any, g: int) -> Any:
        if population["groups"] is not None:
            return population["groups"]
        return groups_of(self.block.agents, self.spec.group_size, generator(self.scenario.seed, Branch.EPOCH, g))

    async def play(self, population: Any, g: int, groups: Any) -> Any:
        """The period's contributions (the LLM members' asked concurrently), then with punishment the points."""
        agents, spec = population["agents"], self.spec
        n = len(agents)
        contributions, valid, attempts = [0] * n, [True] * n, [1] * n
        asks = {}
        for i, agent in enumerate(agents):
            if agent["kind"] == "llm":
                asks[i] = self.players.contribution(agent, g, i)
                continue
            last = agent["history"][-1] if agent["history"] else None
            contributions[i] = contribute(
                agent["kind"],
                spec.endowment,
                belief=agent["belief"],
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
        self, agents: list[dict[str, Any]], g: int, groups: list[list[int]], contributions: list[int]
    ) -> tuple[list[list[int]], list[bool]]:
        spec, points, punish_valid = self.spec, [], [True] * len(agents)
        asks: dict[int, Any] = {}
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
        for i, (given, _) in zip(asks, await asyncio.gather(*asks.values())):
            punish_valid[i] = given is not None
            points += [[i, j, p] for j, p in zip(others_of[i], given or []) if p]
        return sorted(points), punish_valid

    def score(self, population: Any, g: int, played: Any) -> Any:
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

    async def revise(self, population: Any, g: int, played: Any, scores: Any) -> Any:
        """What each member saw this period joins its history (its memory: no norm is revised)."""
        contributions, agents = played["contributions"], population["agents"]
        following = list(agents)
        for group in played["groups"]:
            for i in group:
                seen = {
                    "period": g + 1,
                    "own": contributions[i],
                    "others": [contributions[j] for j in group if j != i],
                    "income": scores["payoff"][i],
                    "received": scores["received"][i],
                }
                keep = self.spec.shown if agents[i]["kind"] == "llm" else 1  # a scripted type reads the last only
                history = ([*agents[i]["history"], seen])[-keep:] if keep else []
                belief = agents[i]["belief"]
                if belief is not None:
                    belief = self.rules.next_belief(belief, float(np.mean(seen["others"])))
                following[i] = {**agents[i], "history": history, "belief": belief}
        return {**population, "agents": following}

    def next_agents(self, state: GenerationState) -> Any:
        return state["revised"]

    def record(self, state: GenerationState, seconds: float) -> Rows:
        g, played, scores = state["generation"], state["played"], state["scores"]
        agents, n = state["agents"]["agents"], self.block.agents
        group_of = {a: k for k, group in enumerate(played["groups"]) for a in group}
        rows = [
            [
                g,
                i,
                agent["name"],
                agent["kind"],
                "" if agent["norm"] is None else agent["norm"],
                group_of[i],
                "" if agent["belief"] is None else agent["belief"],
                played["contributions"][i],
                played["valid"][i],
                played["attempts"][i],
                scores["assigned"][i],
                scores["received"][i],
                played["punish_valid"][i],
                scores["first"][i],
                scores["payoff"][i],
            ]
            for i, agent in enumerate(agents)
        ]
        contributions = np.array(played["contributions"], dtype=float)
        members = np.array([agent["member"] for agent in agents])
        by_member = [
            round(float(contributions[members == k].mean()), 6) if (members == k).any() else ""
            for k in range(len(self.labels))
        ]
        llm = [i for i, agent in enumerate(agents) if agent["kind"] == "llm"]
        asked = len(llm) * (2 if self.spec.punishment else 1)
        illegal = sum(not played["valid"][i] for i in llm) + sum(not played["punish_valid"][i] for i in llm)
        generation = [
            g,
            round(float(contributions.mean()), 6),
            *by_member,
            round(float(np.mean(scores["first"])), 6),
            round(float(np.mean(scores["payoff"])), 6),
            round(float(np.sum(scores["assigned"])) / n, 6),
            round(float(np.mean(np.array(scores["received"]) > 0)), 6),
            round(illegal / asked, 6) if asked else 0.0,
            round(seconds, 4),
        ]
        punishments = [[g, group_of[i], agents[i]["name"], agents[j]["name"], p] for i, j, p in played["points"]]
        return {POPULATION: rows, GENERATIONS: [generation], PUNISHMENTS: punishments}

    def figure(self, path: Path) -> Figure:
        return plot_contributions(read_csv(path / GENERATIONS), self.spec, title=self.scenario.name)

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
