"""Small statistics used by metrics and plots: means with 95% confidence intervals (Student's t, or the normal
approximation some papers report)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal

import numpy as np
from scipy import stats


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


def json_number(value: object) -> float | None:
    """A number as JSON can hold it: None for a missing value (NaN, None), a plain float otherwise.

    >>> json_number(float("nan")), json_number(np.float32(0.5))
    (None, 0.5)
    """
    if value is None or (isinstance(value, (float, np.floating)) and math.isnan(value)):
        return None
    return float(value)  # type: ignore[arg-type]


def json_records(frame: object) -> list[dict[str, object]]:
    """A DataFrame's rows as JSON-safe dicts: NaN becomes None (json.dumps writes a bare NaN otherwise)."""
    return [{key: json_number(value) if isinstance(value, (float, np.floating)) else value
             for key, value in row.items()} for row in frame.to_dict("records")]  # type: ignore[attr-defined]
