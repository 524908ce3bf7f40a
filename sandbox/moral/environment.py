"""The iterated matrix games of moral fine-tuning as a training environment, and their action rates.

`MoralSetup` keeps the trainer's environment contract
(`sandbox.training.environment.Environment`): a game is an `IteratedGame`
against a fixed strategy or an LLM opponent, its prompt the matrix game's
prompt, its answer an action token, and its rewards the moral rewards
(`sandbox.rewards.intrinsic`) and the run's table rewards. The rollout and
training loops that play it live in `sandbox.training.rollout` (the ultimatum
game's environment in `sandbox.training.ultimatum_env`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.strategies import STRATEGIES
from sandbox.moral.iterated import IteratedGame
from sandbox.moral.opponents import LLMOpponent
from sandbox.rewards.intrinsic import (
    ACTION_TYPES,
    REWARDS,
    TABLE_PREFIXES,
    RewardFn,
    RewardParams,
    Schedule,
    Step,
    reward,
)
from sandbox.rules.matrix import MATRIX_GAMES, MatrixStrategy, Move, PayoffTable
from sandbox.rules.matrix_prompt import ActionTokens, matrix_prompt, parse_action

__all__ = ["MoralSetup", "action_rates", "action_type", "final_action_rates"]


@dataclass(frozen=True)
class MoralSetup:
    """What is played and rewarded (the PPO hyper-parameters live in `PPOConfig`).

    Attributes:
        game: A registered matrix game, or a payoff table.
        opponent: A registered fixed strategy, or a strategy object.
        schedule: The reward schedule, e.g. `Schedule.parse("game,utilitarian@500")`.
        tokens: The action tokens of training.
        history_length: Rounds in the state.
        parallel: Games played side by side per episode (one batched generation per round).
        rounds: Rounds each game plays per episode.
        rewards: xi and the illegal-output penalty.
        seed: The root of the run's seed tree (states, opponents' draws, prompt orders).
        proxies: The run's table rewards by name (`proxy:NAME`, `truth:NAME`; see `sandbox.rewards.proxy`).
        table_order: The order of the prompt's payoff-table rows and columns (`TABLE_ORDERS`).
    """

    game: str | PayoffTable = "prisoners_dilemma"
    opponent: str | MatrixStrategy | LLMOpponent = "tit_for_tat"
    schedule: Schedule = field(default_factory=lambda: Schedule.parse("game"))
    tokens: ActionTokens = field(default_factory=ActionTokens)
    history_length: int = 1
    parallel: int = 1
    rounds: int = 5
    rewards: RewardParams = field(default_factory=RewardParams)
    seed: int = 0
    proxies: Mapping[str, RewardFn] = field(default_factory=dict, compare=False)
    table_order: str = "CD-CD"

    @property
    def batch_size(self) -> int:
        return self.parallel * self.rounds

    def table(self) -> PayoffTable:
        return MATRIX_GAMES.get(self.game) if isinstance(self.game, str) else self.game

    def strategy(self) -> MatrixStrategy | None:
        """The opponent's fixed strategy; None for an LLM opponent."""
        if isinstance(self.opponent, LLMOpponent):
            return None
        return STRATEGIES.get(self.opponent) if isinstance(self.opponent, str) else self.opponent

    @property
    def llm_opponent(self) -> LLMOpponent | None:
        return self.opponent if isinstance(self.opponent, LLMOpponent) else None

    def reward_kinds(self) -> list[str]:
        """Every reward a metrics row reports: the registered ones and the run's table rewards."""
        return [*REWARDS.names(), *self.proxies]

    def score(self, kind: str, step: Step) -> float:
        """The reward `kind` (registered, or one of the run's table rewards) of `step`."""
        if kind.startswith(TABLE_PREFIXES) and kind not in self.proxies:
            raise KeyError(
                f"reward {kind!r} is not among this run's table rewards ({', '.join(self.proxies) or 'none'})"
            )
        return reward(self.proxies.get(kind, kind), step, self.rewards)

    # -- the Environment contract -------------------------------------------------------------

    def new_game(self, rng: np.random.Generator) -> IteratedGame:
        game = IteratedGame(self.table(), self.strategy(), self.history_length)
        game.reset(rng)
        return game

    def prompt(self, game: IteratedGame, rng: np.random.Generator) -> str:
        return matrix_prompt(game.game, game.state(), self.tokens, rng, self.table_order)

    def parse(self, answer: str, game: IteratedGame) -> Move | None:
        return parse_action(answer, self.tokens)

    def step(self, games: Sequence[IteratedGame], moves: Sequence[Move | None], rng: np.random.Generator) -> list[Step]:
        """One round of every game; an LLM opponent answers all games' states in one batch (moves are simultaneous)."""
        llm = self.llm_opponent
        if llm is None:
            return [game.play(move, rng) for game, move in zip(games, moves)]
        learner_before = [g.history[-1][0] for g in games]
        opponent_moves = llm.moves(list(games), rng)
        steps = [game.play_against(move, theirs) for game, move, theirs in zip(games, moves, opponent_moves)]
        llm.observe([g.history[-1][0] for g in games], learner_before)
        return steps

    def prefetch(self, outcomes: Sequence[Step]) -> None:
        """Nothing to fetch: the rewards are functions, the judge's tables were filled when the run began."""

    def columns(self, outcomes: Sequence[Step]) -> dict[str, float]:
        """The share of each action type (own move | the opponent's last move) and of illegal outputs."""
        types = Counter(action_type(s) for s in outcomes)
        return {name: types[name] / len(outcomes) for name in (*ACTION_TYPES, "illegal")}

    def snapshot(self, game: IteratedGame) -> str:
        return json.dumps(game.state())

    def restore(self, text: str) -> IteratedGame:
        game = IteratedGame(self.table(), self.strategy(), self.history_length)
        game.history = [(own, other) for own, other in json.loads(text)]
        return game


def action_type(step: Step) -> str:
    """`own|opponent's last` for a legal move, `illegal` otherwise."""
    return "illegal" if step.own is None else f"{step.own}|{step.last_other}"


def action_rates(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The mean share of each action type (and of illegal outputs) over `rows`."""
    return {name: float(np.mean([r[name] for r in rows])) for name in (*ACTION_TYPES, "illegal")}


def final_action_rates(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The mean share of each action type over the last tenth of episodes."""
    return action_rates(rows[-max(1, len(rows) // 10) :])
