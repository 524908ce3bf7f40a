"""The sweep kind's conformance case (`sandbox.core.conformance`): two temptations of a scripted population (32
cooperators and defectors, 3 generations), one seed each, one worker (no model called): two runs, so that a
sweep is interrupted between them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox.core.conformance import ConformanceCase

__all__ = ["CASE"]


def _scenario(tmp: Path) -> Any:
    from sandbox.core.scenario_files import parse_kind

    members = [{"strategy": "Cooperator", "share": 0.5}, {"strategy": "Defector", "share": 0.5}]
    game = {"name": "weak_prisoners_dilemma", "temptation": 1.5}
    population = {"agents": 32, "generations": 3, "members": members, "game": game}
    base = {"name": "p", "seed": 1, "population": population}
    sweep = {"base": base, "grid": {"population.game.temptation": [1.2, 1.5]}, "seeds": 1, "workers": 1}
    return parse_kind("sweep", {"name": "sweep-conformance", "sweep": sweep})


CASE = ConformanceCase(
    scenario=_scenario, hooks=lambda tick: (None, lambda _: tick()), tables=("sweep.csv", "runs.csv")
)
