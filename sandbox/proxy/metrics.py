"""Labeling metrics: a threshold fitted on the user's examples (accuracy's Wilson interval and the AUC of a graded
reward are `sandbox.base.stats.wilson_interval` and `sandbox.base.stats.auc`)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from sandbox.base.rounding import best

__all__ = ["fit_threshold"]


def fit_threshold(scores: Sequence[float | None], truths: Sequence[bool], default: float = 0.5) -> float | None:
    """The cut on `scores` that labels the most of `truths` right (a score at or above it is True).

    Cuts lie halfway between neighbouring scores, at 0 (everything True) or just above 1 (everything False); among
    equally good cuts, the one nearest `default`. Items with no score are left out. None when fewer than two
    items have a score or they hold one class only: no cut can be told from another then.

    >>> fit_threshold([0.1, 0.2, 0.6, 0.7], [False, False, True, True])
    0.4
    >>> fit_threshold([0.02, 0.04, 0.3], [False, True, True])
    0.03
    >>> fit_threshold([1.0, 1.0, 0.9], [False, False, True]) > 1.0  # a certain "yes" can still fall below the cut
    True
    >>> fit_threshold([0.9, 0.8], [True, True]) is None  # one class
    True
    >>> fit_threshold([None, 0.3], [True, False]) is None
    True
    """
    pairs = [(float(s), bool(t)) for s, t in zip(scores, truths) if s is not None and not math.isnan(s)]
    if len(pairs) < 2 or len({t for _, t in pairs}) < 2:
        return None
    points = sorted({0.0, 1.0, *(s for s, _ in pairs)})
    cuts = [0.0, *((low + high) / 2 for low, high in itertools.pairwise(points)), math.nextafter(1.0, 2.0)]

    def right(cut: float) -> int:
        return sum((s >= cut) == t for s, t in pairs)

    counts = [right(cut) for cut in cuts]
    top = max(counts)
    most = [cut for cut, count in zip(cuts, counts) if count == top]
    return most[best([-abs(cut - default) for cut in most])]  # the nearest the default; tied: the lowest
