"""Populations built from proportions: exact counts, seeded assignment."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from sandbox.base.rounding import apportion
from societies.contracts import UserProfile
from societies.manners import resolve_manner
from societies.norms import resolve_norm
from societies.society_block import Society

T = TypeVar("T")


def largest_remainder_counts(proportions: Sequence[float], total: int) -> list[int]:
    """Split `total` into integer counts closest to `proportions` (Hamilton's method).

    Each share first gets the floor of its quota; the seats left go to the
    largest remainders, ties to the earlier share. The counts add up to `total`.

    >>> largest_remainder_counts([0.5, 0.3, 0.2], 7)
    [4, 2, 1]
    >>> largest_remainder_counts([1 / 3, 1 / 3, 1 / 3], 10)
    [4, 3, 3]
    """
    if total < 0:
        raise ValueError("total must be non-negative")
    weight = math.fsum(proportions)
    if weight <= 0:
        raise ValueError("proportions must have a positive sum")
    return apportion([p / weight * total for p in proportions], total)


def _assign(items: Sequence[T], counts: Sequence[int], rng: np.random.Generator) -> list[T]:
    labels = [item for item, count in zip(items, counts) for _ in range(count)]
    order = rng.permutation(len(labels))
    return [labels[i] for i in order]


def build_population(society: Society, rng: np.random.Generator) -> list[UserProfile]:
    """Build the users of `society`, norms and manners assigned independently at random.

    Counts per norm and per manner are exact (largest remainder); which user
    gets which is drawn from `rng`.
    """
    norms = [resolve_norm(share.norm, share.text) for share in society.norms]
    manners = [resolve_manner(share.manner, share.text) for share in society.manners]
    norm_of = _assign(norms, largest_remainder_counts([s.proportion for s in society.norms], society.size), rng)
    manner_of = _assign(manners, largest_remainder_counts([s.proportion for s in society.manners], society.size), rng)
    return [UserProfile(agent_id=i, norm=norm_of[i], manner=manner_of[i]) for i in range(society.size)]
