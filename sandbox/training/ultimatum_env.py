"""The ultimatum game as a training environment: the student proposes splits and answers proposals, with no policy.

Each round of a game is one move on a fresh stake: an amount drawn from the
training amounts and a currency from the training currencies. As proposer
the student splits the stake; as responder (a `responder_share` of rounds)
it accepts or rejects a proposal whose part for it is drawn uniformly from 0
to the amount. The prompt carries no policy and no system prompt
(`prompts/student/`).

Three answer forms:

* `sentence`: the society's own sentence ("For the 52 apples, the proposer
  will get 40, and the responder will get 12.", and yes or no), read by the
  society's parsers (`sandbox.rules.ultimatum`); for a real model.
* `number`: the tiny in-process model answers the number it keeps (and yes
  or no), parsed strictly: only a whole number from 0 to the amount is a
  move; its prompt holds only words its vocabulary knows.
* `share`: the student answers how many tenths of the amount it offers ("3",
  or "I offer 3 tenths"), a whole number from 0 to 10, parsed strictly; the
  split gives the responder that many tenths of the amount, rounded half up.
  Every library norm is then one answer whatever the amount (selfish 0, fair
  5, altruistic 10), where in the number form a selfish norm means copying
  the amount's word. Answers are yes or no, to an offer shown in tenths.

An answer that does not parse is an illegal move, as in the society: it is
recorded and earns `illegal`, whatever the reward.

>>> env = UltimatumEnvironment(amounts=(10,), currencies=("apples",), form="number")
>>> game = env.new_game(np.random.default_rng(0))
>>> env.prompt(game, np.random.default_rng(0))
'proposer split 10 keep ?'
>>> env.parse("7", game), env.parse("11", game), env.parse("7 apples", game)
(Split(proposer=7, responder=3), None, None)
>>> share = UltimatumEnvironment(amounts=(15,), currencies=("apples",), form="share")
>>> game = share.new_game(np.random.default_rng(0))
>>> share.prompt(game, np.random.default_rng(0))
'proposer split 15 offer tenths ?'
>>> share.parse("3", game), share.parse("I offer 10 tenths", game), share.parse("11", game)
(Split(proposer=10, responder=5), Split(proposer=0, responder=15), None)
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

import prompts
from sandbox.rules.ultimatum import (
    Decision,
    ParseError,
    Split,
    Stake,
    parse_decision,
    parse_proposal,
    proposal_sentence,
)
from sandbox.training.schedule import RewardSchedule

__all__ = [
    "AnswerForm",
    "Role",
    "UltimatumEnvironment",
    "UltimatumOutcome",
    "UltimatumRound",
    "UltimatumState",
    "offered_tenths",
    "parse_student",
    "student_prompt",
    "tenths_split",
    "tiny_vocabulary",
]

Role = Literal["proposer", "responder"]
AnswerForm = Literal["sentence", "number", "share"]
_NUMBER = re.compile(r"\d+")
_TENTHS = re.compile(r"(?:i offer )?(\d+)(?: tenths?)?\.?", re.IGNORECASE)
_YES_NO = re.compile(r"(yes|no)")


@dataclass(frozen=True)
class UltimatumState:
    """What the student faces: the stake, its role, and (as responder) the proposal it answers."""

    stake: Stake
    role: Role
    offer: Split | None = None

    def __post_init__(self) -> None:
        if (self.role == "responder") != (self.offer is not None):
            raise ValueError("a responder answers an offer; a proposer has none")


@dataclass
class UltimatumRound:
    """One game of the environment: its current state (a fresh stake each round)."""

    state: UltimatumState


@dataclass(frozen=True)
class UltimatumOutcome:
    """One scored move: the state, the move (None = illegal) and the answer it was read from."""

    state: UltimatumState
    move: Split | Decision | None
    answer: str = ""

    @property
    def legal(self) -> bool:
        return self.move is not None

    @property
    def offered_share(self) -> float | None:
        """The proposer's offer to the responder as a share of the amount (a legal proposal), else None."""
        return self.move.offered_share() if isinstance(self.move, Split) else None

    @property
    def decision(self) -> Decision | None:
        return self.move if isinstance(self.move, str) else None


UltimatumReward = Callable[[UltimatumOutcome], float]


def tiny_vocabulary(max_amount: int, form: AnswerForm = "number") -> tuple[str, ...]:
    """The words of the tiny model's prompts and answers: whole numbers up to `max_amount` (and at least 10, the
    share form's tenths), and the words of its form's prompts."""
    words = " proposer responder split keep get accept yes no ?" + (" offer tenths" if form == "share" else "")
    return (" ".join(str(n) for n in range(max(max_amount, 10 if form == "share" else 0) + 1)) + words,)


def tenths_split(amount: int, tenths: int) -> Split:
    """The split that offers `tenths` tenths of `amount` to the responder, rounded half up.

    >>> tenths_split(13, 5), tenths_split(13, 0), tenths_split(13, 10)
    (Split(proposer=6, responder=7), Split(proposer=13, responder=0), Split(proposer=0, responder=13))
    """
    offered = (2 * tenths * amount + 10) // 20
    return Split(amount - offered, offered)


def offered_tenths(split: Split) -> int:
    """An offer in whole tenths of its amount, rounded half up (what the share form's responder is shown)."""
    amount = split.proposer + split.responder
    return (20 * split.responder + amount) // (2 * amount) if amount else 0


def student_prompt(state: UltimatumState, form: AnswerForm) -> str:
    """The student's prompt for a move in `state` (`prompts/student/`): no policy, no system prompt."""
    suffix = "" if form == "sentence" else f"_{form}"
    if state.role == "proposer":
        return prompts.render(f"student/propose{suffix}.j2", stake=state.stake, remark=False)
    assert state.offer is not None
    return prompts.render(
        f"student/respond{suffix}.j2",
        stake=state.stake,
        split=state.offer,
        proposal=proposal_sentence(state.stake, state.offer),
        tenths=offered_tenths(state.offer),
    )


def parse_student(answer: str, state: UltimatumState, form: AnswerForm) -> Split | Decision | None:
    """The move in a student's answer, or None (an illegal move): the society's parsers, or the strict number form."""
    text = answer.strip()
    if form == "share" and state.role == "proposer":
        match = _TENTHS.fullmatch(text)
        if match is None or int(match.group(1)) > 10:
            return None
        return tenths_split(state.stake.amount, int(match.group(1)))
    if form in ("number", "share"):
        if state.role == "responder":
            match = _YES_NO.fullmatch(text)
            return None if match is None else ("accept" if match.group(1) == "yes" else "reject")
        if not _NUMBER.fullmatch(text) or int(text) > state.stake.amount:
            return None
        return Split(int(text), state.stake.amount - int(text))
    try:
        return parse_proposal(text, state.stake) if state.role == "proposer" else parse_decision(text)
    except ParseError:
        return None


@dataclass(frozen=True)
class UltimatumEnvironment:
    """The ultimatum game for the trainer (implements `sandbox.training.environment.Environment`).

    Attributes:
        amounts: The amounts a stake is drawn from (uniformly).
        currencies: The currencies a stake is drawn from (uniformly).
        responder_share: The share of rounds the student plays as responder.
        form: `sentence` (the society's sentence and parsers), `number` (the amount kept; the tiny model's short
            form) or `share` (the tenths offered).
        rewards: Reward functions of a legal outcome, by name (`proxy:judge`, `truth:norm`, ...).
        schedule: The reward in force by episode.
        illegal: The reward of an illegal move.
        parallel: Games side by side per episode.
        rounds: Rounds (moves) per game and episode.
        seed: The root of the run's seed tree.
        prefetch_rewards: Called with each batch of outcomes before they are scored (a judge's table fills here).
    """

    amounts: tuple[int, ...] = tuple(range(10, 101))
    currencies: tuple[str, ...] = ("dollars", "apples")
    responder_share: float = 0.0
    form: AnswerForm = "sentence"
    rewards: Mapping[str, UltimatumReward] = field(default_factory=dict, compare=False)
    schedule: RewardSchedule = field(default_factory=lambda: RewardSchedule(((0, "truth:norm"),)))
    illegal: float = -1.0
    parallel: int = 1
    rounds: int = 8
    seed: int = 0
    prefetch_rewards: Callable[[Sequence[UltimatumOutcome]], None] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.amounts or min(self.amounts) < 1:
            raise ValueError("the training amounts are positive and at least one")
        if not self.currencies:
            raise ValueError("give at least one currency")
        if not 0.0 <= self.responder_share <= 1.0:
            raise ValueError(f"responder_share is a share from 0 to 1, not {self.responder_share}")

    @property
    def batch_size(self) -> int:
        return self.parallel * self.rounds

    def draw_state(self, rng: np.random.Generator) -> UltimatumState:
        """A fresh stake, a role, and (as responder) an offer whose part for the student is uniform in 0..amount."""
        stake = Stake(
            int(self.amounts[int(rng.integers(len(self.amounts)))]),
            self.currencies[int(rng.integers(len(self.currencies)))],
        )
        if rng.random() >= self.responder_share:
            return UltimatumState(stake, "proposer")
        given = int(rng.integers(stake.amount + 1))
        return UltimatumState(stake, "responder", Split(stake.amount - given, given))

    # -- the Environment contract -------------------------------------------------------------

    def new_game(self, rng: np.random.Generator) -> UltimatumRound:
        return UltimatumRound(self.draw_state(rng))

    def prompt(self, game: UltimatumRound, rng: np.random.Generator) -> str:
        return student_prompt(game.state, self.form)

    def parse(self, answer: str, game: UltimatumRound) -> Split | Decision | None:
        return parse_student(answer, game.state, self.form)

    def step(
        self, games: Sequence[UltimatumRound], moves: Sequence[Split | Decision | None], rng: np.random.Generator
    ) -> list[UltimatumOutcome]:
        """Score each game's move in its state; every game then moves on to a fresh stake."""
        outcomes = []
        for game, move in zip(games, moves):
            outcomes.append(UltimatumOutcome(game.state, move))
            game.state = self.draw_state(rng)
        return outcomes

    def prefetch(self, outcomes: Sequence[UltimatumOutcome]) -> None:
        if self.prefetch_rewards is not None:
            self.prefetch_rewards([o for o in outcomes if o.legal])

    def reward_kinds(self) -> list[str]:
        return list(self.rewards)

    def score(self, kind: str, outcome: UltimatumOutcome) -> float:
        if kind not in self.rewards:
            raise KeyError(f"reward {kind!r} is not among this environment's ({', '.join(self.rewards) or 'none'})")
        return self.illegal if not outcome.legal else float(self.rewards[kind](outcome))

    def columns(self, outcomes: Sequence[UltimatumOutcome]) -> dict[str, float]:
        """The mean offered share of legal proposals, the acceptance rate of legal answers, and the illegal rate."""
        shares = [o.offered_share for o in outcomes if o.offered_share is not None]
        decisions = [o.decision for o in outcomes if o.decision is not None]
        return {
            "offered_share": float(np.mean(shares)) if shares else math.nan,
            "acceptance": float(np.mean([d == "accept" for d in decisions])) if decisions else math.nan,
            "proposals": sum(o.state.role == "proposer" for o in outcomes) / len(outcomes),
            "illegal": sum(not o.legal for o in outcomes) / len(outcomes),
        }

    def snapshot(self, game: UltimatumRound) -> str:
        state = game.state
        offer = None if state.offer is None else [state.offer.proposer, state.offer.responder]
        return json.dumps(
            {"amount": state.stake.amount, "currency": state.stake.currency, "role": state.role, "offer": offer}
        )

    def restore(self, text: str) -> UltimatumRound:
        data = json.loads(text)
        offer = None if data["offer"] is None else Split(*data["offer"])
        return UltimatumRound(UltimatumState(Stake(int(data["amount"]), data["currency"]), data["role"], offer))
