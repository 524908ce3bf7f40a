"""The training kind's conformance case (`sandbox.core.conformance`): moral fine-tuning of the tiny model for 4
episodes (the game's reward and the utilitarian reward from episode 3), with checkpoints every 2 rounds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.core.conformance import ConformanceCase

__all__ = ["CASE"]


def _scenario(tmp: Path) -> Any:
    from sandbox.core.scenario_files import parse_kind

    ppo = {"learning_rate": 0.01, "lora_r": 4, "lora_alpha": 8, "max_new_tokens": 1, "ppo_epochs": 2}
    training = {"episodes": 4, "reward": "game,utilitarian@3", "parallel": 1, "rounds": 5, "checkpoint_every": 2}
    return parse_kind(
        "training",
        {
            "name": "training-conformance",
            "seed": 3,
            "models": {"policy": "tiny"},
            "training": {**training, "ppo": {**ppo, "gradient_accumulation_steps": 1}},
        },
    )


def _hooks(tick: Callable[[], None]) -> Any:
    from sandbox.training.hooks import TrainHooks

    return TrainHooks(on_episode=lambda _: tick())


CASE = ConformanceCase(scenario=_scenario, hooks=_hooks, tables=("metrics.csv",))
