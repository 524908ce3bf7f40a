"""The naming game's conformance cases (`sandbox.population.conformance.GameCase`): six LLM agents that copy their
partners (a scripted model's rule, for the test only), and the binary agreement model's scripted agents with a
committed minority."""

from __future__ import annotations

import re

from sandbox.population.conformance import GameCase

__all__ = ["LLM", "SCRIPTED"]


def _copier(system: str, prompt: str) -> str:
    """The partner's last pick, else the first word offered."""
    partners = [p for p in re.findall(r"'Player 2': '(\w+)'", prompt) if p != "none"]
    offered = re.search(r"values: ([\w, ]+)\.", system)
    pick = partners[-1] if partners else offered.group(1).split(", ")[0] if offered else "Q"
    return f"{{'value': '{pick}'; 'reason': 'my partner played it'}}"


LLM = GameCase(
    block={
        "agents": 6,
        "generations": 3,
        "members": [{"strategy": "llm", "share": 1.0}],
        "game": {"kind": "naming", "words": ["Q", "M", "X"], "stop_at_consensus": False},
        "revision": {"rule": "memory"},
    },
    answer=_copier,
    bad=(({"revision": {"rule": "select"}}, "revision.rule select"),),
    summary=("words", "consensus_at", "model", "calls"),
    series=("success_rate", "dominant_share"),
    tables=("interactions.csv", "population.csv", "generations.csv"),
)

SCRIPTED = GameCase(
    block={
        "agents": 40,
        "generations": 5,
        "members": [{"strategy": "A", "share": 0.2, "fixed": True}, {"strategy": "B", "share": 0.8}],
        "game": {"kind": "naming", "play": "scripted", "words": ["A", "B"], "stop_at_consensus": False},
        "revision": {"rule": "memory"},
    },
    bad=(({"game": {"kind": "naming", "play": "scripted", "words": ["A", "A"]}}, "words"),),
    summary=("words", "consensus_at", "committed_share"),
    series=("share A", "share B", "multiple_share"),
)
