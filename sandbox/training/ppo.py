"""A small PPO trainer for causal LMs with a LoRA adapter (TRL 1.16 ships none).

It follows the PPO of TRL's former `PPOTrainer` (Ziegler et al. 2019;
Stiennon et al. 2020), which the paper used:

* policy = the base model with a LoRA adapter (PEFT); the reference is the
  same model with the adapter disabled, so no second copy is held;
* a value head (one linear layer) on the policy's last hidden state;
* per-token rewards: -beta x (log pi - log pi_ref) on every answer token,
  plus the episode's score on the last one; beta follows an adaptive
  controller toward a target KL;
* advantages by GAE over the answer's tokens, whitened;
* the clipped surrogate objective and a clipped value loss, over several
  epochs of shuffled mini-batches, with gradient accumulation and
  gradient-norm clipping; a mini-batch whose mean ratio exceeds
  `ratio_threshold` is skipped (its loss counts zero), as TRL did;
* scores scaled (and normalised) by running moments.

`PPOTrainer.generate` samples answers for a batch of prompts; `PPOTrainer.step`
learns from (prompt, answer, score) triples and returns its statistics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from sandbox.training.lora import lora_config
from sandbox.training.ppo_config import PPOConfig
from sandbox.training.sampling import language_model, sample

__all__ = ["AdaptiveKLController", "PPOTrainer", "RunningMoments", "gae", "ppo_losses"]


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (values * mask).sum() / mask.sum().clamp(min=1)


def masked_whiten(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Zero mean, unit variance over the unmasked entries."""
    mean = masked_mean(values, mask)
    var = masked_mean((values - mean) ** 2, mask)
    return (values - mean) * torch.rsqrt(var + 1e-8) * mask


def gae(
    values: torch.Tensor, rewards: torch.Tensor, mask: torch.Tensor, gamma: float, lam: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimates and returns over token positions ([batch, tokens] each).

    >>> adv, ret = gae(torch.zeros(1, 2), torch.tensor([[0.0, 1.0]]), torch.ones(1, 2), 1.0, 1.0)
    >>> adv.tolist(), ret.tolist()
    ([[1.0, 1.0]], [[1.0, 1.0]])
    """
    values, rewards = values * mask, rewards * mask
    last, advantages = torch.zeros(values.shape[0]), []
    for t in reversed(range(values.shape[1])):
        following = values[:, t + 1] if t + 1 < values.shape[1] else torch.zeros(values.shape[0])
        delta = rewards[:, t] + gamma * following - values[:, t]
        last = delta + gamma * lam * last
        advantages.append(last)
    advantages_t = torch.stack(advantages[::-1], dim=1) * mask
    return advantages_t, advantages_t + values


def ppo_losses(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    vpreds: torch.Tensor,
    old_values: torch.Tensor,
    returns: torch.Tensor,
    mask: torch.Tensor,
    *,
    cliprange: float,
    cliprange_value: float,
) -> dict[str, torch.Tensor]:
    """The clipped surrogate (policy) loss and the clipped value loss, with diagnostics.

    The policy loss is max(-A r, -A clip(r, 1-c, 1+c)) per token: once the
    ratio r leaves the clip range in the advantage's direction, its gradient is zero.
    """
    ratio = torch.exp(logprobs - old_logprobs)
    pg_losses = -advantages * ratio
    pg_clipped = -advantages * torch.clamp(ratio, 1.0 - cliprange, 1.0 + cliprange)
    vclipped = old_values + torch.clamp(vpreds - old_values, -cliprange_value, cliprange_value)
    vf = torch.max((vpreds - returns) ** 2, (vclipped - returns) ** 2)
    return {
        "policy_loss": masked_mean(torch.max(pg_losses, pg_clipped), mask),
        "value_loss": 0.5 * masked_mean(vf, mask),
        "ratio": masked_mean(ratio, mask),
        "clipfrac": masked_mean((pg_clipped > pg_losses).float(), mask),
    }


class AdaptiveKLController:
    """Adapts the KL weight toward a target KL (Ziegler et al. 2019).

    >>> kl = AdaptiveKLController(0.2, target=6.0, horizon=10_000)
    >>> kl.update(12.0, n_steps=1000); round(kl.value, 4)  # far above target: +0.2 x 1000/10000
    0.204
    """

    def __init__(self, init: float, target: float, horizon: int) -> None:
        self.value, self.target, self.horizon = init, target, horizon

    def update(self, current: float, n_steps: int) -> None:
        error = min(max(current / self.target - 1.0, -0.2), 0.2)
        self.value *= 1.0 + error * n_steps / self.horizon


@dataclass
class RunningMoments:
    """Running mean and standard deviation of rewards (Chan et al.'s parallel update)."""

    mean: float = 0.0
    var: float = 1.0
    count: float = 1e-24

    def update(self, xs: torch.Tensor) -> None:
        n = xs.numel()
        batch_mean, batch_var = float(xs.mean()), float(xs.var(unbiased=False))
        delta, total = batch_mean - self.mean, self.count + n
        m2 = self.var * self.count + batch_var * n + delta**2 * self.count * n / total
        self.mean, self.var, self.count = self.mean + delta * n / total, m2 / total, total

    @property
    def std(self) -> float:
        return math.sqrt(self.var) if self.count > 1 else 1.0


class ValueHead(nn.Module):
    """A linear value estimate from the last hidden state."""

    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.summary = nn.Linear(hidden_size, 1)
        nn.init.zeros_(self.summary.bias)
        nn.init.normal_(self.summary.weight, std=1.0 / math.sqrt(hidden_size + 1))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.summary(hidden.to(self.summary.weight.dtype)).squeeze(-1)


class PPOTrainer:
    """PPO with a LoRA policy, an adapter-off reference and a value head.

    Args:
        model: A transformers causal LM (the base; it is wrapped with a new
            LoRA adapter unless it already is a PEFT model).
        tokenizer: Its tokenizer (needs a pad or EOS token).
        config: The hyper-parameters.
    """

    def __init__(self, model: Any, tokenizer: Any, config: PPOConfig) -> None:
        from peft import PeftModel, get_peft_model

        torch.manual_seed(config.seed)
        self.config, self.tokenizer = config, tokenizer
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        if not isinstance(model, PeftModel):
            model = get_peft_model(model, lora_config(config, model))
        # No dropout in the policy: PPO's ratio compares two forward passes of one policy, and
        # dropout would make it differ from 1 before any update (TRL does the same).
        for module in model.modules():
            if isinstance(module, nn.Dropout):
                module.p = 0.0
        self.model = model
        self.device = next(model.parameters()).device
        self.value_head = ValueHead(model.config.hidden_size).to(self.device)
        trainable = [p for p in model.parameters() if p.requires_grad] + list(self.value_head.parameters())
        self.optimizer = torch.optim.Adam(trainable, lr=config.learning_rate)
        self.kl = AdaptiveKLController(config.init_kl_coef, config.target_kl, config.horizon)
        self.scores = RunningMoments()
        self.steps = 0

    # -- rollouts ---------------------------------------------------------------------------

    def generate(self, queries: Sequence[torch.Tensor], *, generator_seed: int | None = None) -> list[torch.Tensor]:
        """Sample one answer per query (1-D token ids), batched with left padding; answers end at EOS."""
        if generator_seed is not None:
            torch.manual_seed(generator_seed)
        self.model.eval()
        return sample(
            self.model,
            self.tokenizer,
            queries,
            max_new_tokens=self.config.max_new_tokens,
            temperature=self.config.temperature,
        )

    # -- learning ---------------------------------------------------------------------------

    def _forward(
        self,
        queries: Sequence[torch.Tensor],
        answers: Sequence[torch.Tensor],
        *,
        adapter: bool = True,
        entropy: bool = False,
    ) -> tuple[torch.Tensor, ...]:
        """Log-probabilities and values of each answer token, and the answer mask ([batch, tokens]).

        With `entropy`, a fourth tensor: the entropy of the sampling distribution at each answer token.

        The log-probabilities are those of the sampling distribution (logits
        divided by the temperature). The LM head runs only at the positions that
        predict an answer token, not over the whole sequence: the full logits
        (sequence x vocabulary) are most of a forward pass's memory.
        """
        pad = self.tokenizer.pad_token_id
        width = max(len(q) + len(a) for q, a in zip(queries, answers))
        tokens = max(len(a) for a in answers)
        ids = torch.full((len(queries), width), pad, dtype=torch.long)
        attention = torch.zeros_like(ids)
        positions = torch.zeros((len(queries), tokens), dtype=torch.long)
        mask = torch.zeros((len(queries), tokens))
        targets = torch.full((len(queries), tokens), pad, dtype=torch.long)
        for i, (q, a) in enumerate(zip(queries, answers)):
            ids[i, : len(q) + len(a)] = torch.cat([q, a])
            attention[i, : len(q) + len(a)] = 1
            positions[i, : len(a)] = torch.arange(len(q) - 1, len(q) + len(a) - 1)  # the logits that predict a
            mask[i, : len(a)], targets[i, : len(a)] = 1, a
        ids, attention = ids.to(self.device), attention.to(self.device)
        positions, targets = positions.to(self.device), targets.to(self.device)
        lm = language_model(self.model)
        if adapter:
            hidden = lm.base_model(input_ids=ids, attention_mask=attention).last_hidden_state
        else:
            with self.model.disable_adapter():
                hidden = lm.base_model(input_ids=ids, attention_mask=attention).last_hidden_state
        rows = torch.arange(len(queries), device=self.device)[:, None]
        hidden = hidden[rows, positions]
        logits = lm.get_output_embeddings()(hidden).float()
        softcap = getattr(lm.config, "final_logit_softcapping", None)  # Gemma 2 caps its logits in its LM head
        if softcap:
            logits = torch.tanh(logits / softcap) * softcap
        logits = logits / self.config.temperature
        every = torch.log_softmax(logits, dim=-1)
        logprobs = every.gather(-1, targets[..., None]).squeeze(-1)
        values = self.value_head(hidden)
        if entropy:
            return logprobs.cpu() * mask, values.cpu() * mask, mask, -(every.exp() * every).sum(-1).cpu() * mask
        return logprobs.cpu() * mask, values.cpu() * mask, mask

    def _forward_chunked(
        self, queries: Sequence[torch.Tensor], answers: Sequence[torch.Tensor], *, adapter: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """`_forward` over the batch `mini_batch_size` experiences at a time (as TRL did), padded to one width."""
        tokens = max(len(a) for a in answers)
        parts = [
            self._forward(
                queries[i : i + self.config.mini_batch_size],
                answers[i : i + self.config.mini_batch_size],
                adapter=adapter,
            )
            for i in range(0, len(queries), self.config.mini_batch_size)
        ]
        return tuple(
            torch.cat([nn.functional.pad(part[k], (0, tokens - part[k].shape[1])) for part in parts]) for k in range(3)
        )  # type: ignore[return-value]

    def _scaled(self, scores: torch.Tensor) -> torch.Tensor:
        config = self.config
        if config.score_scaling:
            self.scores.update(scores)
            scores = (scores - self.scores.mean) / self.scores.std if config.score_norm else scores / self.scores.std
        if config.score_clip:
            scores = scores.clamp(-config.score_clip, config.score_clip)
        return scores

    def step(
        self, queries: Sequence[torch.Tensor], answers: Sequence[torch.Tensor], scores: Sequence[float]
    ) -> dict[str, float]:
        """One PPO step on a batch of `config.batch_size` experiences; returns its statistics.

        `ratio_first` is the mean probability ratio on the first mini-batch of
        the first epoch (1 by construction: the policy has not moved yet).
        """
        config = self.config
        if not len(queries) == len(answers) == len(scores) == config.batch_size:
            raise ValueError(
                f"a PPO step takes {config.batch_size} experiences, got "
                f"{len(queries)} prompts, {len(answers)} answers and {len(scores)} scores"
            )
        raw = torch.tensor(list(scores), dtype=torch.float32)
        score = self._scaled(raw.clone())
        self.model.eval()
        with torch.no_grad():
            old_logprobs, old_values, mask = self._forward_chunked(queries, answers)
            ref_logprobs, _, _ = self._forward_chunked(queries, answers, adapter=False)
        kl_tokens = (old_logprobs - ref_logprobs) * mask
        rewards = -self.kl.value * kl_tokens
        last = mask.sum(1).long() - 1
        rewards[torch.arange(len(answers)), last] += score
        advantages, returns = gae(old_values, rewards, mask, config.gamma, config.lam)
        if config.whiten_advantages:
            advantages = masked_whiten(advantages, mask)

        self.model.train()
        history: dict[str, list[float]] = {"policy_loss": [], "value_loss": [], "ratio": [], "clipfrac": []}
        grad_norms: list[float] = []
        micro = skipped = 0
        self.optimizer.zero_grad()
        for _ in range(config.ppo_epochs):
            order = torch.randperm(config.batch_size)
            for start in range(0, config.batch_size, config.mini_batch_size):
                idx = order[start : start + config.mini_batch_size].tolist()
                logprobs, vpreds, sub_mask, *entropy = self._forward(
                    [queries[i] for i in idx], [answers[i] for i in idx], entropy=bool(config.entropy_coef)
                )
                width = sub_mask.shape[1]
                losses = ppo_losses(
                    logprobs,
                    old_logprobs[idx, :width],
                    advantages[idx, :width],
                    vpreds,
                    old_values[idx, :width],
                    returns[idx, :width],
                    sub_mask,
                    cliprange=config.cliprange,
                    cliprange_value=config.cliprange_value,
                )
                loss = losses["policy_loss"] + config.vf_coef * losses["value_loss"]
                if config.entropy_coef:
                    loss = loss - config.entropy_coef * masked_mean(entropy[0], sub_mask)
                if config.ratio_threshold and float(losses["ratio"].detach()) > config.ratio_threshold:
                    # TRL: the policy moved too far on these answers (Adam's momentum from earlier ones still acts)
                    loss, skipped = loss * 0.0, skipped + 1
                (loss / config.gradient_accumulation_steps).backward()
                for name in history:
                    history[name].append(float(losses[name].detach()))
                micro += 1
                if micro % config.gradient_accumulation_steps == 0:
                    grad_norms.append(self._optimizer_step())
        if micro % config.gradient_accumulation_steps:
            grad_norms.append(self._optimizer_step())

        kl = float(kl_tokens.sum(1).mean())
        if config.adap_kl_ctrl:
            self.kl.update(kl, config.batch_size)
        self.steps += 1
        return {
            "kl": kl,
            "kl_coef": self.kl.value,
            "score_mean": float(raw.mean()),
            "policy_loss": sum(history["policy_loss"]) / len(history["policy_loss"]),
            "value_loss": sum(history["value_loss"]) / len(history["value_loss"]),
            "value_loss_first": history["value_loss"][0],
            "value_loss_last": history["value_loss"][-1],
            "ratio_first": history["ratio"][0],
            "ratio_mean": sum(history["ratio"]) / len(history["ratio"]),
            "clipfrac": sum(history["clipfrac"]) / len(history["clipfrac"]),
            "skipped": skipped,
            "grad_norm": max(grad_norms) if grad_norms else 0.0,
        }

    def _optimizer_step(self) -> float:
        params = [p for group in self.optimizer.param_groups for p in group["params"] if p.grad is not None]
        norm = torch.nn.utils.clip_grad_norm_(params, self.config.max_grad_norm or float("inf"))
        self.optimizer.step()
        self.optimizer.zero_grad()
        return float(norm)

    # -- checkpoints ------------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        """The adapter (PEFT format), the value head, the optimiser and the controllers, under `path`."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(path / "adapter")
        torch.save(
            {
                "value_head": self.value_head.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "kl_coef": self.kl.value,
                "scores": vars(self.scores),
                "steps": self.steps,
                "rng": torch.get_rng_state(),
                "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
            },
            path / "trainer.pt",
        )

    def load(self, path: str | Path) -> None:
        """Restore what `save` wrote (the adapter weights into the live model)."""
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        path = Path(path)
        set_peft_model_state_dict(
            self.model, load_file(str(path / "adapter" / "adapter_model.safetensors"), device=str(self.device))
        )
        state = torch.load(path / "trainer.pt", weights_only=False, map_location=self.device)  # saved on any device
        self.value_head.load_state_dict(state["value_head"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.kl.value, self.steps = state["kl_coef"], state["steps"]
        self.scores = RunningMoments(**state["scores"])
        torch.set_rng_state(state["rng"].cpu())  # RNG states are CPU byte tensors, wherever the rest went
        if state.get("cuda_rng") is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all([s.cpu() for s in state["cuda_rng"]])
