"""Ultimatum proposals as Kwon et al. drew them (`generate_data.py`): a $10 split with P1's share uniform, or a
"payoff" total with P2 at most half, in cents; `n` distinct ones, balanced between two labels when asked.

>>> rng = np.random.default_rng(0)
>>> offers = draw_offers(rng, 3, kind="percentage")
>>> [round(o.total, 2) for o in offers]
[10.0, 10.0, 10.0]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sandbox.base.errors import UsageError
from sandbox.rewards.objectives import Offer

__all__ = ["PAYOFF_TOTALS", "draw_offer", "draw_offers"]

# The totals of the paper's "payoff" proposals.
PAYOFF_TOTALS = (0.1, 1.0, 10.0, 100.0, 1000.0)


def draw_offer(rng: np.random.Generator, kind: str) -> Offer:
    """One proposal of the distribution `kind` ("percentage" or "payoff")."""
    if kind == "percentage":  # $10, P1's share uniform (generate_data.py)
        proposer = round(10.0 * float(rng.uniform()), 2)
        return Offer(proposer, round(10.0 - proposer, 2))
    total = float(rng.choice(PAYOFF_TOTALS))  # payoff: P2 at most half ("unfair proposals"), cents
    share = round(float(rng.uniform()), 2)
    low = min(share, 1 - share)
    return Offer(round(total * (1 - low), 2), round(total * low, 2))


def draw_offers(
    rng: np.random.Generator,
    n: int,
    *,
    kind: str,
    label: Callable[[Offer], bool] | None = None,
    balanced: bool = False,
    exclude: frozenset[Offer] = frozenset(),
) -> list[Offer]:
    """`n` distinct proposals (none in `exclude`); with `balanced`, half of them labelled True by `label`."""
    wanted = {True: n - n // 2, False: n // 2} if balanced else None
    offers: list[Offer] = []
    seen = set(exclude)
    for _ in range(200 * n + 1000):
        if len(offers) == n:
            return offers
        offer = draw_offer(rng, kind)
        if offer in seen:
            continue
        if wanted is not None:
            assert label is not None
            verdict = label(offer)
            if wanted[verdict] == 0:
                continue
            wanted[verdict] -= 1
        seen.add(offer)
        offers.append(offer)
    raise UsageError(
        f"could not draw {n} distinct{' balanced' if balanced else ''} {kind} proposals; "
        "lower proxy.test_items or change the objective"
    )
