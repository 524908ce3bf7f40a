"""Ashery, Aiello & Baronchelli's naming game among LLM agents, with a committed minority."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, model_validator

from sandbox.population.specs.common import (
    LLM,
    Calls,
    PopulationGameSpec,
    llm_user,
    memory_only,
    retries_field,
)

__all__ = ["NAMING_WORDS", "NamingGameSpec"]

NAMING_WORDS = ["Q", "M", "X", "Y", "F", "J", "P", "R", "C", "D"]


class NamingGameSpec(PopulationGameSpec):
    """Ashery, Aiello & Baronchelli's naming game among LLM agents (`sandbox.games.naming`), their code's values
    by default: a random agent and a random neighbour pick a name at once, the same name pays both `reward`."""

    kind: Literal["naming"]
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
    def _words(self) -> NamingGameSpec:
        bad = [w for w in self.words if not re.fullmatch(r"[A-Za-z0-9]+", w) or w.lower() == "none"]
        if bad or len({w.lower() for w in self.words}) != len(self.words):  # answers are read case aside
            raise ValueError(
                f"words must be distinct (case aside) ASCII letters or digits, and not 'none' (an "
                f"illegal move in the prompts): {bad or self.words}"
            )
        if self.prepared is not None and self.prepared not in self.words:
            raise ValueError(f"prepared {self.prepared!r} is not one of the words {self.words}")
        return self

    def roles(self, block: Any) -> tuple[str, ...]:
        return llm_user(block)

    def check(self, block: Any) -> None:
        memory_only(block, "the naming game", "the naming game's agents adapt through their memory")
        for i, member in enumerate(block.members):
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
                    f"members[{i}]: a member with the word {member.strategy!r} is a committed minority "
                    "and always plays it: set fixed: true"
                )

    def describe(self, scenario: Any) -> str:
        p = scenario.population
        committed = [f"{m.share:.0%} committed to {m.strategy}" for m in p.members if m.strategy != LLM]
        prepared = f", memories prepared with {self.prepared}" if self.prepared else ""
        return (
            f"naming-game population of {p.agents} agents on a {p.network.kind} network, at most "
            f"{p.generations} x {p.agents} interactions, {len(self.words)} words{prepared}"
            f"{'; ' + ', '.join(committed) if committed else ''}; members {scenario.models.user.spec} as role "
            "user"
        )

    def calls(self, scenario: Any) -> list[Calls]:
        """Two picks an interaction, N interactions a generation (fewer where committed agents play)."""
        p = scenario.population
        return [Calls("user (picks, first asks, at most)", scenario.models.user, 2 * p.agents * p.generations, 350)]
