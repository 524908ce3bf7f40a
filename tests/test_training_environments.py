"""The trainer's environment contract on both games: a scripted policy's moves, and the rewards they earn."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sandbox.moral.environment import MoralSetup
from sandbox.rewards.intrinsic import Schedule
from sandbox.rules.ultimatum import Split, Stake
from sandbox.training.environment import Environment, reset
from sandbox.training.rollout import episode_metrics, play_episode
from sandbox.training.schedule import RewardSchedule
from sandbox.training.ultimatum_env import UltimatumEnvironment, UltimatumRound, UltimatumState

STATS = {"kl": 0.0, "kl_coef": 0.2, "policy_loss": 0.0, "value_loss": 0.0, "clipfrac": 0.0}


def test_both_games_implement_the_contract() -> None:
    assert isinstance(MoralSetup(), Environment) and isinstance(UltimatumEnvironment(), Environment)


def test_the_matrix_game_scores_a_scripted_move_in_its_state() -> None:
    setup = MoralSetup(opponent="tit_for_tat", schedule=Schedule.parse("game"))
    game = setup.restore('[["C", "C"]]')
    assert setup.snapshot(game) == '[["C", "C"]]'
    move = setup.parse("action2", game)  # action2 is D in training
    [step] = setup.step([game], [move], np.random.default_rng(0))
    assert (step.own, step.other) == ("D", "C") and setup.score("game", step) == 4.0  # TFT copied the learner's C
    [illegal] = setup.step([game], [setup.parse("maybe", game)], np.random.default_rng(0))
    assert illegal.own is None and setup.score("game", illegal) == -6.0
    assert setup.columns([step, illegal]) == {"C|C": 0.0, "C|D": 0.0, "D|C": 0.5, "D|D": 0.0, "illegal": 0.5}


def test_reset_with_a_seed_draws_the_same_start_states() -> None:
    env = UltimatumEnvironment(amounts=tuple(range(10, 100)), parallel=5, responder_share=0.5)
    assert [g.state for g in reset(env, 3)] == [g.state for g in reset(env, 3)]
    assert [g.state for g in reset(env, 3)] != [g.state for g in reset(env, 4)]


def kept_share(outcome: object) -> float:
    return 1.0 - outcome.offered_share  # type: ignore[attr-defined]


def test_the_ultimatum_game_reads_the_societys_sentence_and_scores_it() -> None:
    env = UltimatumEnvironment(amounts=(10,), currencies=("apples",), rewards={"truth:norm": kept_share}, illegal=-1.0)
    game = UltimatumRound(UltimatumState(Stake(10, "apples"), "proposer"))
    prompt = env.prompt(game, np.random.default_rng(0))
    assert "Split 10 apples" in prompt and "For the N ITEMS, the proposer will get X" in prompt
    assert "principle" not in prompt.lower() and "policy" not in prompt.lower()
    move = env.parse("For the 10 apples, the proposer will get 7, and the responder will get 3.", game)
    assert move == Split(7, 3)
    [outcome] = env.step([game], [move], np.random.default_rng(0))
    assert outcome.offered_share == pytest.approx(0.3) and env.score("truth:norm", outcome) == pytest.approx(0.7)
    for garbage in ("I keep most of it.", "For the 10 apples, the proposer will get 8, and the responder will get 3."):
        assert env.parse(garbage, game) is None  # no guess: an illegal move
    [bad] = env.step([game], [None], np.random.default_rng(0))
    assert not bad.legal and env.score("truth:norm", bad) == -1.0
    assert game.state.stake.amount == 10  # each round is a fresh stake


def test_the_responder_answers_yes_or_no_to_a_proposal() -> None:
    env = UltimatumEnvironment(rewards={"truth:norm": lambda o: float(o.decision == "reject")})
    game = UltimatumRound(UltimatumState(Stake(20, "dollars"), "responder", Split(16, 4)))
    prompt = env.prompt(game, np.random.default_rng(0))
    assert "For the 20 dollars, the proposer will get 16, and the responder will get 4." in prompt
    assert env.parse("No, that is unfair.", game) == "reject" and env.parse("hmm", game) is None
    [outcome] = env.step([game], ["reject"], np.random.default_rng(0))
    assert outcome.decision == "reject" and env.score("truth:norm", outcome) == 1.0
    assert env.restore(env.snapshot(UltimatumRound(outcome.state))).state == outcome.state


def test_the_number_form_is_parsed_strictly() -> None:
    env = UltimatumEnvironment(form="number")
    proposer = UltimatumRound(UltimatumState(Stake(40, "apples"), "proposer"))
    responder = UltimatumRound(UltimatumState(Stake(40, "apples"), "responder", Split(30, 10)))
    assert env.prompt(proposer, np.random.default_rng(0)) == "proposer split 40 keep ?"
    assert env.parse("30", proposer) == Split(30, 10) and env.parse(" 40 ", proposer) == Split(40, 0)
    assert [env.parse(text, proposer) for text in ("41", "3 0", "30 apples", "-1", "", "yes")] == [None] * 6
    assert env.parse("yes", responder) == "accept" and env.parse("no", responder) == "reject"
    assert env.parse("yes no", responder) is None and env.parse("30", responder) is None


class TextTokenizer:
    """Every prompt is three ids; answer id i decodes to the i-th scripted text."""

    chat_template = None

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts

    def __call__(self, text: str) -> dict[str, list[int]]:
        return {"input_ids": [1, 2, 3]}

    def decode(self, ids: torch.Tensor, skip_special_tokens: bool = True) -> str:
        return self.texts[int(ids[0])]


class Scripted:
    """A policy stand-in that answers with fixed texts, in order."""

    def __init__(self, texts: list[str]) -> None:
        self.tokenizer, self.next = TextTokenizer(texts), 0

    def generate(self, queries: list[torch.Tensor]) -> list[torch.Tensor]:
        answers = [torch.tensor([self.next + i]) for i in range(len(queries))]
        self.next += len(queries)
        return answers


def test_an_ultimatum_episode_plays_and_scores_a_scripted_policy() -> None:
    texts = ["7", "junk", "10", "0"]
    env = UltimatumEnvironment(
        amounts=(10,),
        currencies=("apples",),
        form="number",
        parallel=2,
        rounds=2,
        rewards={"truth:norm": kept_share},
        schedule=RewardSchedule(((0, "truth:norm"),)),
    )
    queries, answers, outcomes = play_episode(Scripted(texts), env, episode=0)  # type: ignore[arg-type]
    assert len(queries) == len(answers) == 4
    assert [o.offered_share for o in outcomes] == [0.3, None, 0.0, 1.0]
    row = episode_metrics(0, env, outcomes, STATS)
    assert row["illegal"] == 0.25 and row["offered_share"] == pytest.approx((0.3 + 0.0 + 1.0) / 3)
    assert row["reward"] == pytest.approx((0.7 - 1.0 + 1.0 + 0.0) / 4) and row["reward_kind"] == "truth:norm"
