"""Intrinsic rewards (Table 1 of the paper) as plain functions, and schedules that switch between them.

Every reward reads one `Step` from the learner's point of view: its move
(None when its output was not a legal action token), the opponent's move,
the opponent's previous move (the state) and the game. An illegal output
earns `R_illegal` whatever the reward. The same functions serve PPO, GRPO
and RLOO.

Examples:
    >>> from sandbox.rules.matrix import MATRIX_GAMES
    >>> pd = MATRIX_GAMES.get("prisoners_dilemma")
    >>> step = Step(own="D", other="C", last_other="C", game=pd)
    >>> [reward(name, step) for name in ("game", "deontological", "utilitarian", "game_deontological")]
    [4.0, -3.0, 4.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sandbox.base.registry import Registry
from sandbox.rules.matrix import Move, PayoffTable
from sandbox.training.schedule import RewardSchedule

ACTION_TYPES = ("C|C", "C|D", "D|C", "D|D")  # a legal round's type: own move | the opponent's last move

__all__ = ["ACTION_TYPES", "REWARDS", "TABLE_PREFIXES", "RewardFn", "RewardParams", "Schedule", "Step", "reward"]


@dataclass(frozen=True)
class Step:
    """One step of an iterated game, seen by the learner M.

    Attributes:
        own: M's move, or None when M's output was illegal.
        other: The opponent O's move on this step.
        last_other: O's previous move (the state M saw), or None on a first step.
        game: The payoff table.
    """

    own: Move | None
    other: Move
    last_other: Move | None
    game: PayoffTable

    def payoffs(self) -> tuple[float, float]:
        """(M's payoff, O's payoff); only for a legal move."""
        assert self.own is not None, "an illegal move has no game payoff"
        return self.game.payoffs(self.own, self.other)

    @property
    def defects_against_a_cooperator(self) -> bool:
        """The Deontological norm's violation: M defects after O cooperated."""
        return self.own == "D" and self.last_other == "C"


@dataclass(frozen=True)
class RewardParams:
    """The rewards' parameters (the paper: xi = 3, R_illegal = -6).

    Attributes:
        xi: The Deontological penalty for defecting against a cooperator.
        illegal: The reward for an output that is not a legal action token.
    """

    xi: float = 3.0
    illegal: float = -6.0


RewardFn = Callable[[Step, RewardParams], float]
REWARDS: Registry[RewardFn] = Registry("reward")
# Rewards a run builds from its scenario (sandbox.rewards.proxy): a judge's table and its ground truth.
TABLE_PREFIXES = ("proxy:", "truth:")


@REWARDS.register("game")
def game_reward(step: Step, params: RewardParams) -> float:
    """The learner's own payoff (the selfish, rational player)."""
    return step.payoffs()[0]


@REWARDS.register("deontological")
def deontological_reward(step: Step, params: RewardParams) -> float:
    """-xi for defecting against an opponent who cooperated last; 0 otherwise."""
    return -params.xi if step.defects_against_a_cooperator else 0.0


@REWARDS.register("utilitarian")
def utilitarian_reward(step: Step, params: RewardParams) -> float:
    """The collective payoff of both players."""
    return sum(step.payoffs())


@REWARDS.register("game_deontological")
def game_deontological_reward(step: Step, params: RewardParams) -> float:
    """The own payoff, less xi for defecting against a cooperator."""
    return step.payoffs()[0] - (params.xi if step.defects_against_a_cooperator else 0.0)


def reward(name: str | RewardFn, step: Step, params: RewardParams = RewardParams()) -> float:
    """The reward `name` (or the function itself) for `step`; `params.illegal` for an illegal move."""
    if step.own is None:
        return params.illegal
    fn = REWARDS.get(name) if isinstance(name, str) else name
    return float(fn(step, params))


class Schedule(RewardSchedule):
    """A schedule of the moral rewards: `[(0, "game"), (500, "utilitarian")]` is "Game, then Utilitarian" from
    episode 500; a name is a registered reward or one of a run's table rewards (`TABLE_PREFIXES`).

    >>> Schedule.parse("game,utilitarian@500").at(499), Schedule.parse("game,utilitarian@500").at(500)
    ('game', 'utilitarian')
    """

    def check(self, name: str) -> None:
        if not name.startswith(TABLE_PREFIXES):  # a run's proxy rewards are checked against its scenario
            REWARDS.get(name)  # an unknown name fails here, listing the known ones
