"""The rollout loop of any environment, its `metrics.csv` rows, and the PPO training loop over it.

An episode (Tennant et al., Section 3.2) gathers one PPO batch: `parallel`
games, each reset to a random state, play `rounds` rounds in turn; on each
round every game's prompt is answered by the policy (one batched
generation), the answer is parsed to a move (or an illegal output), the
environment plays the round, and the scheduled reward scores it. Then one
PPO step. `parallel x rounds` is the batch size (the paper: 1 x 5 against
TFT). The loop knows only the `Environment` contract
(`sandbox.training.environment`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from sandbox.base.seeding import generator
from sandbox.training.environment import Environment
from sandbox.training.ppo import PPOTrainer
from sandbox.training.sampling import encode

__all__ = ["episode_metrics", "play_episode", "train"]


def play_episode(
    trainer: PPOTrainer,
    setup: Environment,
    episode: int,
    *,
    batched: bool = True,
    rng: np.random.Generator | None = None,
) -> tuple[list[torch.Tensor], list[torch.Tensor], list[Any]]:
    """One episode's experiences in any environment: prompts, answers and scored outcomes (no learning).

    Outcomes come round by round: round 0 of every game, then round 1, ...
    The draws (states, opponents, prompt orders) come from the episode's node of
    the seed tree, or from `rng` when given.
    """
    rng = rng if rng is not None else generator(setup.seed, episode)
    games = [setup.new_game(rng) for _ in range(setup.parallel)]
    queries, answers, outcomes = [], [], []
    for _ in range(setup.rounds):
        round_queries = [encode(trainer.tokenizer, setup.prompt(game, rng)) for game in games]
        if batched:
            round_answers = trainer.generate(round_queries)
        else:
            round_answers = [trainer.generate([q])[0] for q in round_queries]
        moves = [
            setup.parse(trainer.tokenizer.decode(answer, skip_special_tokens=True), game)
            for game, answer in zip(games, round_answers)
        ]
        outcomes += setup.step(games, moves, rng)
        queries += round_queries
        answers += round_answers
    return queries, answers, outcomes


def episode_metrics(episode: int, setup: Environment, steps: Sequence[Any], stats: dict[str, float]) -> dict[str, Any]:
    """One row of `metrics.csv`: rewards by kind, the environment's columns (action types, illegal rate), KL."""
    row: dict[str, Any] = {"episode": episode, "reward_kind": setup.schedule.at(episode)}
    for kind in setup.reward_kinds():
        row[f"reward_{kind}"] = float(np.mean([setup.score(kind, s) for s in steps]))
    row["reward"] = row[f"reward_{row['reward_kind']}"]  # the one in force
    row.update(setup.columns(steps))
    row.update({key: stats[key] for key in ("kl", "kl_coef", "policy_loss", "value_loss", "clipfrac")})
    row["skipped"] = stats.get("skipped", math.nan)  # PPO's mini-batches skipped at `ratio_threshold`
    return row


def train(
    trainer: PPOTrainer,
    setup: Environment,
    episodes: int,
    *,
    start: int = 0,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Episodes `start`..`episodes - 1`: play, score with the scheduled reward, one PPO step each.

    An environment with an `llm_opponent` that learns (moral fine-tuning's `opponent: learner`) lets it learn
    after each episode, and adds its statistics to the row.
    """
    if trainer.config.batch_size != setup.batch_size:
        raise ValueError(
            f"training.ppo.batch_size ({trainer.config.batch_size}) must equal parallel x rounds "
            f"({setup.parallel} x {setup.rounds})"
        )
    rows = []
    for episode in range(start, episodes):
        began = time.perf_counter()
        queries, answers, steps = play_episode(trainer, setup, episode)
        setup.prefetch(steps)
        kind = setup.schedule.at(episode)
        scores = [setup.score(kind, s) for s in steps]
        row = episode_metrics(episode, setup, steps, trainer.step(queries, answers, scores))
        llm = getattr(setup, "llm_opponent", None)
        if llm is not None:
            row.update(llm.finish_episode(episode))  # a learning opponent learns here
        row["seconds"] = time.perf_counter() - began
        rows.append(row)
        if on_episode:
            on_episode(row)
    return rows
