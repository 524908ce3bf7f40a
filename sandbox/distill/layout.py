"""A distillation's run directory: its file names, the plan it resolved (`principles.json`), its scenario, and the
model spec of the student it trained.

Shared by the run (`sandbox.distill.run`), its summary and its evaluation, so
none of them imports another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sandbox.core.run_dir import SCENARIO, RunDirectory
from sandbox.distill.scenario import DistillScenario
from sandbox.distill.source import Principle

__all__ = [
    "ADAPTER",
    "METRICS",
    "PRINCIPLES",
    "STUDENT_BASE",
    "SUMMARY",
    "DistillPlan",
    "act_player",
    "assistant_spec",
    "load_distill_run_scenario",
]

PRINCIPLES = "principles.json"
METRICS = "metrics.csv"
SUMMARY = "summary.json"
ADAPTER = "adapter"
STUDENT_BASE = "student_base"


@dataclass(frozen=True)
class DistillPlan:
    """What a distillation resolved from its scenario and source, before training (`principles.json`)."""

    principles: list[Principle]
    truth: str | None
    currencies: list[str]
    train_amounts: list[int]
    held_out_amounts: list[int]
    source: str | None  # the source run directory

    def to_dict(self) -> dict[str, Any]:
        return {
            "principles": [p.to_dict() for p in self.principles],
            "truth": self.truth,
            "currencies": self.currencies,
            "train_amounts": self.train_amounts,
            "held_out_amounts": self.held_out_amounts,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DistillPlan:
        return cls(
            [Principle(**p) for p in data["principles"]],
            data["truth"],
            list(data["currencies"]),
            list(data["train_amounts"]),
            list(data["held_out_amounts"]),
            data["source"],
        )


def load_distill_run_scenario(run_dir: RunDirectory) -> DistillScenario:
    from sandbox.core.scenario_files import load_scenario

    return load_scenario(run_dir / SCENARIO, kind="distill")


def assistant_spec(run_dir: RunDirectory, scenario: DistillScenario) -> str:
    """The model spec of the distilled student, for a society's `assistant` (`BASE+adapter:DIR`)."""
    adapter = (run_dir / ADAPTER).resolve()
    if (run_dir / STUDENT_BASE).is_dir():
        return f"hf:{(run_dir / STUDENT_BASE).resolve()}+adapter:{adapter}"
    return f"{scenario.models.student}+adapter:{adapter}"


def act_player(plan_: DistillPlan) -> dict[str, Any]:
    """How the act judge's model plays under the principle: as the source run's assistant played its policy (the
    game's rules stated or not, its reading of the policy, its responder), or as a society's assistant does by
    default for a text source."""
    from sandbox.scai.assistant_block import Assistant

    config, rules = Assistant(), False
    if plan_.source is not None:
        from sandbox.core.scenario_files import load_run_scenario

        source = load_run_scenario(plan_.source)
        config, rules = source.assistant or config, bool(source.game.rules)
    return {"rules": rules, "reading": config.reading, "responder": config.responder}
