"""DealOrNoDeal (Lewis et al. 2017, as Kwon et al. §4.3 used it): two agents split books, hats and balls.

Each agent sees the item counts and its own private values: counts in
{1..4} per item type, values in {0..10}, drawn so that each agent's whole
set is worth exactly 10 points (Kwon's `negotiation/` contexts). The agents
speak in turn in dialogue acts (He et al. 2018's coarse acts, which Kwon's
prompts print): `propose` or `insist` an allocation (the items the speaker
takes; the other gets the rest), `agree` to the other's last proposal, or
`disagree`. An agreement scores each agent u·o for the items o it gets; a
disagreement, or no agreement within the turn limit, scores 0 for both.

The fixed partner (Bob) is rule-based, where Kwon's was Lewis et al.'s
frozen RL model: it accepts a proposal that leaves it at least its current
target, and otherwise proposes the split that reaches its target with the
fewest items; its target starts at 8 of its 10 points and drops by one each
time it speaks, to 5.

>>> context = Context(counts=(1, 2, 3), alice=(4, 3, 0), bob=(1, 0, 3))
>>> episode = Negotiation(context, [Utterance("Alice", "propose", (1, 2, 0)), Utterance("Bob", "agree")])
>>> episode.agreed, episode.points()
(True, (10, 9))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Literal

import numpy as np

__all__ = ["ITEMS", "Context", "FixedPartner", "Negotiation", "Utterance", "allocations", "draw_context", "play"]

ITEMS = ("book", "hat", "ball")
Speaker = Literal["Alice", "Bob"]
Act = Literal["propose", "insist", "agree", "disagree"]
Allocation = tuple[int, int, int]
TOTAL_POINTS = 10


@dataclass(frozen=True)
class Context:
    """The item counts and each agent's private value per item."""

    counts: Allocation
    alice: Allocation
    bob: Allocation

    def values(self, speaker: Speaker) -> Allocation:
        return self.alice if speaker == "Alice" else self.bob

    def worth(self, speaker: Speaker, taken: Sequence[int]) -> int:
        """What the items `taken` are worth to `speaker`."""
        return int(sum(v * n for v, n in zip(self.values(speaker), taken)))

    def rest(self, taken: Sequence[int]) -> Allocation:
        """The items left to the other agent."""
        return tuple(c - n for c, n in zip(self.counts, taken))  # type: ignore[return-value]


def _value_vectors(counts: Allocation) -> list[Allocation]:
    return [v for v in product(range(11), repeat=3) if sum(c * x for c, x in zip(counts, v)) == TOTAL_POINTS]  # type: ignore[misc]


def draw_context(rng: np.random.Generator) -> Context:
    """Counts in {1..4}^3 (drawn again where no values can make 10, e.g. 3, 3, 3), then each agent's values
    in {0..10}^3, uniformly among the vectors worth exactly 10 points."""
    while True:
        counts: Allocation = tuple(int(c) for c in rng.integers(1, 5, size=3))  # type: ignore[assignment]
        options = _value_vectors(counts)
        if options:
            return Context(counts, options[int(rng.integers(len(options)))], options[int(rng.integers(len(options)))])


def allocations(counts: Allocation) -> Iterator[Allocation]:
    """Every share one agent may take."""
    yield from product(*(range(c + 1) for c in counts))


@dataclass(frozen=True)
class Utterance:
    """One dialogue act; `allocation` is what the speaker takes (propose, insist)."""

    speaker: Speaker
    act: Act
    allocation: Allocation | None = None

    def text(self) -> str:
        if self.allocation is None:
            return self.act
        return f"{self.act}: " + " ".join(f"{item}={n}" for item, n in zip(ITEMS, self.allocation))


@dataclass
class Negotiation:
    """A dialogue and its outcome."""

    context: Context
    utterances: list[Utterance] = field(default_factory=list)

    @property
    def agreed(self) -> bool:
        return bool(self.utterances) and self.utterances[-1].act == "agree"

    def last_proposal(self, speaker: Speaker) -> Allocation | None:
        """`speaker`'s latest allocation (propose or insist)."""
        for u in reversed(self.utterances):
            if u.speaker == speaker and u.allocation is not None:
                return u.allocation
        return None

    def alice_share(self) -> Allocation | None:
        """What Alice gets under the agreement; None without one."""
        if not self.agreed:
            return None
        agreer = self.utterances[-1].speaker
        other: Speaker = "Bob" if agreer == "Alice" else "Alice"
        taken = self.last_proposal(other)
        assert taken is not None, "an agreement follows a proposal"
        return taken if other == "Alice" else self.context.rest(taken)

    def points(self) -> tuple[int, int]:
        """(Alice's points, Bob's points): u·o on agreement, 0 and 0 otherwise."""
        share = self.alice_share()
        if share is None:
            return 0, 0
        return self.context.worth("Alice", share), self.context.worth("Bob", self.context.rest(share))

    def by(self, speaker: Speaker) -> list[Utterance]:
        return [u for u in self.utterances if u.speaker == speaker]


@dataclass(frozen=True)
class FixedPartner:
    """Bob: accept what leaves him his target, else propose the fewest items that reach it (target 8 -> 5)."""

    start: int = 8
    floor: int = 5

    def target(self, episode: Negotiation) -> int:
        return max(self.floor, self.start - len(episode.by("Bob")))

    def respond(self, episode: Negotiation) -> Utterance:
        context, target = episode.context, self.target(episode)
        offered = episode.last_proposal("Alice")
        last = episode.utterances[-1] if episode.utterances else None
        if last is not None and last.speaker == "Alice" and last.allocation is not None:
            assert offered is not None
            if context.worth("Bob", context.rest(offered)) >= target:
                return Utterance("Bob", "agree")
        fits = [a for a in allocations(context.counts) if context.worth("Bob", a) >= target]
        best = min(fits, key=lambda a: (sum(a), -context.worth("Bob", a), a))
        previous = episode.last_proposal("Bob")
        return Utterance("Bob", "insist" if best == previous else "propose", best)


AlicePolicy = Callable[[Negotiation], Utterance]


def play(
    context: Context, alice: AlicePolicy, partner: FixedPartner, *, alice_first: bool, turn_limit: int = 10
) -> Negotiation:
    """A negotiation: turns alternate until an agreement, a disagreement or `turn_limit` utterances in all.

    Only a proposal can be agreed to: an `agree` with nothing on the table counts as a disagreement.
    """
    episode = Negotiation(context)
    speaker: Speaker = "Alice" if alice_first else "Bob"
    while len(episode.utterances) < turn_limit:
        utterance = alice(episode) if speaker == "Alice" else partner.respond(episode)
        other: Speaker = "Bob" if speaker == "Alice" else "Alice"
        if utterance.act == "agree" and episode.last_proposal(other) is None:
            utterance = Utterance(speaker, "disagree")
        episode.utterances.append(utterance)
        if utterance.act in ("agree", "disagree"):
            break
        speaker = other
    return episode
