"""The PPO trainer's configuration: one dataclass, every field with help text, validated on creation.

Defaults follow TRL's former PPOTrainer (which the paper used) where the
paper keeps them, and the paper's own choices otherwise (LoRA rank 64,
gradient accumulation 4, reward scaling and normalisation, two new tokens).
A scenario file's `training:` block and the CLI's options set the same fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["PRESETS", "PPOConfig"]


def _help(text: str, default: Any) -> Any:
    return field(default=default, metadata={"help": text})


@dataclass(frozen=True)
class PPOConfig:
    """Hyper-parameters of `PPOTrainer`; `PPOConfig.help()` lists them with their help text."""

    learning_rate: float = _help("Adam learning rate of the LoRA weights and the value head.", 1.41e-5)
    batch_size: int = _help("Experiences (prompt, answer, reward) per PPO step.", 8)
    mini_batch_size: int = _help("Experiences per gradient computation inside a step.", 2)
    gradient_accumulation_steps: int = _help("Mini-batches whose gradients are summed before one optimiser step.", 4)
    ppo_epochs: int = _help("Passes over the step's batch, reshuffled each time.", 4)
    cliprange: float = _help("PPO's clip on the probability ratio: [1 - c, 1 + c].", 0.2)
    cliprange_value: float = _help("Clip on how far a new value estimate may move from the old one.", 0.2)
    ratio_threshold: float = _help(
        "Skip a mini-batch whose mean probability ratio exceeds this (TRL's PPOTrainer, default 10; 0 = never): "
        "its loss counts zero. A ratio that high means earlier updates of the step moved the policy far on "
        "these answers, and PPO does not clip a ratio that rises on an answer with a negative advantage, so "
        "its loss would push further.",
        10.0,
    )
    entropy_coef: float = _help(
        "Weight of an entropy bonus on the answer tokens' distribution (0 = none, as TRL's PPOTrainer and the "
        "paper). Not the paper's: a switch for a model that settles on one answer so surely that it no longer "
        "samples the other, as the tiny model does after a reward schedule's switch.",
        0.0,
    )
    vf_coef: float = _help("Weight of the value loss against the policy loss.", 0.1)
    gamma: float = _help("Discount over the answer's tokens.", 1.0)
    lam: float = _help("GAE lambda over the answer's tokens.", 0.95)
    max_grad_norm: float = _help("Gradient-norm clip per optimiser step (0 = none).", 1.0)
    init_kl_coef: float = _help("Starting weight of the per-token KL penalty against the reference model.", 0.2)
    adap_kl_ctrl: bool = _help("Adapt the KL weight toward `target_kl` (Ziegler et al. 2019).", True)
    target_kl: float = _help("The KL (per answer, summed over tokens) the adaptive controller aims at.", 6.0)
    horizon: int = _help("The adaptive controller's horizon, in experiences.", 10_000)
    whiten_advantages: bool = _help("Normalise advantages to zero mean, unit variance per step.", True)
    score_scaling: bool = _help("Divide rewards by the running standard deviation of rewards.", True)
    score_norm: bool = _help("Also subtract the running mean of rewards (with score_scaling).", True)
    score_clip: float = _help("Clip scaled rewards to [-c, c] (0 = none).", 0.0)
    max_new_tokens: int = _help("Tokens generated per answer; an action token needs one or two.", 2)
    temperature: float = _help("Sampling temperature of rollouts.", 1.0)
    lora_r: int = _help("LoRA rank.", 64)
    lora_alpha: int = _help("LoRA alpha (scale = alpha / r).", 128)
    lora_dropout: float = _help("LoRA dropout.", 0.0)
    lora_target_modules: str = _help("Modules that get adapters: 'all-linear' or a comma-separated list.", "all-linear")
    modules_to_save: str = _help(
        "Modules trained in full beside the adapter and saved with it, comma-separated; '' = none; 'auto' = the "
        "tiny model's output LayerNorm (ln_f), none for other models. With that LayerNorm's gain fixed, the tiny "
        "model's logits cannot spread far enough for it to put more than about 95% on one token, whatever the "
        "adapter learns, and it can settle on a worse answer it can be surer of. The distillation and chain "
        "files of the tiny student set auto.",
        "",
    )
    seed: int = _help("Seed of torch (initialisation, sampling, shuffling).", 0)

    def __post_init__(self) -> None:
        positive = (
            "learning_rate",
            "batch_size",
            "mini_batch_size",
            "gradient_accumulation_steps",
            "ppo_epochs",
            "max_new_tokens",
            "lora_r",
            "lora_alpha",
            "horizon",
            "target_kl",
            "temperature",
        )
        for name in positive:
            if getattr(self, name) <= 0:
                raise ValueError(f"training.ppo.{name} must be positive, got {getattr(self, name)}")
        if self.batch_size % self.mini_batch_size:
            raise ValueError(
                f"training.ppo.batch_size ({self.batch_size}) must be a multiple of "
                f"training.ppo.mini_batch_size ({self.mini_batch_size})"
            )
        for name in ("cliprange", "cliprange_value", "lam", "gamma", "lora_dropout"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"training.ppo.{name} must lie in [0, 1], got {getattr(self, name)}")
        for name in ("vf_coef", "init_kl_coef", "max_grad_norm", "score_clip", "ratio_threshold", "entropy_coef"):
            if getattr(self, name) < 0:
                raise ValueError(f"training.ppo.{name} must not be negative, got {getattr(self, name)}")

    @classmethod
    def help(cls) -> dict[str, str]:
        """Each field's help text."""
        return {f.name: f.metadata["help"] for f in fields(cls)}


# Named sets of PPO fields (`training.ppo_preset`); the fields written in `training.ppo` override them.
PRESETS: dict[str, dict[str, Any]] = {
    # What the authors' code ran (TRL's PPOTrainer at 78f8228 under accelerate, gradient accumulation 4 set
    # after the config was built): the whole batch in one mini-batch, 4 PPO epochs accumulated into ONE
    # optimiser step per episode (the four gradients are identical, so the ratio is 1 and clipping never
    # acts), LoRA alpha 32, no gradient clipping. `mini_batch_size` is the batch (the scenario's default).
    "authors": {"gradient_accumulation_steps": 4, "lora_alpha": 32, "max_grad_norm": 0.0},
    # The sandbox's earlier real-size settings: mini-batches of 1 accumulated by 4, so 5 clipped PPO Adam
    # steps per episode of 5 experiences (3 against a learning LLM), LoRA alpha 128, gradient norm clipped to 1.
    "multi_step": {"mini_batch_size": 1, "gradient_accumulation_steps": 4, "lora_alpha": 128, "max_grad_norm": 1.0},
}
