"""The ultimatum population's conformance case (`sandbox.population.conformance.GameCase`): members, fixed users
and SCAI's assistant on a ring, reflecting (a scripted model's rule, for the test only)."""

from __future__ import annotations

import re

from sandbox.population.conformance import GameCase

__all__ = ["CASE"]

FAIR = "Be fair: always share equally, so that everyone gets the same."


def _player(system: str, prompt: str) -> str:
    """Proposes by its principle (fair: half, selfish: a tenth, else all but one), accepts everything; a MetaLM
    answers the fair principle."""
    if "flex-policy" in system + prompt or "Revised principle" in prompt:
        return f"Revised principle: {FAIR}"
    if "proposer will get" in prompt and "accept" in prompt.lower():
        return "yes"
    found = re.search(r"(\d+) (\w+)", prompt)
    if found is None:
        return "yes"
    n, currency = int(found.group(1)), found.group(2)
    give = n // 2 if "fair" in system.lower() else n // 10 if "selfish" in system.lower() else n - 1
    return f"For the {n} {currency}, the proposer will get {n - give}, and the responder will get {give}."


CASE = GameCase(
    block={
        "agents": 6,
        "generations": 3,
        "members": [
            {"strategy": "altruistic", "share": 0.5},
            {"strategy": "selfish", "share": 1 / 3, "fixed": True},
            {"strategy": "assistant", "share": 1 / 6},
        ],
        "game": {"kind": "ultimatum", "reading": "none", "amount": {"min": 10, "max": 30}},
        "network": {"kind": "ring"},
        "revision": {"rule": "reflect"},
    },
    answer=_player,
    bad=(({"revision": {"rule": "best"}}, "revision.rule best"),),
    summary=("rule", "norm_versions", "revisions_changed", "illegal_revisions"),
    series=("mean_offered_share", "acceptance_rate"),
    tables=("episodes.csv", "population.csv", "norms.csv", "revisions.csv", "generations.csv"),
)
