"""The donor game's conformance case (`sandbox.population.conformance.GameCase`): six LLM agents under selection
(a scripted model's rule, for the test only)."""

from __future__ import annotations

import re

from sandbox.population.conformance import GameCase

__all__ = ["CASE"]


def _donor(system: str, prompt: str) -> str:
    """A strategy gives as many tenths as the agent's name says; a donation gives that share of what it has."""
    if "How many units do you give up" not in prompt:
        name = re.search(r"Your name is (\d+)_(\d+)", prompt)
        tenths = (int(name.group(1)) + int(name.group(2))) % 10 if name else 5
        return f"My strategy will be to give {tenths} tenths."
    given = re.search(r"give (\d) tenths", prompt)
    have = re.search(r"You currently have ([\d.]+) units", prompt)
    share = int(given.group(1)) / 10 if given else 0.5
    return f"Justification: my strategy.\nAnswer: {float(have.group(1)) * share if have else 0:.2f}"


CASE = GameCase(
    block={
        "agents": 6,
        "generations": 3,
        "members": [{"strategy": "llm", "share": 1.0}],
        "game": {"kind": "donor"},
        "network": {"kind": "complete"},
        "revision": {"rule": "select"},
    },
    answer=_donor,
    bad=(({"game": {"kind": "donor", "rounds": 0}}, "rounds"),),
    summary=("model", "calls"),
    series=("mean_donated_share", "survivor_gap"),
    tables=("population.csv", "donations.csv", "norms.csv", "generations.csv"),
)
