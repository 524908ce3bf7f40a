"""The run's seed tree: every random draw is addressed by a path from the scenario's seed.

Addressing nodes by path (numpy's `spawn_key`) rather than by spawn order
means a resumed run draws exactly what an uninterrupted one would have, and
any episode can be replayed on its own.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np


class Branch(IntEnum):
    """The first level under a run: what the randomness is for."""

    POPULATION = 0
    NETWORK = 1
    EPOCH = 2
    EPISODE = 3
    POLICY = 4
    META = 5
    EVALUATION = 6
    DIALOGUE = 7
    STAKE = 8
    REPLAY = 9
    GUIDED = 10


def seed_node(root: int, *path: int) -> np.random.SeedSequence:
    """The node at `path` under `root`."""
    return np.random.SeedSequence(root, spawn_key=tuple(int(p) for p in path))


def call_seed(root: int, *path: int) -> int:
    """A model call's seed from the node at `path` under `root`: a non-negative int below 2**31, which every
    backend takes.

    >>> call_seed(0, 3, 1) == call_seed(0, 3, 1) != call_seed(0, 3, 2)
    True
    """
    return int(seed_node(root, *path).generate_state(1)[0] % 2**31)


def generator(root: int, *path: int) -> np.random.Generator:
    """A generator seeded from the node at `path` under `root`."""
    return np.random.default_rng(seed_node(root, *path))
