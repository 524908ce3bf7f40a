"""A PPO run in a run directory: resumed from its last whole checkpoint, then trained episode by episode.

Each episode's row is appended to the metrics file at once, and every
`checkpoint_every` episodes (and after the last) the trainer is checkpointed
(`sandbox.training.checkpoints`), with any other trainer the run holds (a
learning opponent's) inside it. Moral fine-tuning and distillation run PPO
through here; TRL's trainers keep their own checkpoints
(`sandbox.training.trl_trainers.train_with_trl`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sandbox.base.files import read_json
from sandbox.core.run_dir import RunDirectory
from sandbox.training.checkpoints import (
    CHECKPOINT,
    MetricsFile,
    keep_rows,
    recover_checkpoint,
    running,
    save_checkpoint,
)
from sandbox.training.environment import Environment
from sandbox.training.hooks import TrainHooks
from sandbox.training.ppo import PPOTrainer
from sandbox.training.rollout import train

__all__ = ["resume_point", "train_ppo_run"]


def resume_point(
    run_dir: RunDirectory, trainer: PPOTrainer, metrics: Path, extra: Mapping[str, Any] | None = None
) -> int:
    """The episodes done at the last whole checkpoint (0 without one), loaded into `trainer` (and each of `extra`'s
    trainers from `checkpoint/NAME`); the rows of `metrics` after it are dropped, to be played again."""
    recover_checkpoint(run_dir)
    checkpoint = run_dir / CHECKPOINT
    start = 0
    if (checkpoint / "state.json").is_file():
        trainer.load(checkpoint)
        for name, other in (extra or {}).items():
            other.load(checkpoint / name)
        start = read_json(checkpoint / "state.json")["episodes"]
    keep_rows(metrics, start)
    return start


def train_ppo_run(
    run_dir: RunDirectory,
    trainer: PPOTrainer,
    env: Environment,
    *,
    episodes: int,
    start: int,
    checkpoint_every: int,
    metrics: Path,
    hooks: TrainHooks,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """Episodes `start`..`episodes - 1` of `env` under `running` (status in `run.json`), each row appended to
    `metrics`, checkpoints every `checkpoint_every` episodes and after the last (`extra`: other trainers saved in
    them, by name); `hooks.on_start(episodes, start)` first and `hooks.on_episode(row)` after each row."""
    if hooks.on_start:
        hooks.on_start(episodes, start)
    with running(run_dir, start), MetricsFile(metrics) as rows:

        def on_episode(row: dict[str, Any]) -> None:
            rows.append(row)
            done = row["episode"] + 1
            if done % checkpoint_every == 0 or done == episodes:
                save_checkpoint(run_dir, trainer, done, dict(extra) if extra else None)
            if hooks.on_episode:
                hooks.on_episode(row)

        train(trainer, env, episodes, start=start, on_episode=on_episode)
