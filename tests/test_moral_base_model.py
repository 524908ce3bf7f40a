"""Base models for moral fine-tuning: specs, a transformers directory, and SmolLM2's GGUF through transformers."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from sandbox.base.errors import ModelUnavailableError
from sandbox.llm.base_model import check_base_model_spec, load_base_model
from sandbox.llm.tiny_model import build_tiny_lm


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-5", "unknown base model"),
        ("hf:", "hf needs a path"),
        ("tiny:x", "tiny takes a seed"),
        ("smollm2:big", "smollm2 takes no argument"),
    ],
)
def test_bad_specs_are_refused(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_base_model_spec(spec)


def test_tiny_and_hf_directories_load_on_cpu_in_float32(tmp_path: Path) -> None:
    tiny = load_base_model("tiny:3", device="cpu")
    saved = load_base_model(f"hf:{build_tiny_lm(tmp_path / 'tiny', seed=3)}", device="cpu")
    assert tiny.device == saved.device == "cpu" and saved.model.dtype == torch.float32
    for (name, a), (_, b) in zip(tiny.model.state_dict().items(), saved.model.state_dict().items()):
        assert torch.equal(a, b), name  # the same seed builds the same model, in memory or on disk
    assert saved.tokenizer.pad_token_id is not None


def test_a_missing_model_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="no transformers model directory"):
        load_base_model(f"hf:{tmp_path}")
    with pytest.raises(ModelUnavailableError, match="no GGUF file"):
        load_base_model(f"gguf:{tmp_path / 'model.gguf'}")


@pytest.mark.slow(seconds=30)
def test_smollm2_loads_through_transformers_and_plays_a_round() -> None:
    from sandbox.moral.environment import MoralSetup
    from sandbox.training.ppo import PPOTrainer
    from sandbox.training.ppo_config import PPOConfig
    from sandbox.training.rollout import play_episode

    base = load_base_model("smollm2", device="cpu")
    assert type(base.model).__name__ == "LlamaForCausalLM" and base.tokenizer.chat_template
    assert sum(p.numel() for p in base.model.parameters()) > 100e6  # 135M parameters, dequantised
    trainer = PPOTrainer(base.model, base.tokenizer, PPOConfig(batch_size=2, mini_batch_size=2, lora_r=4, lora_alpha=8))
    queries, answers, steps = play_episode(trainer, MoralSetup(parallel=2, rounds=1), 0)
    assert len(steps) == 2 and all(0 < len(a) <= 2 for a in answers)  # two new tokens at most, legal or not
    stats = trainer.step(queries, answers, [1.0, -1.0])
    assert stats["ratio_first"] == pytest.approx(1.0, abs=1e-4)
