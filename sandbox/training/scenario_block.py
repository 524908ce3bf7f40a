"""The pieces of a scenario's `training:` block that every training method shares: the PPO fields and the TRL check.

Moral fine-tuning's `Training` block (`sandbox.moral.scenario`) and a
distillation's `DistillTraining` (`sandbox.distill.scenario`) both hold
`algorithm`, `parallel`, `rounds`, a `ppo:` block of `PPOConfig` fields and a
`trl:` block of TRL fields; they build their `PPOConfig` and check their
`trl:` block here.
"""

from __future__ import annotations

import builtins
from dataclasses import fields
from typing import Any

from pydantic import Field, create_model

from sandbox.base.scenario_model import StrictModel
from sandbox.training.ppo_config import PRESETS, PPOConfig

__all__ = ["PPOFields", "batch_ppo_config", "check_trl_block"]

# The fields of `PPOConfig` as a strict pydantic model: a typo is an "unknown field" at
# `training.ppo.<name>`, a wrong type names the field, and the help text is the schema's description.
PPOFields = create_model(  # type: ignore[call-overload]
    "PPOFields",
    __base__=StrictModel,
    **{
        f.name: (getattr(builtins, str(f.type)) | None, Field(None, description=f.metadata["help"]))
        for f in fields(PPOConfig)
    },
)


def batch_ppo_config(ppo: Any, parallel: int, rounds: int, seed: int, preset: str | None = None) -> PPOConfig:
    """The `PPOConfig` of a `ppo:` block: the fields given, then the preset's, `batch_size = parallel x rounds`,
    `mini_batch_size = batch_size` and `seed` unless given."""
    given = {
        **PRESETS.get(preset or "", {}),
        **{key: value for key, value in ppo.model_dump().items() if value is not None},
    }
    batch = parallel * rounds
    if given.get("batch_size", batch) != batch:
        raise ValueError(
            f"training.ppo.batch_size ({given['batch_size']}) must equal parallel x rounds "
            f"({parallel} x {rounds}): an episode is one PPO batch"
        )
    given.setdefault("batch_size", batch)
    given.setdefault("mini_batch_size", batch)
    given.setdefault("seed", seed)
    return PPOConfig(**given)


def check_trl_block(algorithm: str, trl: dict[str, Any], parallel: int, rounds: int) -> None:
    """Raise `ValueError` when a `trl:` block does not fit the algorithm or the batch (`num_generations`)."""
    if algorithm == "ppo":
        if trl:
            raise ValueError("training.trl is for algorithm grpo or rloo; PPO reads training.ppo")
        return
    from sandbox.training.trl_trainers import check_trl_fields, config_class

    check_trl_fields(algorithm, trl)
    generations = trl.get("num_generations", config_class(algorithm).num_generations)
    if not isinstance(generations, int) or generations < 2 or (parallel * rounds) % generations:
        raise ValueError(
            f"training.trl.num_generations ({generations}) must be at least 2 and divide "
            f"parallel x rounds ({parallel} x {rounds})"
        )
