"""The public goods game's settings (`game: {kind: public_goods}`): Fehr & Gächter's design (2000; Fischbacher &
Gächter 2010's parameters are the same) by default: groups of 4, an endowment of 20 tokens, a marginal per-capita
return of 0.4, a period a generation, partner or stranger matching, and an optional punishment stage."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from sandbox.population.games.public_goods.rules import TYPES, Conditional
from sandbox.population.settings import (
    LLM,
    Calls,
    PopulationGameSpec,
    PopulationScenarioSettings,
    PopulationSettings,
    count_agents,
    memory_only,
    retries_field,
)

__all__ = ["PublicGoodsSpec"]


class PublicGoodsSpec(PopulationGameSpec):
    """A repeated linear public goods game in groups, with an optional punishment stage; members are the
    literature's scripted types (`free rider`, `conditional cooperator`, `punisher`) or LLM agents that follow a
    norm (a library norm's name or a norm's text)."""

    kind: Literal["public_goods"]
    group_size: int = Field(4, ge=2, le=100, description="Members of a group (the papers: 4).")
    endowment: int = Field(20, ge=1, le=1000, description="Tokens each member gets a period (the papers: 20).")
    mpcr: float = Field(
        0.4,
        gt=0.0,
        lt=1.0,
        description="The marginal per-capita return: each token in the public account pays every group member "
        "this (the papers: 0.4; below 1, and above 1 / group_size, so that free riding pays each and contributing "
        "pays the group).",
    )
    matching: Literal["partner", "stranger"] = Field(
        "partner",
        description="partner: the same groups every period; stranger: new groups drawn every period (Fehr & "
        "Gächter 2000 ran both; Fischbacher & Gächter 2010's C-experiment, stranger).",
    )
    punishment: bool = Field(
        False,
        description="After the contributions, each member sees the others' and may assign each 0 to max_points "
        "points (Fehr & Gächter 2000's second stage).",
    )
    point_cost: float = Field(1.0, ge=0.0, le=100.0, description="What a punishment point costs its punisher.")
    point_effect: float = Field(3.0, ge=0.0, le=100.0, description="What a punishment point takes from its target.")
    max_points: int = Field(10, ge=1, le=100, description="The most points a member may assign one other a period.")
    belief_start: float = Field(
        9.8,
        ge=0.0,
        le=1000.0,
        description="Scripted conditional cooperators and punishers: their belief about the others' mean "
        "contribution in the first period (Fischbacher & Gächter 2010's C-experiment: 9.80, the subjects' mean "
        "first belief).",
    )
    belief_rule: tuple[float, float, float] = Field(
        (0.118, 0.415, 0.569),
        description="Their belief's update: constant, weight of the others' mean last period, weight of the last "
        "belief (Fischbacher & Gächter 2010, Table 1 model 3, as their simulation uses it).",
    )
    contribution_rule: tuple[float, float, float] = Field(
        (-0.473, 0.242, 0.666),
        description="Their contribution: constant, weight of the schedule at the belief, weight of the belief "
        "(Fischbacher & Gächter 2010, Table 2 model 3), rounded half up, 0 to the endowment.",
    )
    schedule: tuple[float, float] = Field(
        (0.956, 0.425),
        description="Their conditional contribution schedule: constant and slope on the others' mean (the "
        "subjects' average schedule, slope 0.425 below 1: imperfect conditional cooperation; Fischbacher & "
        "Gächter 2010's identical imperfect conditional cooperators).",
    )
    rate: float = Field(
        0.24,
        gt=0.0,
        le=10.0,
        description="Scripted punishers: points per token that a groupmate contributed below the mean of its others "
        "(rounded up, at most max_points; Fehr & Gächter 2000 estimated about 0.24 points received per token "
        "below the others' average with stranger matching, 0.42 with partners).",
    )
    shown: int = Field(
        10,
        ge=0,
        le=100,
        description="LLM members: the last periods of their own group that their prompt shows (contributions, "
        "payoffs, points received); 0 shows none.",
    )
    retries: int = retries_field(
        2, "LLM members: times an unreadable contribution or punishment is asked again before it is illegal."
    )

    @model_validator(mode="after")
    def _within(self) -> PublicGoodsSpec:
        if not 1 / self.group_size < self.mpcr:
            raise ValueError(
                f"mpcr {self.mpcr:g}: at most 1 / group_size ({1 / self.group_size:g}), so contributing would not "
                "pay the group; a public goods game needs 1 / group_size < mpcr < 1"
            )
        return self

    def roles(self, block: PopulationSettings) -> tuple[str, ...]:
        return ("user",) if any(m.strategy not in TYPES for m in block.members) else ()

    def check(self, block: PopulationSettings) -> None:
        from societies.norms import NORMS

        memory_only(block, "the public goods game", "its members adapt through what their group did")
        if block.network.kind != "complete":
            raise ValueError(
                f"network.kind {block.network.kind}: the public goods game draws its groups from the whole "
                "population (network kind complete)"
            )
        if block.agents % self.group_size:
            raise ValueError(f"agents {block.agents}: not a multiple of game.group_size {self.group_size}")
        for i, member in enumerate(block.members):
            if member.fixed:
                raise ValueError(f"members[{i}].fixed: no member of the public goods game revises a norm to fix")
            if member.strategy == LLM:
                raise ValueError(
                    f"members[{i}].strategy llm: an LLM member follows a norm: a library norm's name or its text "
                    f"(or a scripted type: {', '.join(TYPES)})"
                )
            if member.strategy not in TYPES and member.strategy not in NORMS.names() and len(member.strategy) < 12:
                raise ValueError(
                    f"members[{i}].strategy {member.strategy!r}: not a scripted type ({', '.join(TYPES)}), a "
                    f"library norm ({', '.join(NORMS.names())}) nor a norm's text (12 characters or more)"
                )

    def describe(self, scenario: PopulationScenarioSettings) -> str:
        p = scenario.population
        members = ", ".join(f"{m.strategy} {m.share:.0%}" for m in p.members)
        stage = (
            f", punishment (a point costs {self.point_cost:g}, takes {self.point_effect:g})" if self.punishment else ""
        )
        return (
            f"public goods game: {p.agents} agents in {self.matching} groups of {self.group_size}, {p.generations} "
            f"periods, endowment {self.endowment}, mpcr {self.mpcr:g}{stage}; {members}"
        )

    def calls(self, scenario: PopulationScenarioSettings) -> list[Calls]:
        """An LLM member's contribution a period, and with punishment its points."""
        p = scenario.population
        llm = count_agents(p, lambda m: m.strategy not in TYPES)
        rows = [Calls("user (contributions)", scenario.models.user, llm * p.generations, 500)]
        if self.punishment:
            rows.append(Calls("user (punishments)", scenario.models.user, llm * p.generations, 600))
        return rows if llm else []

    def conditional(self) -> Conditional:
        """The scripted conditional cooperators' rules."""
        return Conditional(self.belief_start, self.belief_rule, self.contribution_rule, self.schedule)
