"""The matrix game's conformance cases (`sandbox.population.conformance.GameCase`): scripted strategies on a small
world, and LLM members who follow principles on a ring (a scripted model's rule, for the test only)."""

from __future__ import annotations

from sandbox.population.conformance import GameCase

__all__ = ["LLM", "SCRIPTED"]

SCRIPTED = GameCase(
    block={
        "agents": 30,
        "generations": 4,
        "members": [{"strategy": "Cooperator", "share": 0.5}, {"strategy": "Defector", "share": 0.5}],
        "game": {"kind": "matrix", "name": "weak_prisoners_dilemma", "temptation": 1.5},
        "network": {"kind": "small_world", "k": 4, "p": 0.2},
        "revision": {"rule": "imitate", "beta": 1.0, "mutation": 0.05},
    },
    bad=(
        ({"game": {"kind": "matrix", "name": "prisoners_dilemma", "temptation": 1.5}}, "`temptation` is set for"),
        ({"members": [{"strategy": "Tit For Tot", "share": 1.0}]}, "members[0].strategy"),
    ),
    summary=("network", "mean_degree", "rule", "initial_cooperation", "final_cooperation", "final_shares"),
    series=("cooperation",),
    tables=("population.csv", "generations.csv", "edges.csv"),
)


def _member(system: str, prompt: str) -> str:
    """A selfish principle defects, any other cooperates; a reflection answers tit for tat."""
    if "Revised principle" in prompt:
        return "Revised principle: Cooperate first, then do what the other agent did last time."
    return "action2" if "selfish" in system.lower() else "action1"


LLM = GameCase(
    block={
        "agents": 6,
        "generations": 3,
        "members": [{"strategy": "altruistic", "share": 0.5}, {"strategy": "selfish", "share": 0.5, "fixed": True}],
        "game": {"kind": "matrix", "name": "prisoners_dilemma", "turns": 2, "play": "llm"},
        "network": {"kind": "ring"},
        "revision": {"rule": "reflect"},
    },
    answer=_member,
    bad=(({"game": {"kind": "matrix", "play": "llm", "tokens": ["a", "a"]}}, "the two action tokens must differ"),),
    summary=("matrix_game", "turns", "rule", "cooperation_by_generation", "mean_payoff_by_generation"),
    series=("cooperation", "illegal_rate"),
    tables=("moves.csv", "population.csv", "norms.csv", "revisions.csv", "generations.csv", "edges.csv"),
)
