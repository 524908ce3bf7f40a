"""GovSim's fishery among LLM agents: harvest, the group chat, the agreed limit, each month."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from sandbox.population.settings import (
    LLM,
    Calls,
    PopulationGameSpec,
    PopulationScenarioSettings,
    PopulationSettings,
    count_agents,
    llm_user,
    memory_only,
    retries_field,
)

if TYPE_CHECKING:
    from sandbox.population.games.commons.rules import CommonsRules

__all__ = ["GOVSIM_NAMES", "CommonsSpec"]

GOVSIM_NAMES = ["John", "Kate", "Jack", "Emma", "Luke"]


class CommonsSpec(PopulationGameSpec):
    """GovSim's fishery among LLM agents (Piatti et al. 2024; `sandbox.population.games.commons.rules`), the authors' code's values
    by default. A generation is a month: harvest, the Mayor's report and the group chat, the agreed limit, each
    agent's note for its planning."""

    kind: Literal["commons"]
    capacity: int = Field(100, ge=10, le=999, description="Tons of fish in the full lake (the carrying capacity).")
    collapse_below: int = Field(5, ge=1, le=999, description="A stock below this after the harvest has collapsed.")
    allocation: Literal["stochastic", "proportional"] = Field(
        "stochastic",
        description="When the asks exceed the stock: one ton at a time to a random agent that still "
        "wants more (the code's default), or in proportion to the asks.",
    )
    talk: bool = Field(
        True,
        description="After the harvest the Mayor reads out every catch and the agents talk "
        "(off: the paper's ablation without communication, which also hides the "
        "others' catches).",
    )
    talk_steps: int = Field(
        10,
        ge=2,
        le=50,
        description="The most utterances of a month's chat, the Mayor's report "
        "included (the code's max_conversation_steps).",
    )
    universalization: bool = Field(
        False,
        description='Every agent always remembers "if everyone fishes more than '
        'X tons, the lake population will shrink next month", X the '
        "sustainable catch (the paper's universalization variant).",
    )
    notes: bool = Field(
        True,
        description="After the chat each LLM fisher writes down what it must remember for "
        "its planning and what it found interesting (the code's two notes), kept "
        "in its memory.",
    )
    memory: int = Field(
        10,
        ge=1,
        le=100,
        description="The dated memories shown in each prompt, the latest (the "
        "code retrieved the top 10 by recency, importance and "
        "relevance); the agreed limits and the universalization "
        "hint are always shown.",
    )
    names: list[str] = Field(
        default_factory=lambda: list(GOVSIM_NAMES),
        min_length=2,
        max_length=100,
        description="The fishers' names, one per agent (the code's five).",
    )
    retries: int = retries_field(
        0,
        "Times an unreadable harvest is asked again before it is "
        "recorded as an illegal move that catches nothing (the code "
        "asked once and read 0).",
    )
    answer: Literal["free", "constrained"] = Field(
        "free",
        description='free: the code\'s prompts (think step by step, then "Answer: N tons"); constrained: '
        "every answer is prefilled with its label and held to its format (a number of tons, "
        "yes or no, a name), with no reasoning before it: a named switch for small models "
        "that run out of tokens while they reason.",
    )

    def rules(self, agents: int, months: int) -> CommonsRules:
        from sandbox.population.games.commons.rules import CommonsRules

        return CommonsRules(
            agents=agents,
            months=months,
            capacity=self.capacity,
            collapse_below=self.collapse_below,
            allocation=self.allocation,
        )

    @model_validator(mode="after")
    def _names(self) -> CommonsSpec:
        if len({n.lower() for n in self.names}) != len(self.names) or not all(
            re.fullmatch(r"[A-Za-z][A-Za-z0-9 ]*", n) for n in self.names
        ):
            raise ValueError(
                f"names must be distinct (case aside) and made of letters, digits and spaces: {self.names}"
            )
        reserved = [n for n in self.names if n.lower() in ("mayor", "na", "nan", "none", "null", "framework")]
        if reserved:  # the chat's reporter, the framework's calls, and what a table reads back as empty
            raise ValueError(f"names: {', '.join(reserved)} cannot name a fisher")
        if self.collapse_below >= self.capacity:
            raise ValueError(f"collapse_below {self.collapse_below} is not below the capacity {self.capacity}")
        return self

    def roles(self, block: PopulationSettings) -> tuple[str, ...]:
        return llm_user(block)

    def check(self, block: PopulationSettings) -> None:
        memory_only(
            block, "the commons game", "GovSim's fishers adapt through their memory, the chat and the agreed limits"
        )
        if block.network.kind != "complete":
            raise ValueError(
                f"network.kind {block.network.kind}: the fishers share one lake and one group chat; "
                "the commons game is played on a complete network"
            )
        if block.agents > len(self.names):
            raise ValueError(f"game.names has {len(self.names)} names for {block.agents} agents")
        for i, member in enumerate(block.members):
            if member.strategy == LLM:
                if member.fixed:
                    raise ValueError(
                        f"members[{i}]: an llm fisher cannot be fixed; a fixed fisher names its catch "
                        "as strategy (a whole number of tons)"
                    )
            elif not re.fullmatch(r"\d+", member.strategy) or int(member.strategy) > self.capacity:
                raise ValueError(
                    f"members[{i}].strategy {member.strategy!r}: the commons game's members are llm or "
                    f"a fixed catch, a whole number of tons from 0 to {self.capacity}"
                )
            elif not member.fixed:
                raise ValueError(
                    f"members[{i}]: a member with the catch {member.strategy} always asks for it: set fixed: true"
                )

    def describe(self, scenario: PopulationScenarioSettings) -> str:
        p = scenario.population
        fixed = [f"{m.share:.0%} always asking {m.strategy} tons" for m in p.members if m.strategy != LLM]
        talk = f"talk up to {self.talk_steps} steps" if self.talk else "no talk"
        hint = ", universalization hint" if self.universalization else ""
        return (
            f"GovSim fishery of {p.agents} fishers, lake of {self.capacity} tons, {p.generations} months, "
            f"{talk}{hint}{'; ' + ', '.join(fixed) if fixed else ''}; fishers {scenario.models.user.spec} as "
            "role user"
        )

    def calls(self, scenario: PopulationScenarioSettings) -> list[Calls]:
        """At most: every month played, every chat to its last step."""
        p, user = scenario.population, scenario.models.user
        llm, months = count_agents(p, lambda m: m.strategy == LLM), p.generations
        rows = [Calls("user (harvests, first asks)", user, llm * months, 700)]
        if self.talk and llm:  # fixed fishers alone hold no chat
            rows += [
                Calls("user (chat, at most)", user, (self.talk_steps - 1) * months, 1200),
                Calls("user (chat summaries and limits)", user, 2 * months, 800),
            ]
            rows += [Calls("user (notes)", user, 2 * llm * months, 800)] if self.notes else []
        return rows
