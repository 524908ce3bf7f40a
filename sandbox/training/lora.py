"""The LoRA adapter of a PPO configuration: what PPO wraps its policy with, and what TRL's trainers are given."""

from __future__ import annotations

from typing import Any

from sandbox.training.ppo_config import PPOConfig

__all__ = ["lora_config"]


def lora_config(config: PPOConfig) -> Any:
    """PEFT's `LoraConfig` of `config`'s LoRA fields (rank, alpha, dropout, target modules) for a causal LM."""
    from peft import LoraConfig

    targets = config.lora_target_modules
    return LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                      target_modules=targets if targets == "all-linear" else targets.split(","),
                      task_type="CAUSAL_LM")  # fmt: skip
