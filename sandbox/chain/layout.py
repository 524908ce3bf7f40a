"""A chain directory's layout: the manifest's name and each stage's run directories."""

from __future__ import annotations

from typing import Any

__all__ = ["MANIFEST", "stage_runs"]

MANIFEST = "chain.json"


def stage_runs(scenario: Any) -> dict[str, list[str]]:
    """Each stage's run directories, relative to the chain's."""
    seeds = range(scenario.chain.seeds)
    subjects = scenario.chain.evaluation.subjects
    evaluation = [
        f"evaluate/student-seed-{scenario.stage_seed(i)}" if s == "student" else f"evaluate/{s}"
        for s in subjects
        for i in (seeds if s == "student" else [0])
    ]
    return {
        "society": ["society"],
        "judge": ["judge"],
        "distill": [f"distill/seed-{scenario.stage_seed(i)}" for i in seeds],
        "evaluate": evaluation,
        "compare": [],
    }
