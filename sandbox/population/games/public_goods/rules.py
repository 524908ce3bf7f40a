"""The linear public goods game with an optional punishment stage (Fehr & Gächter 2000; Fischbacher & Gächter
2010): its payoffs, its matching into groups, the literature's scripted types, and the parsers of an LLM's answers.

A period: each member of a group of `size` gets an `endowment` and contributes 0 to `endowment` of it to a
public account; every member earns `endowment - own + mpcr * sum(contributions)` (with mpcr < 1 < size * mpcr, so
that contributing nothing is each one's dominant choice and contributing everything the group's best). With
punishment, each member then sees the others' contributions and may assign each of them 0 to `max_points` points:
a point costs its punisher `point_cost` and its target `point_effect` (1 and 3: Fehr & Gächter 2002's linear
technology, which later experiments, e.g. Herrmann, Thöni & Gächter 2008, kept).

The scripted types (`contribute`, `punish`), after the experiments' classification of subjects:

* `conditional cooperator`: Fischbacher & Gächter's (2010) identical imperfect conditional cooperator, as their own
  simulation has it (their do-file; Table 1 model 3, Table 2 model 3): it believes the others will contribute
  `belief`, `belief_start` at first and then `round(b0 + b1 x others' mean last period + b2 x its last belief)`,
  and contributes `round(c0 + c1 x schedule(belief) + c2 x belief)`, the schedule being the subjects' average
  conditional contribution `s0 + s1 x belief` (all 0 to the endowment); punishes no one;
* `free rider`: contributes nothing (the free riders' schedule) and punishes no one;
* `punisher`: a conditional cooperator that, where there is a punishment stage, does not lower its contribution
  and gives each groupmate who contributed less than the mean of that groupmate's others `ceil(rate x shortfall)`
  points, at most `max_points` (Fehr & Gächter 2000: the punished are those below the others' average, the more
  the further below).

Every type is deterred alike: when the points it received the last period, times their effect, exceeded what its
shortfall below the others' mean saved it (1 - mpcr a token), it contributes at least the others' mean of the last
period (a selfish best response to the punishment it met).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "CONDITIONAL",
    "FREE_RIDER",
    "PUNISHER",
    "TYPES",
    "Conditional",
    "contribute",
    "group_payoffs",
    "groups_of",
    "parse_contribution",
    "parse_points",
    "punish",
    "round_half_up",
]

FREE_RIDER, CONDITIONAL, PUNISHER = "free rider", "conditional cooperator", "punisher"
TYPES = (FREE_RIDER, CONDITIONAL, PUNISHER)


def groups_of(agents: int, size: int, rng: np.random.Generator | None) -> list[list[int]]:
    """The agents cut into groups of `size`: in order (agents 0..size-1, then the next), or, given `rng`, in a
    random order (stranger matching draws anew each period)."""
    order = np.arange(agents) if rng is None else rng.permutation(agents)
    return [sorted(int(a) for a in order[k : k + size]) for k in range(0, agents, size)]


def group_payoffs(
    contributions: Sequence[float], points: np.ndarray | None, endowment: float, mpcr: float, cost: float, effect: float
) -> tuple[np.ndarray, np.ndarray]:
    """A group's first-stage payoffs (`endowment - own + mpcr * total`) and its payoffs after punishment:
    `points[i, j]` is what member i assigned member j (None: no punishment stage), each point costing i `cost` and
    j `effect`.

    >>> first, final = group_payoffs([20, 20, 20, 0], None, 20, 0.4, 1, 3)
    >>> first.tolist(), final.tolist()
    ([24.0, 24.0, 24.0, 44.0], [24.0, 24.0, 24.0, 44.0])
    >>> _, final = group_payoffs([20, 20, 20, 0], np.array([[0, 0, 0, 2], [0] * 4, [0] * 4, [0] * 4]), 20, 0.4, 1, 3)
    >>> final.tolist()
    [22.0, 24.0, 24.0, 38.0]
    """
    own = np.asarray(contributions, dtype=float)
    first = endowment - own + mpcr * own.sum()
    if points is None:
        return first, first.copy()
    return first, first - cost * points.sum(axis=1) - effect * points.sum(axis=0)


@dataclass(frozen=True)
class Conditional:
    """A conditional cooperator's rules: the belief's start and update (constant, others' mean last period, last
    belief), the contribution (constant, schedule at the belief, belief), the schedule (constant, slope)."""

    belief_start: float
    belief: tuple[float, float, float]
    contribution: tuple[float, float, float]
    schedule: tuple[float, float]

    def next_belief(self, belief: float, others_last: float) -> float:
        b0, b1, b2 = self.belief
        return float(round_half_up(b0 + b1 * others_last + b2 * belief))

    def contribution_at(self, belief: float, endowment: int) -> int:
        (c0, c1, c2), (s0, s1) = self.contribution, self.schedule
        schedule = min(float(endowment), max(0.0, s0 + s1 * belief))
        return max(0, min(endowment, round_half_up(c0 + c1 * schedule + c2 * belief)))


def round_half_up(value: float) -> int:
    """Round as Stata does (the authors' simulation): halves up.

    >>> round_half_up(2.5), round_half_up(3.5), round_half_up(-0.5)
    (3, 4, 0)
    """
    return math.floor(value + 0.5)


def contribute(
    kind: str,
    endowment: int,
    *,
    belief: float,
    others_last: float | None,
    own_last: int | None,
    received_last: int,
    mpcr: float,
    effect: float,
    rules: Conditional,
    punishment: bool,
) -> int:
    """A scripted type's contribution this period: `belief` is its belief about the others' mean this period (a
    conditional cooperator's); `others_last`, `own_last` and `received_last` what its group did the last period
    (None in the first); `punishment`: whether the game has a punishment stage.

    >>> fg2010 = Conditional(9.8, (0.118, 0.415, 0.569), (-0.473, 0.242, 0.666), (0.956, 0.425))
    >>> contribute("conditional cooperator", 20, belief=9.8, others_last=None, own_last=None, received_last=0,
    ...            mpcr=0.4, effect=3, rules=fg2010, punishment=False)
    7
    >>> contribute("free rider", 20, belief=9.8, others_last=10.0, own_last=0, received_last=3, mpcr=0.4, effect=3,
    ...            rules=fg2010, punishment=True)  # 9 lost to punishment, 4 saved by the shortfall: deterred
    10
    """
    if kind not in TYPES:
        raise ValueError(f"unknown scripted type {kind!r} (the types: {', '.join(TYPES)})")
    own = 0 if kind == FREE_RIDER else rules.contribution_at(belief, endowment)
    if others_last is None or own_last is None:
        return own
    if kind == PUNISHER and punishment:
        own = max(own, own_last)  # it keeps its contribution, and punishes those below it
    shortfall = max(0.0, others_last - own_last)
    if received_last > 0 and received_last * effect > shortfall * (1 - mpcr):
        own = max(own, min(endowment, round_half_up(others_last)))  # deterred
    return own


def punish(kind: str, own: int, others: Sequence[int], *, rate: float, max_points: int) -> list[int]:
    """A scripted type's points for each of the others (in their order), seeing its own contribution and theirs: a
    punisher gives each whose contribution fell short of the mean of that one's others (the punisher included)
    `ceil(rate x shortfall)`, at most `max_points`; the other types give none.

    >>> punish("punisher", 15, [15, 5, 0], rate=0.25, max_points=10)
    [0, 2, 3]
    """
    if kind != PUNISHER:
        return [0] * len(others)
    group = [own, *others]
    points = []
    for k, c in enumerate(others):
        rest = [x for m, x in enumerate(group) if m != k + 1]
        shortfall = sum(rest) / len(rest) - c
        points.append(min(max_points, math.ceil(rate * shortfall - 1e-9)) if shortfall > 0 else 0)
    return points


def parse_contribution(answer: str, endowment: int) -> int | None:
    """The contribution an answer names after `Contribution:` (the last such line; a whole number of tokens from 0 to
    `endowment`), else None: an illegal move.

    >>> parse_contribution("I keep some.\\nContribution: 12", 20)
    12
    >>> parse_contribution("Contribution: 25", 20) is None, parse_contribution("all of it", 20) is None
    (True, True)
    """
    found = re.findall(r"contribution\s*[:=]\s*(\d+(?:\.\d+)?)", answer, flags=re.IGNORECASE)
    if not found:
        return None
    value = float(found[-1])
    if not value.is_integer() or not 0 <= value <= endowment:
        return None
    return int(value)


def parse_points(answer: str, targets: Sequence[str], max_points: int) -> list[int] | None:
    """The points an answer assigns each target (`NAME: points` a line, the name's case aside; a target not named gets
    0), else None (an illegal move): a number outside 0 to `max_points`, or no line naming a target and no `none`.

    >>> parse_points("B: 2\\nD: 0", ["B", "C", "D"], 10)
    [2, 0, 0]
    >>> parse_points("Member1: 3\\nmember2: 0", ["member1", "member2"], 10)
    [3, 0]
    >>> parse_points("Points: none", ["B", "C"], 10), parse_points("B: 11", ["B"], 10)
    ([0, 0], None)
    """
    points = [0] * len(targets)
    named = False
    for k, target in enumerate(targets):
        found = re.findall(rf"(?<!\w){re.escape(target)}\s*[:=]\s*(-?\d+)", answer, flags=re.IGNORECASE)
        if found:
            named = True
            value = int(found[-1])
            if not 0 <= value <= max_points:
                return None
            points[k] = value
    if not named and not re.search(r"\bnone\b|\bno one\b|\bnobody\b", answer, flags=re.IGNORECASE):
        return None
    return points
