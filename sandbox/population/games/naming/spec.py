"""The naming game in a population: Ashery, Aiello & Baronchelli's among LLM agents (`play: llm`), or the theory's
scripted agents (`play: scripted`: the minimal naming game and the binary agreement model, with committed agents)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, model_validator

from sandbox.population.settings import (
    LLM,
    Calls,
    PopulationGameSpec,
    PopulationScenarioSettings,
    PopulationSettings,
    llm_user,
    memory_only,
    retries_field,
)

__all__ = ["EMPTY", "NAMING_WORDS", "NamingSpec"]

NAMING_WORDS = ["Q", "M", "X", "Y", "F", "J", "P", "R", "C", "D"]
EMPTY = "empty"  # play scripted: a member whose agents start with no name (the minimal naming game)
LLM_ONLY = ("reward", "penalty", "memory", "prepared", "retries", "answer")


class NamingSpec(PopulationGameSpec):
    """Ashery, Aiello & Baronchelli's naming game among LLM agents (`sandbox.population.games.naming.rules`), their code's values
    by default: a random agent and a random neighbour pick a name at once, the same name pays both `reward`. With
    `play: scripted`, the theory's agents (`sandbox.population.games.naming.dynamics`) instead."""

    kind: Literal["naming"]
    play: Literal["llm", "scripted"] = Field(
        "llm",
        description="llm: Ashery et al.'s game among LLM agents; scripted: the theory's agents (no model): a "
        "speaker says a random name of its inventory (inventing one if it has none) to a random neighbour, who "
        "on success keeps only that name with the speaker, else adds it (Baronchelli et al. 2006; with a "
        "committed minority and two words, Xie et al. 2011's binary agreement model).",
    )
    update: Literal["sequential", "pairs"] = Field(
        "sequential",
        description="sequential: one random agent and a random neighbour at a time, each interaction seeing the "
        "last one's result (the model as published, and Ashery et al.'s code); pairs: each round a set of disjoint "
        "random pairs played at once (scripted: a fast approximation, its tipping point on 1,000 agents the same, "
        "about 0.095-0.10; llm: a round's picks are asked concurrently, which a population of thousands needs, "
        "as N interactions in order at 200 ms a call take N x 0.2 s).",
    )
    activation: float = Field(
        1.0,
        gt=0.0,
        le=1.0,
        description="The interactions of a generation, as a share of the agents (OASIS's activation): 1, N "
        "interactions a generation (each agent plays about twice), as in the paper.",
    )
    words: list[str] = Field(
        default_factory=lambda: list(NAMING_WORDS),
        min_length=2,
        max_length=52,
        description="The names to pick from (the paper's main figures: these 10 letters; its code's default: Q and M).",
    )
    reward: float = Field(100.0, gt=0, le=1e6, description="Both players' payoff for the same name.")
    penalty: float = Field(-50.0, ge=-1e6, le=0, description="Both players' payoff for different names.")
    memory: int = Field(5, ge=1, le=50, description="The past interactions each agent sees (the paper's 5).")
    prepared: str | None = Field(
        None,
        description="A name every agent's memory starts full of (as successful "
        "plays): the code's setup for a committed minority, which "
        "holds another name.",
    )
    stop_at_consensus: bool = Field(
        True, description="Stop once 3 N interactions in a row succeeded (the paper's convergence)."
    )
    retries: int = retries_field(
        3,
        "Times an unreadable answer is asked again before it is "
        "recorded as an illegal move (which fails the interaction).",
    )
    answer: Literal["free", "constrained"] = Field(
        "free",
        description="free: the code's prompt, answered as the model likes; constrained: the answer is "
        "prefilled with `{'value': '` and held to one of the words (a grammar, where the "
        "backend takes one), with no reason: the embedded 1.5B model reasons first and runs out "
        "of tokens, 19% then 62% illegal moves under free.",
    )

    @model_validator(mode="after")
    def _words(self) -> NamingSpec:
        bad = [w for w in self.words if not re.fullmatch(r"[A-Za-z0-9]+", w) or w.lower() in ("none", EMPTY)]
        if bad or len({w.lower() for w in self.words}) != len(self.words):  # answers are read case aside
            raise ValueError(
                f"words must be distinct (case aside) ASCII letters or digits, and not 'none' (an "
                f"illegal move in the prompts) nor '{EMPTY}' (a scripted member with no name): {bad or self.words}"
            )
        if self.play == "scripted":
            changed = [f for f in LLM_ONLY if getattr(self, f) != NamingSpec.model_fields[f].default]
            if changed:
                raise ValueError(f"{', '.join(changed)}: read with play llm only")
        if self.prepared is not None and self.prepared not in self.words:
            raise ValueError(f"prepared {self.prepared!r} is not one of the words {self.words}")
        return self

    def plugin(self) -> str:
        return self.play

    def roles(self, block: PopulationSettings) -> tuple[str, ...]:
        return () if self.play == "scripted" else llm_user(block)

    def check(self, block: PopulationSettings) -> None:
        if block.actors > 1 and self.play == "llm" and self.update != "pairs":
            raise ValueError(
                f"actors {block.actors}: with update {self.update} each interaction waits for the one before it, "
                "so there is nothing to share among actors; set game.update pairs (rounds of disjoint pairs, "
                "played at once)"
            )
        memory_only(
            block,
            "the naming game" + (" with play scripted" if self.play == "scripted" else ""),
            "the naming game's agents adapt through their memory",
            actors=self.play == "llm",
        )
        if self.play == "scripted":
            self._scripted_members(block)
            return
        for i, member in enumerate(block.members):
            if member.strategy == EMPTY:
                raise ValueError(
                    f"members[{i}].strategy {EMPTY}: an agent with no name is play scripted's (the minimal "
                    "naming game); an llm member picks among the words"
                )
            if member.strategy == LLM:
                if member.fixed:
                    raise ValueError(
                        f"members[{i}]: an llm member of the naming game cannot be fixed; a committed "
                        "member names its word as strategy"
                    )
            elif member.strategy not in self.words:
                raise ValueError(
                    f"members[{i}].strategy {member.strategy!r}: the naming game's members are llm or "
                    f"a committed member's word, one of {self.words}"
                )
            elif not member.fixed:
                raise ValueError(
                    f"members[{i}].strategy {member.strategy!r}: with play llm a member with a word is a committed "
                    "minority and always plays it: set fixed: true (agents that start with a word and may change "
                    "it are play scripted's)"
                )

    def _scripted_members(self, block: PopulationSettings) -> None:
        """play scripted: each member is a word (fixed: committed to it; else starting with it) or empty."""
        for i, member in enumerate(block.members):
            if member.strategy == EMPTY:
                if member.fixed:
                    raise ValueError(
                        f"members[{i}].fixed: an agent with no name invents one when it speaks, so it cannot be "
                        "committed; commit a member to a word"
                    )
            elif member.strategy not in self.words:
                raise ValueError(
                    f"members[{i}].strategy {member.strategy!r}: a scripted naming game's members are one of the "
                    f"words {self.words} (fixed: true for a committed minority) or {EMPTY} (no name at first)"
                )

    def describe(self, scenario: PopulationScenarioSettings) -> str:
        p = scenario.population
        if self.play == "scripted":
            members = ", ".join(
                f"{m.share:.0%} "
                + ("with no name" if m.strategy == EMPTY else f"{'committed to' if m.fixed else 'with'} {m.strategy}")
                for m in p.members
            )
            return (
                f"scripted naming-game population of {p.agents} agents on a {p.network.kind} network, at most "
                f"{p.generations} x {p.agents} interactions ({self.update} update), words {', '.join(self.words)}; "
                f"{members}; no model calls"
            )
        committed = [f"{m.share:.0%} committed to {m.strategy}" for m in p.members if m.strategy != LLM]
        prepared = f", memories prepared with {self.prepared}" if self.prepared else ""
        return (
            f"naming-game population of {p.agents} agents on a {p.network.kind} network, at most "
            f"{p.generations} x {p.agents} interactions, {len(self.words)} words{prepared}"
            f"{'; ' + ', '.join(committed) if committed else ''}; members {scenario.models.user.spec} as role "
            "user" + (f", played on {p.actors} Ray actors" if p.actors > 1 else "")
        )

    def calls(self, scenario: PopulationScenarioSettings) -> list[Calls]:
        """Two picks an interaction, N interactions a generation (fewer where committed agents play); none with play
        scripted."""
        if self.play == "scripted":
            return []
        p = scenario.population
        interactions = self.interactions(p.agents)
        return [Calls("user (picks, first asks, at most)", scenario.models.user, 2 * interactions * p.generations, 350)]

    def interactions(self, agents: int) -> int:
        """The interactions of a generation (`update: pairs` cuts its last round to them)."""
        return max(1, round(agents * self.activation))
