"""Small statistics used by metrics and plots: means with t-based 95% confidence intervals."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from scipy import stats


def mean_ci(
    values: Iterable[float], confidence: float = 0.95, bounds: tuple[float, float] | None = None
) -> tuple[float, float, float, int]:
    """Mean and the two ends of its t confidence interval, and n; NaN ends when n < 2.

    `bounds` clips the interval to the range the variable can take (a share
    lies in [0, 1]; a t interval on few values can reach past it).

    >>> mean, low, high, n = mean_ci([0.4, 0.5, 0.6])
    >>> round(mean, 3), round(low, 3), round(high, 3), n
    (0.5, 0.252, 0.748, 3)
    >>> mean_ci([0.0, 0.0, 0.1], bounds=(0.0, 1.0))[1]
    0.0
    """
    data = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    n = int(data.size)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = float(data.mean())
    if n < 2:
        return mean, math.nan, math.nan, n
    half = float(stats.t.ppf((1 + confidence) / 2, n - 1) * data.std(ddof=1) / math.sqrt(n))
    low, high = mean - half, mean + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return mean, low, high, n
