"""Conformance: the population kind's case (`sandbox.core.conformance`: 64 scripted cooperators and defectors on a
small-world network for 6 generations of the weak prisoner's dilemma, imitating with mutation, no model called),
and the contract of a population game's own case (`GameCase`), which every registered game names for each of its
plug-ins (`GameEntry.conformance`) and `tests/test_population_games.py` plays: killed at a random point and resumed,
forked without change, replayed, refused on bad input, its summary's fields and its figure's series checked. A game
of another package brings its cases with it, and the tests need no edit.

A case's `answer` is a scripted model's rule, for this test only: a case never stands for a simulation result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox.core.conformance import ConformanceCase

if TYPE_CHECKING:
    from sandbox.population.scenario import PopulationScenario

__all__ = ["BLOCK", "CASE", "GameCase"]

BLOCK: dict[str, object] = {
    "agents": 64,
    "generations": 6,
    "members": [{"strategy": "Cooperator", "share": 0.5}, {"strategy": "Defector", "share": 0.5}],
    "game": {"name": "weak_prisoners_dilemma", "temptation": 1.5},
    "network": {"kind": "small_world", "k": 4, "p": 0.2},
    "revision": {"rule": "imitate", "beta": 1.0, "mutation": 0.05},
}


def _scenario(tmp: Path) -> PopulationScenario:
    from sandbox.core.scenario_files import parse_kind

    return parse_kind("population", {"name": "population-conformance", "seed": 0, "population": BLOCK})


CASE = ConformanceCase(
    scenario=_scenario,
    hooks=lambda tick: lambda _: tick(),
    tables=("population.csv", "generations.csv", "edges.csv"),
)


@dataclass(frozen=True)
class GameCase:
    """A population game's small run, played by the conformance test of the games (one case for each plug-in)."""

    block: Mapping[str, object]
    """The `population:` block: a few agents for a few generations, each generation's play and revision."""
    answer: Callable[[str, str], str] | None = None
    """`answer(system, prompt) -> text`: a scripted model's answer to a call (the system prompt, "" when none, and
    the last message), for every role the game reads; None: the game calls no model."""
    bad: tuple[tuple[Mapping[str, object], str], ...] = ()
    """Bad input: (fields that replace the block's, words the error says, naming the field); `sandbox run` exits 2
    and writes nothing."""
    summary: tuple[str, ...] = ()
    """Fields its `summary.json` holds besides the common ones (scenario, agents, kind)."""
    series: tuple[str, ...] = ()
    """Columns of `generations.csv` its figure draws, each a line whose values are the column's."""
    tables: tuple[str, ...] = field(default=("population.csv", "generations.csv"))
    """The tables an interrupted and resumed run, a fork without change and a replay must write identically."""
