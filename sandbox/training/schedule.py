"""Which reward is in force by episode: a schedule of named rewards, switched at given episodes.

A schedule only names rewards; the environment scores them. A method that
knows its rewards checks the names when a schedule is made
(`sandbox.rewards.intrinsic.Schedule` checks the moral rewards).

>>> RewardSchedule.parse("game,utilitarian@500").at(499), RewardSchedule.parse("game,utilitarian@500").at(500)
('game', 'utilitarian')
>>> RewardSchedule(((0, "truth:norm"),)).at(10_000)
'truth:norm'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RewardSchedule"]


@dataclass(frozen=True)
class RewardSchedule:
    """Rewards by episode: `[(0, "game"), (500, "utilitarian")]` is "game, then utilitarian" from episode 500."""

    phases: tuple[tuple[int, str], ...]

    def __post_init__(self) -> None:
        starts = [start for start, _ in self.phases]
        if not self.phases or starts[0] != 0 or starts != sorted(set(starts)):
            raise ValueError(f"a schedule starts at episode 0 and its switch episodes increase: {self.phases}")
        for _, name in self.phases:
            self.check(name)

    def check(self, name: str) -> None:
        """Raise for a reward name the schedule may not hold (here: none; a subclass may know its rewards)."""

    @classmethod
    def parse(cls, text: str | Sequence[tuple[int, str]]) -> RewardSchedule:
        """From `"game"`, `"game,utilitarian@500"`, or `[(0, "game"), (500, "utilitarian")]`."""
        if not isinstance(text, str):
            return cls(tuple((int(start), str(name)) for start, name in text))
        phases = []
        for index, part in enumerate(p.strip() for p in text.split(",")):
            name, _, start = part.partition("@")
            if index > 0 and not start:
                raise ValueError(f"schedule {text!r}: say when {name!r} starts, e.g. {name}@500")
            phases.append((int(start) if start else 0, name.strip()))
        return cls(tuple(phases))

    def at(self, episode: int) -> str:
        """The reward in force at `episode`."""
        return [name for start, name in self.phases if start <= episode][-1]
