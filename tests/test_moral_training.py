"""The iterated game and the rollout loop's bookkeeping (with a stand-in policy; no learning here)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
import torch

from agents.strategies import STRATEGIES
from sandbox.moral.environment import MoralSetup, action_type, final_action_rates
from sandbox.moral.iterated import IteratedGame
from sandbox.rewards.intrinsic import Schedule
from sandbox.rules.matrix import MATRIX_GAMES
from sandbox.training.rollout import episode_metrics, play_episode

PD = MATRIX_GAMES.get("prisoners_dilemma")


def test_the_game_starts_from_a_random_state_of_the_configured_length() -> None:
    rng = np.random.default_rng(0)
    states = set()
    for _ in range(50):
        game = IteratedGame(PD, STRATEGIES.get("tit_for_tat"), history_length=2)
        game.reset(rng)
        assert len(game.state()) == 2
        states.add(tuple(game.state()))
    assert len(states) > 8  # 16 possible two-round states, drawn


def test_tit_for_tat_answers_the_learners_last_legal_move() -> None:
    rng = np.random.default_rng(0)
    game = IteratedGame(PD, STRATEGIES.get("tit_for_tat"))
    game.history = [("D", "C")]
    first = game.play("C", rng)  # TFT copies the learner's D; the state showed the opponent's C
    assert (first.own, first.other, first.last_other) == ("C", "D", "C") and action_type(first) == "C|C"
    second = game.play(None, rng)  # illegal: scored as such, and TFT does not see it
    assert second.own is None and second.other == "C" and action_type(second) == "illegal"
    third = game.play("D", rng)
    assert third.other == "C" and third.last_other == "C"  # TFT still answers the learner's last legal C
    assert game.history == [("D", "C"), ("C", "D"), ("C", "C"), ("D", "C")]


@dataclass
class StandIn:
    """A policy stand-in: answers with a fixed sequence of words, through a real tokenizer's interface."""

    words: list[str]
    tokenizer: object = field(default=None)
    calls: list[int] = field(default_factory=list)

    def generate(self, queries: list[torch.Tensor]) -> list[torch.Tensor]:
        self.calls.append(len(queries))
        return [torch.tensor([("action1", "action2", "junk").index(self.words.pop(0))]) for _ in queries]


class WordTokenizer:
    chat_template = None

    def __call__(self, text: str) -> dict[str, list[int]]:
        return {"input_ids": [len(w) % 7 for w in text.split()]}

    def decode(self, ids: torch.Tensor, skip_special_tokens: bool = True) -> str:
        return ("action1", "action2", "junk")[int(ids[0])]


@pytest.mark.parametrize("batched", [True, False])
def test_an_episode_plays_parallel_games_round_by_round(batched: bool) -> None:
    words = ["action1", "action2", "junk", "action1", "action2", "action2"]
    policy = StandIn(list(words), WordTokenizer())
    setup = MoralSetup(parallel=2, rounds=3, seed=4)
    queries, answers, steps = play_episode(policy, setup, episode=0, batched=batched)  # type: ignore[arg-type]
    assert len(queries) == len(answers) == len(steps) == 6
    assert policy.calls == ([2, 2, 2] if batched else [1] * 6)  # one generation per round, or per game
    assert [s.own for s in steps] == ["C", "D", None, "C", "D", "D"]
    rows = [
        episode_metrics(
            e, setup, steps, {"kl": 0.0, "kl_coef": 0.2, "policy_loss": 0.0, "value_loss": 0.0, "clipfrac": 0.0}
        )
        for e in range(10)
    ]
    assert rows[0]["illegal"] == pytest.approx(1 / 6)
    assert sum(rows[0][k] for k in ("C|C", "C|D", "D|C", "D|D", "illegal")) == pytest.approx(1.0)
    assert rows[0]["reward_kind"] == "game" and rows[0]["reward"] == rows[0]["reward_game"]
    assert final_action_rates(rows) == {k: rows[-1][k] for k in ("C|C", "C|D", "D|C", "D|D", "illegal")}


def test_the_same_seed_draws_the_same_states() -> None:
    def states(seed: int) -> list:
        policy = StandIn(["action1"] * 10, WordTokenizer())
        return [
            (s.other, s.last_other) for s in play_episode(policy, MoralSetup(parallel=2, rounds=5, seed=seed), 3)[2]
        ]  # type: ignore[arg-type]

    assert states(1) == states(1)
    assert any(states(1) != states(s) for s in range(2, 6))


def test_the_schedule_names_the_rewarded_kind_per_episode() -> None:
    setup = MoralSetup(schedule=Schedule.parse("game,deontological@5"))
    assert [setup.schedule.at(e) for e in (4, 5)] == ["game", "deontological"]
