"""Fixed strategies of iterated matrix games: the opponents a learning LLM plays against.

Each reads its opponent's last move and its own (None on a first move) and
draws from the injected generator when it randomises. `STRATEGIES` lets a
scenario name one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sandbox.base.registry import Registry
from sandbox.rules.matrix import MatrixStrategy, Move

STRATEGIES: Registry[MatrixStrategy] = Registry("strategy")


@dataclass(frozen=True)
class TitForTat:
    """Cooperates first, then copies the opponent's last move."""

    name: str = "tit_for_tat"

    def move(self, opponent_last: Move | None, own_last: Move | None, rng: np.random.Generator) -> Move:
        return opponent_last or "C"


@dataclass(frozen=True)
class Always:
    """Plays the same move every time (always cooperate, always defect)."""

    always: Move
    name: str

    def move(self, opponent_last: Move | None, own_last: Move | None, rng: np.random.Generator) -> Move:
        return self.always


@dataclass(frozen=True)
class Random:
    """Cooperates with probability `p_cooperate`, independently each time."""

    p_cooperate: float = 0.5
    name: str = "random"

    def move(self, opponent_last: Move | None, own_last: Move | None, rng: np.random.Generator) -> Move:
        return "C" if rng.random() < self.p_cooperate else "D"


for _strategy in (TitForTat(), Always("C", "always_cooperate"), Always("D", "always_defect"), Random()):
    STRATEGIES.add(_strategy.name, _strategy)
