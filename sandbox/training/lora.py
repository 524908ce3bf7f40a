"""The LoRA adapter of a PPO configuration: what PPO wraps its policy with, and what TRL's trainers are given."""

from __future__ import annotations

from typing import Any

from sandbox.training.ppo_config import PPOConfig

__all__ = ["lora_config", "modules_to_save"]


def modules_to_save(config: PPOConfig, model: Any = None) -> list[str]:
    """The modules trained in full beside the adapter: `config.modules_to_save`, where `auto` is the tiny model's
    output LayerNorm (its config says `sandbox_tiny`) and nothing for another model."""
    if config.modules_to_save == "auto":
        lm = model.get_base_model() if hasattr(model, "get_base_model") else model
        return ["ln_f"] if getattr(getattr(lm, "config", None), "sandbox_tiny", False) else []
    return [m.strip() for m in config.modules_to_save.split(",") if m.strip()]


def lora_config(config: PPOConfig, model: Any = None) -> Any:
    """PEFT's `LoraConfig` of `config`'s LoRA fields (rank, alpha, dropout, target modules, modules trained in full)
    for a causal LM (`model`: the base model, for `modules_to_save: auto`)."""
    from peft import LoraConfig

    targets = config.lora_target_modules
    saved = modules_to_save(config, model)
    return LoraConfig(
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules=targets if targets == "all-linear" else targets.split(","),
        modules_to_save=saved or None,
        task_type="CAUSAL_LM",
    )
