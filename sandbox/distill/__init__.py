"""Norm distillation: a society's learned norm, judged as a reward, trained into a student's weights.

A SCAI run writes its norm as a policy in words; the proxy judge asks whether
a move follows that policy; PPO (or TRL's GRPO, RLOO) trains a LoRA adapter
on the judge's verdicts in the ultimatum game, with no policy in the
student's prompt.

    from sandbox.distill import distill_scenario
    from sandbox.core.scenario_files import load_scenario

    run_dir = distill_scenario(load_scenario("scenarios/distill/tiny/selfish.yaml", kind="distill"), "runs/selfish")
"""

from __future__ import annotations

from typing import Any

from sandbox.base.lazy import lazy_attribute

__all__ = ["DistillScenario", "JudgeTable", "distill_scenario", "resume_distill"]

_LAZY = {
    "DistillScenario": "sandbox.distill.scenario",
    "JudgeTable": "sandbox.distill.judge_table",
    "distill_scenario": "sandbox.distill.run",
    "resume_distill": "sandbox.distill.run",
}


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _LAZY, name)
