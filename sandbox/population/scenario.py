"""The population scenario file's model (`population:` block): who the agents are, whom they meet, what they play,
how they revise.

The block's fields shared by every game are `sandbox.population.settings`'; each game's own settings, and what the
game cannot use of the rest, are in its folder, `sandbox.population.games.<game>.spec`. Here they are joined: the
union of the games' settings (`GameSpec`), the block and the scenario, and the checks a new run makes before
anything is written (`empty_members`, `over_budget`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import Discriminator, Field, Tag

from sandbox.population.registry import spec_classes
from sandbox.population.settings import (
    ASSISTANT,
    LLM,
    Member,
    PopulationScenarioSettings,
    PopulationSettings,
    Revision,
    member_counts,
    place_members,
)

__all__ = [
    "ASSISTANT",
    "LLM",
    "GameSpec",
    "Member",
    "PopulationBlock",
    "PopulationScenario",
    "Revision",
    "empty_members",
    "member_counts",
    "over_budget",
    "place_members",
]


def empty_members(block: PopulationBlock) -> list[tuple[str, str]]:
    """The members whose share rounds to no agent (`member_counts`), as (field, problem): a new run refuses them
    (`run_population`), where they would silently play no part; a run made before that check still loads.

    >>> block = PopulationBlock(agents=9, generations=1, members=[Member(strategy="Cooperator", share=0.95),
    ...                                                           Member(strategy="Defector", share=0.05)])
    >>> empty_members(block)
    [('population.members[1].share', '0.05 of 9 agents rounds to no agent; raise the share or the agents')]
    """
    counts = member_counts([m.share for m in block.members], block.agents)
    return [
        (
            f"population.members[{i}].share",
            f"{m.share:g} of {block.agents} agents rounds to no agent; raise the share or the agents",
        )
        for i, (m, n) in enumerate(zip(block.members, counts))
        if n == 0
    ]


def over_budget(scenario: PopulationScenario) -> list[tuple[str, str]]:
    """Where one generation of the population would need more LLM calls or tokens than `budget` allows (the dry
    run's first asks: `PopulationGameSpec.calls`), as (field, problem): such a run could not finish a generation, so
    a new run refuses it before anything is written. A budget that runs out in a later generation stops the run
    there, resumable, as every budget does.

    >>> from sandbox.core.scenario_files import parse_kind
    >>> scenario = parse_kind("population", {"name": "x", "budget": {"calls": 1000}, "population": {
    ...     "agents": 1000, "generations": 1, "members": [{"strategy": "llm", "share": 1.0}], "game": {"kind": "naming"},
    ...     "revision": {"rule": "memory"}}})
    >>> field, problem = over_budget(scenario)[0]
    >>> field
    'budget.calls'
    """
    budget, block = scenario.budget, scenario.population
    rows = block.game.calls(scenario)
    calls = sum(c.calls for c in rows) / block.generations
    tokens = sum(c.calls * c.prompt_tokens for c in rows) / block.generations  # answers' length unknown: left out
    found = []
    if budget.calls is not None and calls > budget.calls:
        found.append(
            (
                "budget.calls",
                f"one generation of {block.agents} agents makes up to {calls:,.0f} calls (sandbox run --dry-run), "
                f"more than the budget's {budget.calls:,}: raise budget.calls or lower population.agents",
            )
        )
    if budget.tokens is not None and tokens > budget.tokens:
        found.append(
            (
                "budget.tokens",
                f"the prompts alone of one generation of {block.agents} agents take about {tokens:,.0f} tokens "
                f"(sandbox run --dry-run), more than the budget's {budget.tokens:,}: raise budget.tokens or lower "
                "population.agents",
            )
        )
    return found


def _game_kind(value: object) -> str:
    return str(value.get("kind", "matrix") if isinstance(value, dict) else getattr(value, "kind", "matrix"))


def _games_union() -> Any:
    """The settings of every registered game (`sandbox.population.registry`), tagged by kind: the `game:` block's
    type, which pydantic validates by the block's `kind` (matrix when it names none)."""
    tagged = tuple(Annotated[cls, Tag(kind)] for kind, cls in spec_classes().items())
    return Annotated[Union[tagged], Discriminator(_game_kind)]  # noqa: UP007  (a union built at run time)


GameSpec = _games_union()


class PopulationBlock(PopulationSettings):
    """A population whose norms spread over generations: the shared fields, and the game's own settings."""

    if not TYPE_CHECKING:  # mypy reads the base's PopulationGameSpec; pydantic validates by the registered games
        game: GameSpec = Field(
            default_factory=lambda: spec_classes()["matrix"](),
            description=f"The game and its own settings, by `kind`: {', '.join(spec_classes())} (matrix when none "
            "is named).",
        )


class PopulationScenario(PopulationScenarioSettings):
    """A population scenario file: a name, a seed, models for LLM members and a `population:` block."""

    population: PopulationBlock  # the block with the games' union
