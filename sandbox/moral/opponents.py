"""LLM opponents: a fixed LLM, or a second LLM that learns too (Tennant et al., Section 4.2).

An LLM opponent is the column player. It reads the same implicit prompt from
its own side (the payoffs mirrored, the history as its own moves first) and
answers with an action token; all of a round's games are answered in one
batched generation, before the learner answers, as the moves are
simultaneous. An illegal answer is recorded (`opponent_illegal` in the
metrics) and earns the opponent the illegal-output penalty; the learner's
round is scored against the opponent's last legal move, which is also what
the state keeps, just as the opponent never sees the learner's illegal output.

* `FrozenLLM`: the base model with the learner's adapter switched off (no
  second copy in memory), or any policy passed in; it never changes.
* `LearningLLM`: a second `PPOTrainer` with its own adapter; after each
  episode it takes a PPO step on its own experiences, with its own reward.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from sandbox.rewards.intrinsic import RewardParams, Schedule, Step, reward
from sandbox.rules.matrix import Move
from sandbox.rules.matrix_prompt import ActionTokens, matrix_prompt, parse_action
from sandbox.training.sampling import encode

__all__ = ["BaseOfAdapter", "FrozenLLM", "LLMOpponent", "LearningLLM"]


@dataclass
class BaseOfAdapter:
    """A policy that samples from a PEFT model with its adapter switched off: the frozen base model."""

    trainer: Any  # a PPOTrainer (its model is a PEFT model)

    @property
    def tokenizer(self) -> Any:
        return self.trainer.tokenizer

    def generate(self, queries: list[torch.Tensor]) -> list[torch.Tensor]:
        with self.trainer.model.disable_adapter():
            return self.trainer.generate(queries)


@dataclass
class LLMOpponent:
    """The column player answered by an LLM policy (anything with `generate(queries)` and `tokenizer`).

    Attributes:
        policy: The opponent's policy.
        tokens: The action tokens (the learner's).
        name: For tables and plots.
    """

    policy: Any
    tokens: ActionTokens
    name: str = "llm"
    experiences: list[tuple[torch.Tensor, torch.Tensor, Step]] = field(default_factory=list)
    # This round's (query, answer, move, its view of the table) per game, until `observe`.
    pending: list[tuple[torch.Tensor, torch.Tensor, Move | None, Any]] = field(default_factory=list)

    def moves(self, games: list[Any], rng: np.random.Generator) -> list[Move | None]:
        """Each game's move (None = an illegal answer), from one batched generation; experiences are kept."""
        tokenizer = self.policy.tokenizer
        views = [(game.game.for_column_player(), [(theirs, mine) for mine, theirs in game.state()]) for game in games]
        queries = [encode(tokenizer, matrix_prompt(table, history, self.tokens, rng)) for table, history in views]
        answers = self.policy.generate(queries)
        moves = [parse_action(tokenizer.decode(a, skip_special_tokens=True), self.tokens) for a in answers]
        self.pending = list(zip(queries, answers, moves, [table for table, _ in views]))
        return moves

    def observe(self, learner_seen: list[Move], learner_before: list[Move]) -> None:
        """After the round: each game's learner move as the opponent saw it, and the one before (its state)."""
        for (query, answer, move, table), other, last in zip(self.pending, learner_seen, learner_before):
            self.experiences.append((query, answer, Step(own=move, other=other, last_other=last, game=table)))

    def finish_episode(self, episode: int) -> dict[str, float]:
        """End of an episode: its statistics (a learning opponent also learns here)."""
        steps = [s for _, _, s in self.experiences]
        stats = {"opponent_illegal": float(np.mean([s.own is None for s in steps])) if steps else 0.0}
        self.experiences = []
        return stats


@dataclass
class FrozenLLM(LLMOpponent):
    """A fixed LLM opponent."""

    name: str = "llm"


@dataclass
class LearningLLM(LLMOpponent):
    """A second learning LLM: its own PPO trainer and reward schedule.

    Attributes:
        schedule: The opponent's reward schedule.
        rewards: xi and the illegal-output penalty.
    """

    name: str = "learner"
    schedule: Schedule = field(default_factory=lambda: Schedule.parse("game"))
    rewards: RewardParams = field(default_factory=RewardParams)

    def finish_episode(self, episode: int) -> dict[str, float]:
        queries = [q for q, _, _ in self.experiences]
        answers = [a for _, a, _ in self.experiences]
        steps = [s for _, _, s in self.experiences]
        kind = self.schedule.at(episode)
        stats = self.policy.step(queries, answers, [reward(kind, s, self.rewards) for s in steps])
        out = super().finish_episode(episode)
        out.update(
            {
                "opponent_reward": float(np.mean([reward(kind, s, self.rewards) for s in steps])),
                "opponent_kl": stats["kl"],
            }
        )
        return out
