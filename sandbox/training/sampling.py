"""A causal LM as a player of a game: the prompt as a chat turn, and plain sampling from the policy.

PPO's probability ratios assume answers sampled from the very distribution
whose log-probabilities it computes: `sample` draws at a temperature with no
top-k or top-p, and sets the model's own generation settings aside.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["Sampler", "encode", "language_model", "neutral_generation_config", "sample"]


def encode(tokenizer: Any, prompt: str) -> torch.Tensor:
    """The prompt as the model's chat turn (its chat template when it has one), as token ids."""
    if getattr(tokenizer, "chat_template", None):
        ids = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=True, return_dict=False
        )
    else:
        ids = tokenizer(prompt)["input_ids"]
    return torch.tensor(ids, dtype=torch.long)


def language_model(model: Any) -> Any:
    """The transformers causal LM inside `model` (a PEFT model's base, with its adapter layers in place)."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


@contextmanager
def neutral_generation_config(model: Any) -> Iterator[None]:
    """Set the model's own `generation_config` aside: transformers fills every setting a call leaves unset
    from it (a checkpoint's repetition penalty, for one), which would sample from another distribution."""
    from transformers import GenerationConfig

    lm = language_model(model)
    saved = lm.generation_config
    lm.generation_config = GenerationConfig()
    try:
        yield
    finally:
        lm.generation_config = saved


@torch.no_grad()
def sample(
    model: Any, tokenizer: Any, queries: Sequence[torch.Tensor], *, max_new_tokens: int, temperature: float = 1.0
) -> list[torch.Tensor]:
    """One sampled answer per query (1-D token ids), in one batched generation with left padding.

    Answers are cut after their first EOS. Plain sampling at `temperature` (no
    top-k, no top-p), as PPO's probability ratios assume: the model's own
    generation settings (a repetition penalty, suppressed tokens, ...) are set
    aside while it samples, so they never change the distribution.
    """
    pad = tokenizer.pad_token_id
    width = max(len(q) for q in queries)
    ids = torch.full((len(queries), width), pad, dtype=torch.long)
    attention = torch.zeros((len(queries), width), dtype=torch.long)
    for i, q in enumerate(queries):
        ids[i, width - len(q) :], attention[i, width - len(q) :] = q, 1
    device = next(model.parameters()).device
    with neutral_generation_config(model):
        out = model.generate(
            input_ids=ids.to(device),
            attention_mask=attention.to(device),
            do_sample=True,
            temperature=temperature,
            top_k=0,
            top_p=1.0,
            max_new_tokens=max_new_tokens,
            pad_token_id=pad,
            eos_token_id=tokenizer.eos_token_id,
        )
    answers = []
    for row in out[:, width:].cpu():
        eos = (row == tokenizer.eos_token_id).nonzero()
        answers.append(row[: int(eos[0]) + 1] if len(eos) else row)
    return answers


@dataclass
class Sampler:
    """A model that answers prompts by sampling (what a rollout needs of a policy, without a trainer)."""

    model: Any
    tokenizer: Any
    max_new_tokens: int = 2
    temperature: float = 1.0

    def generate(self, queries: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        self.model.eval()
        return sample(
            self.model, self.tokenizer, queries, max_new_tokens=self.max_new_tokens, temperature=self.temperature
        )
