"""Labeling metrics: accuracy with a 95% interval, the AUC of a graded reward, a threshold fitted on examples.

>>> low, high = wilson_interval(45, 50)
>>> round(low, 3), round(high, 3)
(0.786, 0.957)
>>> auc([0.9, 0.8, 0.3, 0.2], [True, True, False, False])
1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy import stats

__all__ = ["auc", "fit_threshold", "wilson_interval"]


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (sound at 0 and 1, where a normal interval is not); NaN for n = 0."""
    if n == 0:
        return math.nan, math.nan
    z = float(stats.norm.ppf((1 + confidence) / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def auc(scores: Sequence[float | None], truths: Sequence[bool]) -> float:
    """The area under the ROC curve of `scores` for `truths` (ties count half); NaN without both classes.

    Items with no score (unparsed answers) are left out.

    >>> auc([0.5, 0.5], [True, False])
    0.5
    """
    pairs = [(float(s), bool(t)) for s, t in zip(scores, truths) if s is not None and not math.isnan(s)]
    positives = [s for s, t in pairs if t]
    negatives = [s for s, t in pairs if not t]
    if not positives or not negatives:
        return math.nan
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


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
    cuts = [0.0, *((low + high) / 2 for low, high in zip(points, points[1:])), math.nextafter(1.0, 2.0)]

    def right(cut: float) -> int:
        return sum((s >= cut) == t for s, t in pairs)

    return max(cuts, key=lambda cut: (right(cut), -abs(cut - default)))
