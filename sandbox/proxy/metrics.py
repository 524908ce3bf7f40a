"""Labeling metrics: accuracy with a 95% interval, and the AUC of a graded reward.

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

__all__ = ["auc", "wilson_interval"]


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
