"""An iterated matrix game between a learner and an opponent, one round at a time.

The state a player sees is the last `history_length` rounds (its own move
and the opponent's). A game starts from a random state (the paper: every
episode begins with one), in which an unconditional opponent played its move. The learner's illegal output is a round it still
learns from, but the opponent never sees it: the opponent's view keeps the
learner's last legal move, as in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sandbox.rewards.intrinsic import Step
from sandbox.rules.matrix import MOVES, MatrixStrategy, Move, PayoffTable


@dataclass
class IteratedGame:
    """One learner against one fixed-strategy opponent.

    Attributes:
        game: The payoff table (the learner is the row player).
        opponent: The opponent's strategy.
        history_length: Rounds in the state.
        history: (learner move, opponent move) per round, oldest first; the learner's
            move is the last legal one it played.
    """

    game: PayoffTable
    opponent: MatrixStrategy | None  # None: the opponent's moves are given to `play_against` (an LLM)
    history_length: int = 1
    history: list[tuple[Move, Move]] = field(default_factory=list)

    def reset(self, rng: np.random.Generator) -> None:
        """Start from a random state of `history_length` rounds; an unconditional opponent's moves in it are its
        own move (the authors' code starts always-cooperate at C and always-defect at D)."""
        self.history = [(MOVES[int(rng.integers(2))], MOVES[int(rng.integers(2))]) for _ in range(self.history_length)]
        always = getattr(self.opponent, "always", None)
        if always is not None:
            self.history = [(own, always) for own, _ in self.history]

    def state(self) -> list[tuple[Move, Move]]:
        """The last `history_length` rounds, as the learner sees them."""
        return self.history[-self.history_length :]

    def play(self, learner: Move | None, rng: np.random.Generator) -> Step:
        """One round: the opponent moves from the state, the learner's move (None = illegal) is scored."""
        assert self.history, "reset() the game first: a game starts from a state"
        assert self.opponent is not None, "a game without a strategy is played with play_against"
        learner_last, opponent_last = self.history[-1]
        return self.play_against(learner, self.opponent.move(learner_last, opponent_last, rng))

    def play_against(self, learner: Move | None, opponent: Move | None) -> Step:
        """One round with both moves given; None is an illegal output, replaced by that player's last legal move."""
        learner_last, opponent_last = self.history[-1]
        played = opponent if opponent is not None else opponent_last
        step = Step(own=learner, other=played, last_other=opponent_last, game=self.game)
        self.history.append((learner if learner is not None else learner_last, played))
        return step
