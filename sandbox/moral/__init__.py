"""Moral fine-tuning (Tennant et al.): intrinsic rewards on iterated matrix games, PPO/GRPO/RLOO with LoRA.

    from sandbox.moral import train_scenario, evaluate_run
    from sandbox.core.scenario_files import load_scenario

    run_dir = train_scenario(load_scenario("scenarios/moral/tiny/utilitarian_vs_tft.yaml", kind="training"), "runs/util")
    evaluate_run(run_dir)

The torch-backed parts are imported on first use, so the rewards stay cheap to import. The trainers (PPO,
TRL's GRPO and RLOO), their rollout loop and checkpoints are shared with distillation: `sandbox.training`.
"""

from __future__ import annotations

from typing import Any

from sandbox.base.lazy import lazy_attribute
from sandbox.rewards.intrinsic import REWARDS, RewardParams, Schedule, Step, reward

__all__ = [
    "REWARDS",
    "RewardParams",
    "Schedule",
    "Step",
    "TrainingScenario",
    "counterfactual_regret",
    "evaluate_run",
    "load_base_model",
    "moral_regret",
    "resume_training",
    "reward",
    "train_scenario",
]

_LAZY = {
    "TrainingScenario": "sandbox.moral.scenario",
    "evaluate_run": "sandbox.moral.evaluation",
    "load_base_model": "sandbox.llm.base_model",
    "moral_regret": "sandbox.moral.regret",
    "counterfactual_regret": "sandbox.moral.regret",
    "resume_training": "sandbox.moral.run",
    "train_scenario": "sandbox.moral.run",
}


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _LAZY, name)
