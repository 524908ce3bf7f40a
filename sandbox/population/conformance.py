"""The population kind's conformance case (`sandbox.core.conformance`): 64 scripted cooperators and defectors on a
small-world network for 6 generations of the weak prisoner's dilemma, imitating with mutation (no model called).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox.core.conformance import ConformanceCase

__all__ = ["BLOCK", "CASE"]

BLOCK: dict[str, Any] = {
    "agents": 64,
    "generations": 6,
    "members": [{"strategy": "Cooperator", "share": 0.5}, {"strategy": "Defector", "share": 0.5}],
    "game": {"name": "weak_prisoners_dilemma", "temptation": 1.5},
    "network": {"kind": "small_world", "k": 4, "p": 0.2},
    "revision": {"rule": "imitate", "beta": 1.0, "mutation": 0.05},
}


def _scenario(tmp: Path) -> Any:
    from sandbox.core.scenario_files import parse_kind

    return parse_kind("population", {"name": "population-conformance", "seed": 0, "population": BLOCK})


CASE = ConformanceCase(
    scenario=_scenario,
    hooks=lambda tick: lambda _: tick(),
    tables=("population.csv", "generations.csv", "edges.csv"),
)
