"""What the trainer plays: the environment contract that PPO, GRPO and RLOO train on.

An environment is a game seen from the learner's side, split the way
Gymnasium splits one: a game starts from a state drawn from the seed tree
(`new_game`, and `reset(seed)` for a batch of them), the state becomes a
prompt (`prompt`), the model's answer becomes a move (`parse`; None is an
illegal move, recorded and penalised, never guessed), and a round plays the
moves of a batch of games and returns their outcomes (`step`), which the
environment's rewards score (`score`). `columns` turns an episode's outcomes
into the environment's own columns of `metrics.csv`.

Two implementations: the iterated matrix games of moral fine-tuning
(`sandbox.moral.environment.MoralSetup`) and the ultimatum game
(`sandbox.training.ultimatum_env.UltimatumEnvironment`). The rollout loop
(`sandbox.training.rollout.play_episode`) and TRL's reward function
(`sandbox.training.trl_trainers.EnvironmentReward`) know only this contract.

A game is a mutable object the environment owns; `snapshot` and `restore`
carry one through a TRL dataset's text column (TRL learns from prompts of
start states, not from episodes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sandbox.training.schedule import RewardSchedule

__all__ = ["Environment", "reset"]


@runtime_checkable
class Environment(Protocol):
    """A game the trainer plays: `parallel` games side by side, `rounds` rounds each per episode.

    Attributes:
        seed: The root of the run's seed tree.
        parallel: Games played side by side per episode (one batched generation per round).
        rounds: Rounds each game plays per episode.
        schedule: The reward in force by episode (names among `reward_kinds()`).
    """

    seed: int
    parallel: int
    rounds: int
    schedule: RewardSchedule

    @property
    def batch_size(self) -> int: ...

    def new_game(self, rng: np.random.Generator) -> Any:
        """A game at its start state, drawn from `rng`."""

    def prompt(self, game: Any, rng: np.random.Generator) -> str:
        """The prompt of the game's current state (`rng`: for draws a prompt makes, such as an order)."""

    def parse(self, answer: str, game: Any) -> Any | None:
        """The move an answer makes in the game's state; None for an illegal answer."""

    def step(self, games: Sequence[Any], moves: Sequence[Any | None], rng: np.random.Generator) -> list[Any]:
        """Play one round of every game with the learner's moves; their outcomes, in order."""

    def prefetch(self, outcomes: Sequence[Any]) -> None:
        """Get ready to score `outcomes` (a judge asks about moves it has not seen, in one batch)."""

    def reward_kinds(self) -> list[str]:
        """Every reward a metrics row reports."""

    def score(self, kind: str, outcome: Any) -> float:
        """The reward `kind` of one outcome (an illegal move earns the illegal-output penalty)."""

    def columns(self, outcomes: Sequence[Any]) -> dict[str, float]:
        """The environment's own columns of a metrics row (action types, shares, illegal rate)."""

    def snapshot(self, game: Any) -> str:
        """The game's state as text (a TRL dataset column)."""

    def restore(self, text: str) -> Any:
        """The game `snapshot` wrote."""


def reset(env: Environment, seed: int | np.random.Generator) -> list[Any]:
    """`env.parallel` games at their start states, drawn from `seed` (an int, or a node of the seed tree).

    >>> from sandbox.training.ultimatum_env import UltimatumEnvironment
    >>> env = UltimatumEnvironment(parallel=2)
    >>> [g.state for g in reset(env, 0)] == [g.state for g in reset(env, 0)]
    True
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return [env.new_game(rng) for _ in range(env.parallel)]
