"""Moral fine-tuning's rollout loop: a learner LLM plays iterated matrix games and learns by PPO.

An episode (Tennant et al., Section 3.2) gathers one PPO batch: `parallel`
games, each reset to a random state, play `rounds` rounds in turn; on each
round every game's prompt is answered by the policy (one batched
generation), the answer is parsed to a move (or an illegal output), the
opponent moves, and the scheduled reward scores the round. Then one PPO
step. `parallel x rounds` is the batch size (the paper: 1 x 5 against TFT).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from agents.contracts import MatrixStrategy
from agents.strategies import STRATEGIES
from sandbox.games.matrix import MATRIX_GAMES, PayoffTable
from sandbox.games.matrix_prompt import ActionTokens, matrix_prompt, parse_action
from sandbox.moral.iterated import IteratedGame
from sandbox.moral.opponents import LLMOpponent
from sandbox.moral.ppo import PPOTrainer
from sandbox.moral.rewards import REWARDS, TABLE_PREFIXES, RewardFn, RewardParams, Schedule, Step, reward
from sandbox.seeding import generator

ACTION_TYPES = ("C|C", "C|D", "D|C", "D|D")  # own move | the opponent's last move


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
        proxies: The run's table rewards by name (`proxy:NAME`, `truth:NAME`; see `sandbox.proxy.reward`).
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
            raise KeyError(f"reward {kind!r} is not among this run's table rewards ({', '.join(self.proxies) or 'none'})")
        return reward(self.proxies.get(kind, kind), step, self.rewards)


def encode(tokenizer: Any, prompt: str) -> torch.Tensor:
    """The prompt as the model's chat turn (its chat template when it has one), as token ids."""
    if getattr(tokenizer, "chat_template", None):
        ids = tokenizer.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                            tokenize=True, return_dict=False)  # fmt: skip
    else:
        ids = tokenizer(prompt)["input_ids"]
    return torch.tensor(ids, dtype=torch.long)


def action_type(step: Step) -> str:
    """`own|opponent's last` for a legal move, `illegal` otherwise."""
    return "illegal" if step.own is None else f"{step.own}|{step.last_other}"


def play_episode(
    trainer: PPOTrainer,
    setup: MoralSetup,
    episode: int,
    *,
    batched: bool = True,
    rng: np.random.Generator | None = None,
) -> tuple[list[torch.Tensor], list[torch.Tensor], list[Step]]:
    """One episode's experiences: prompts, answers and scored rounds (no learning).

    Steps come round by round: round 0 of every game, then round 1, ...
    The draws (states, opponents, prompt orders) come from the episode's node of
    the seed tree, or from `rng` when given.
    """
    rng = rng if rng is not None else generator(setup.seed, episode)
    games = [IteratedGame(setup.table(), setup.strategy(), setup.history_length) for _ in range(setup.parallel)]
    for game in games:
        game.reset(rng)
    queries, answers, steps = [], [], []
    llm = setup.llm_opponent
    for _ in range(setup.rounds):
        if llm is not None:  # simultaneous moves: the opponent answers from the same state
            learner_before = [g.history[-1][0] for g in games]
            opponent_moves = llm.moves(games, rng)
        round_queries = [encode(trainer.tokenizer, matrix_prompt(g.game, g.state(), setup.tokens, rng)) for g in games]
        if batched:
            round_answers = trainer.generate(round_queries)
        else:
            round_answers = [trainer.generate([q])[0] for q in round_queries]
        for i, (game, answer) in enumerate(zip(games, round_answers)):
            move = parse_action(trainer.tokenizer.decode(answer, skip_special_tokens=True), setup.tokens)
            steps.append(game.play(move, rng) if llm is None else game.play_against(move, opponent_moves[i]))
        if llm is not None:
            llm.observe([g.history[-1][0] for g in games], learner_before)
        queries += round_queries
        answers += round_answers
    return queries, answers, steps


def episode_metrics(episode: int, setup: MoralSetup, steps: list[Step], stats: dict[str, float]) -> dict[str, Any]:
    """One row of `metrics.csv`: rewards by kind, action types, illegal rate, KL."""
    types = Counter(action_type(s) for s in steps)
    row: dict[str, Any] = {"episode": episode, "reward_kind": setup.schedule.at(episode)}
    for kind in setup.reward_kinds():
        row[f"reward_{kind}"] = float(np.mean([setup.score(kind, s) for s in steps]))
    row["reward"] = row[f"reward_{row['reward_kind']}"]  # the one in force
    for name in (*ACTION_TYPES, "illegal"):
        row[name] = types[name] / len(steps)
    row.update({key: stats[key] for key in ("kl", "kl_coef", "policy_loss", "value_loss", "clipfrac")})
    return row


def train(
    trainer: PPOTrainer,
    setup: MoralSetup,
    episodes: int,
    *,
    start: int = 0,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Episodes `start`..`episodes - 1`: play, score with the scheduled reward, one PPO step each."""
    if trainer.config.batch_size != setup.batch_size:
        raise ValueError(f"training.ppo.batch_size ({trainer.config.batch_size}) must equal parallel x rounds "
                         f"({setup.parallel} x {setup.rounds})")  # fmt: skip
    rows = []
    for episode in range(start, episodes):
        began = time.perf_counter()
        queries, answers, steps = play_episode(trainer, setup, episode)
        kind = setup.schedule.at(episode)
        scores = [setup.score(kind, s) for s in steps]
        row = episode_metrics(episode, setup, steps, trainer.step(queries, answers, scores))
        if setup.llm_opponent is not None:
            row.update(setup.llm_opponent.finish_episode(episode))  # a learning opponent learns here
        row["seconds"] = time.perf_counter() - began
        rows.append(row)
        if on_episode:
            on_episode(row)
    return rows


def action_rates(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The mean share of each action type (and of illegal outputs) over `rows`."""
    return {name: float(np.mean([r[name] for r in rows])) for name in (*ACTION_TYPES, "illegal")}


def final_action_rates(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The mean share of each action type over the last tenth of episodes."""
    return action_rates(rows[-max(1, len(rows) // 10) :])
