"""The public goods game's conformance case (`sandbox.population.conformance.GameCase`): scripted types beside LLM
members who follow norms, in partner groups of 4 with punishment (a scripted model's rule, for the test only)."""

from __future__ import annotations

import re

from sandbox.population.conformance import GameCase

__all__ = ["CASE"]


def _member(system: str, prompt: str) -> str:
    """A selfish norm contributes nothing and punishes no one; any other puts in half and gives a point to each
    groupmate who put in less than 5."""
    selfish = "selfish" in system.lower()
    if "How many of your" in prompt:
        return "Contribution: 0" if selfish else "I put in half.\nContribution: 10"
    lines = re.findall(r"^- (member\d+) put in (\d+) token", prompt, flags=re.MULTILINE)
    if selfish or not lines:
        return "Points: none"
    return "\n".join(f"{name}: {1 if int(amount) < 5 else 0}" for name, amount in lines)


CASE = GameCase(
    block={
        "agents": 8,
        "generations": 3,
        "members": [
            {"strategy": "free rider", "share": 0.25},
            {"strategy": "punisher", "share": 0.25},
            {"strategy": "fair", "share": 0.25},
            {"strategy": "selfish", "share": 0.25},
        ],
        "game": {"kind": "public_goods", "punishment": True},
        "network": {"kind": "complete"},
        "revision": {"rule": "memory"},
    },
    answer=_member,
    bad=(
        ({"agents": 10}, "not a multiple of game.group_size 4"),
        ({"game": {"kind": "public_goods", "mpcr": 0.2}}, "mpcr 0.2"),
        ({"network": {"kind": "ring"}}, "network.kind ring"),
    ),
    summary=("group_size", "endowment", "mpcr", "matching", "punishment", "contribution_by_period", "model"),
    series=("mean_contribution", "points_per_agent"),
    tables=("population.csv", "generations.csv", "punishments.csv", "norms.csv"),
)
