"""Small statistics used by metrics, summaries and plots, each defined once: means with 95% confidence intervals
(Student's t, or the normal approximation some papers report), the Wilson interval of a proportion, the AUC of
a graded score, and numbers as JSON holds them.

>>> low, high = wilson_interval(45, 50)
>>> round(low, 3), round(high, 3)
(0.786, 0.957)
>>> auc([0.9, 0.8, 0.3, 0.2], [True, True, False, False])
1.0
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
from scipy import stats

__all__ = ["CiMethod", "auc", "json_number", "json_records", "mean_ci", "wilson_interval"]

CiMethod = Literal["t", "normal"]


def mean_ci(
    values: Iterable[float],
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
    method: CiMethod = "t",
) -> tuple[float, float, float, int]:
    """Mean and the two ends of its confidence interval, and n; NaN ends when n < 2.

    `method` "t" is Student's t interval (right for few values); "normal" is
    the normal approximation, z x sd / sqrt(n) with the sample sd (1.96 at 95%,
    as, for one, Tennant et al. report across five seeds): narrower than t,
    by a factor 1.96 / 4.30 at three values. `bounds` clips the interval to the
    range the variable can take (a share lies in [0, 1]; an interval on few
    values can reach past it).

    >>> mean, low, high, n = mean_ci([0.4, 0.5, 0.6])
    >>> round(mean, 3), round(low, 3), round(high, 3), n
    (0.5, 0.252, 0.748, 3)
    >>> mean_ci([0.0, 0.0, 0.1], bounds=(0.0, 1.0))[1]
    0.0
    >>> round(mean_ci([0.4, 0.5, 0.6], method="normal")[1], 3)  # 0.5 - 1.96 x 0.1 / sqrt(3)
    0.387
    """
    data = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    n = int(data.size)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = float(data.mean())
    if n < 2:
        return mean, math.nan, math.nan, n
    quantile = stats.t.ppf((1 + confidence) / 2, n - 1) if method == "t" else stats.norm.ppf((1 + confidence) / 2)
    half = float(quantile * data.std(ddof=1) / math.sqrt(n))
    low, high = mean - half, mean + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return mean, low, high, n


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


def json_number(value: object, digits: int | None = None) -> object:
    """A value as JSON can hold it: None for a missing number (NaN, None), a numpy scalar as its Python value,
    a number rounded to `digits` when given; anything else unchanged. The one helper every summary uses.

    >>> json_number(float("nan")), json_number(np.float32(0.5)), json_number(np.int64(3)), json_number(2 / 3, 6)
    (None, 0.5, 3, 0.666667)
    """
    if hasattr(value, "item") and isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if digits is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
        return round(float(value), digits)
    return value


def json_records(frame: object) -> list[dict[str, object]]:
    """A DataFrame's rows as JSON-safe dicts: NaN becomes None (json.dumps writes a bare NaN otherwise)."""
    return [
        {key: json_number(value) if isinstance(value, (float, np.floating)) else value for key, value in row.items()}
        for row in frame.to_dict("records")
    ]
