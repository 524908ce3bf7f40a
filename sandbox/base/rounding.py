"""What the last digits of a float may do on another machine, and choices that they cannot flip.

A float's last digits follow the machine, not the run: sentence embeddings are float32 (about seven significant
digits, and another CPU's kernels move the seventh: measured 1e-7 between torch's AVX-512 and default kernels),
numpy picks other SIMD paths for `exp` and `log`, and BLAS sums in another order with other thread counts. So two
floats are `close` when they agree to five significant digits (`RELATIVE`), or, near zero, to the sixth decimal
(`ABSOLUTE`, the precision at which measured tables are written).

A choice made from floats (the most central text of a cluster, the best score) treats scores `close` to the best
as a tie and gives the tie to a key the caller names (the text most agents hold, then the first seen), never to
the last digit: scores equal in exact arithmetic (the two members of a two-text cluster are each as central as the
other) come out unequal in their last digits, and which one wins would otherwise follow the machine.

>>> best([0.5, 0.5000000000001, 0.2])  # equal but for rounding: the first
0
>>> best([0.5, 0.5000000000001, 0.2], key=lambda i: -i)  # equal but for rounding: the caller's key decides
1
>>> best([0.5, 0.6, 0.2])
1
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["ABSOLUTE", "RELATIVE", "SPARE", "apportion", "below", "best", "close"]

RELATIVE = 1e-5
ABSOLUTE = 1e-6
SPARE = 1 + 1e-9  # the decimals 0.090001 and 0.09 are 1.0000000000287557e-06 apart in binary: one last digit is close


def close(a: float, b: float) -> bool:
    """Whether two finite floats are equal but for their last digits: |a - b| <= max(RELATIVE * max(|a|, |b|),
    ABSOLUTE), with a billionth of that to spare for the binary form of a decimal (`SPARE`), so that two values
    written at six decimals one last digit apart are always close.

    >>> close(0.357913, 0.357914), close(0.090001, 0.09), close(0.0, 1e-06), close(0.09, 0.090002), close(0.35, 0.36)
    (True, True, True, False, False)
    """
    return abs(a - b) <= max(RELATIVE * max(abs(a), abs(b)), ABSOLUTE) * SPARE


def best(scores: Sequence[float] | np.ndarray, key: Callable[[int], Any] = lambda i: i) -> int:
    """The index of the highest score; among the scores `close` to it, the one whose `key(index)` is the smallest
    (default: the first)."""
    if not len(scores):
        raise ValueError("no scores to choose from")
    top = max(float(s) for s in scores)
    return min((i for i, s in enumerate(scores) if close(float(s), top)), key=key)


def below(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """Elementwise: whether `a` is below `b` by more than the last digits (not `close`).

    >>> below(np.array([1.0, 2.0, 2.0 - 1e-12]), 2.0).tolist()
    [True, False, False]
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    gap = np.maximum(RELATIVE * np.maximum(np.abs(a), np.abs(b)), ABSOLUTE) * SPARE
    return (a < b) & (b - a > gap)


def apportion(quotas: Sequence[float], total: int) -> list[int]:
    """Whole counts for `quotas` that sum to `total` (largest remainders, Hamilton's method): each quota's floor,
    then one more for each of the largest remainders; remainders equal but for their last digits tie (`best`), and a
    tie goes to the earlier quota.

    >>> apportion([3.5, 2.1, 1.4], 7)
    [4, 2, 1]
    >>> apportion([0.1 * 30, 0.3 * 30, 0.6 * 30], 30)  # 3.0000000000000004: its remainder is no larger than 0
    [3, 9, 18]
    >>> apportion([10 / 3, 10 / 3, 10 / 3], 10)
    [4, 3, 3]
    """
    counts = [math.floor(q) for q in quotas]
    left = list(range(len(quotas)))
    for _ in range(total - sum(counts)):
        i = left.pop(best([quotas[j] - counts[j] for j in left]))
        counts[i] += 1
    return counts
