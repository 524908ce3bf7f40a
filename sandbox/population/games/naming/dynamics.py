"""The minimal naming game and the binary agreement model, for whole populations at once (the theory's baseline).

The rule (Baronchelli et al. 2006; Xie et al. 2011 with committed agents): a speaker says a uniformly random name
of its inventory (inventing a new one when it has none); the hearer is a random neighbour. Success (the hearer
holds the name): both keep only that name. Failure: the hearer adds it. Committed agents never change. The binary
agreement model is the same rule with every agent starting with A or B and a committed minority holding A.

Inventories (`Inventories`) are each agent's name ids, agent after agent (sparse: the names held peak at about
0.33 N^1.5 in the minimal naming game, far fewer than N x the names). A name's id is the word's index for the
scenario's words (0..W-1) and `W + x` for the name agent `x` invented (an agent invents at most once: an inventory,
once it holds a name, never empties), so ids are bounded by W + N.

Two updates:

* `sequential` (`play_sequential`): one random speaker and a random neighbour at a time, the model as published.
  The randoms are drawn in one batch; the loop runs over Python lists of ids (about a microsecond an interaction).
* `pairs` (`play_pairs`): each round a set of disjoint speaker-hearer pairs, all updated at once with numpy on a
  dense bool matrix agents x the names held (the common fast approximation). On a complete graph a random
  permutation is cut in halves (N/2 pairs a round); on another network every agent proposes a random neighbour with a random priority, and a proposal is kept when its
  priority is the lowest of all proposals that touch either end.

Both count interactions exactly and report the first interaction (within the batch) after which every agent held
one and the same name.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

CHUNK = 1 << 16  # interactions whose randoms are drawn at once

__all__ = ["Batch", "Inventories", "disjoint_pairs", "hearers", "play_pairs", "play_sequential"]


@dataclass
class Inventories:
    """Who holds which name, agent after agent: `sizes` (each agent's count of names), `ids` (their name ids, in the
    order the agent learnt them), `fixed` (committed agents, who never change)."""

    sizes: np.ndarray
    ids: np.ndarray
    fixed: np.ndarray

    @property
    def agents(self) -> int:
        return len(self.sizes)

    def consensus(self) -> bool:
        """Every agent holds exactly one name, the same one."""
        return bool(len(self.ids) == self.agents and (self.sizes == 1).all() and (self.ids == self.ids[0]).all())

    def singles(self) -> np.ndarray:
        """The name of each agent that holds only one (in agent order)."""
        starts = np.cumsum(self.sizes) - self.sizes
        return self.ids[starts[self.sizes == 1]]

    def lists(self) -> list[list[int]]:
        """Each agent's inventory as a list of name ids."""
        ids, ends = self.ids.tolist(), np.cumsum(self.sizes).tolist()
        return [ids[a:b] for a, b in zip([0, *ends[:-1]], ends)]

    @classmethod
    def from_lists(cls, lists: list[list[int]], fixed: np.ndarray) -> Inventories:
        sizes = np.fromiter((len(x) for x in lists), dtype=np.int64, count=len(lists))
        ids = np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int64, count=int(sizes.sum()))
        return cls(sizes, ids, fixed)

    def dense(self, extra: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The inventories as a bool matrix agents x names, and each column's name id (the names held, and `extra`)."""
        names = np.unique(self.ids if extra is None else np.concatenate([self.ids, extra]))
        held = np.zeros((self.agents, len(names)), dtype=bool)
        held[np.repeat(np.arange(self.agents), self.sizes), np.searchsorted(names, self.ids)] = True
        return held, names

    @classmethod
    def from_dense(cls, held: np.ndarray, names: np.ndarray, fixed: np.ndarray) -> Inventories:
        rows, cols = np.nonzero(held)
        return cls(np.bincount(rows, minlength=held.shape[0]).astype(np.int64), names[cols].astype(np.int64), fixed)


def hearers(
    speakers: np.ndarray, agents: int, indptr: np.ndarray | None, indices: np.ndarray | None, rng: np.random.Generator
) -> np.ndarray:
    """A uniformly random neighbour of each speaker: any other agent on a complete graph (`indptr` None), else one
    of the CSR adjacency's (`indices[indptr[x]:indptr[x + 1]]`)."""
    if indptr is None or indices is None:
        return (speakers + rng.integers(1, agents, size=len(speakers))) % agents
    degree = indptr[speakers + 1] - indptr[speakers]
    if len(degree) and not degree.all():  # every network kind of a scenario gives each agent a neighbour
        raise ValueError(f"agent {int(speakers[np.argmin(degree)])} has no neighbour to speak to")
    return indices[indptr[speakers] + (rng.random(len(speakers)) * degree).astype(np.int64)]


@dataclass
class Batch:
    """What a batch of interactions did: the inventories after it, the interactions played, the first interaction
    (1-based, within the batch) after which the population agreed (None if it did not), the most names held at once
    (all inventories together)."""

    inventories: Inventories
    interactions: int
    consensus: int | None
    peak: int


def play_sequential(
    inventories: Inventories,
    interactions: int,
    rng: np.random.Generator,
    *,
    words: int,
    indptr: np.ndarray | None = None,
    indices: np.ndarray | None = None,
    stop: bool = True,
) -> Batch:
    """Play `interactions` interactions one at a time (a random speaker, a random neighbour); with `stop`, end at the
    first consensus."""
    n = inventories.agents
    inv = inventories.lists()
    fixed = inventories.fixed.tolist()
    single = [0] * (words + n)  # agents holding exactly that name
    for x in inv:
        if len(x) == 1:
            single[x[0]] += 1
    total = peak = sum(len(x) for x in inv)
    consensus = None
    for start in range(0, interactions, CHUNK):
        size = min(CHUNK, interactions - start)
        speakers = rng.integers(n, size=size)
        heard = hearers(speakers, n, indptr, indices, rng).tolist()
        picks = rng.random(size).tolist()
        for t, s in enumerate(speakers.tolist()):
            own = inv[s]
            if not own:
                name = words + s
                own.append(name)
                single[name] += 1
                total += 1
            else:
                name = own[0] if len(own) == 1 else own[int(picks[t] * len(own))]
            h = heard[t]
            other = inv[h]
            if name in other:
                if len(own) > 1 and not fixed[s]:
                    total -= len(own) - 1
                    inv[s] = [name]
                    single[name] += 1
                if len(other) > 1 and not fixed[h]:
                    total -= len(other) - 1
                    inv[h] = [name]
                    single[name] += 1
                if single[name] == n and consensus is None:
                    consensus = start + t + 1
                    if stop:
                        break
            elif not fixed[h]:
                if len(other) == 1:
                    single[other[0]] -= 1
                elif not other:
                    single[name] += 1
                other.append(name)
                total += 1
                peak = max(peak, total)
        if consensus is not None and stop:
            break
    played = interactions if consensus is None or not stop else consensus
    return Batch(Inventories.from_lists(inv, inventories.fixed), played, consensus, peak)


def disjoint_pairs(
    agents: int, indptr: np.ndarray | None, indices: np.ndarray | None, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """One round's disjoint speaker-hearer pairs: on a complete graph (`indptr` None) a random permutation's two
    halves; on a network every agent proposes a random neighbour and a proposal is kept where its random priority is
    the lowest at both its ends (about a third of the agents are paired on a ring, more on denser graphs)."""
    if indptr is None:
        order = rng.permutation(agents)
        half = agents // 2
        return order[:half], order[half : 2 * half]
    speakers = np.arange(agents)
    targets = hearers(speakers, agents, indptr, indices, rng)
    priority = rng.random(agents)
    lowest = priority.copy()
    np.minimum.at(lowest, targets, priority)
    keep = (lowest[speakers] == priority) & (lowest[targets] == priority)
    return speakers[keep], targets[keep]


def play_pairs(
    inventories: Inventories,
    interactions: int,
    rng: np.random.Generator,
    *,
    words: int,
    indptr: np.ndarray | None = None,
    indices: np.ndarray | None = None,
    stop: bool = True,
) -> Batch:
    """Play rounds of disjoint pairs, each round's pairs at once, until at least `interactions` were played; with
    `stop`, end after the first round that ends in consensus (its interactions counted)."""
    n = inventories.agents
    empty = (inventories.sizes == 0) & ~inventories.fixed
    held, names = inventories.dense(extra=words + np.flatnonzero(empty))  # with the names the empty will invent
    own_column = np.full(n, -1, dtype=np.int64)
    own_column[empty] = np.searchsorted(names, words + np.flatnonzero(empty))
    fixed = inventories.fixed
    played, consensus, peak = 0, None, int(held.sum())
    while played < interactions:
        speakers, targets = disjoint_pairs(n, indptr, indices, rng)
        picks = rng.random(len(speakers))
        rows = held[speakers]
        silent = ~rows.any(axis=1)
        rows[silent, own_column[speakers[silent]]] = True
        held[speakers[silent], own_column[speakers[silent]]] = True
        pair, columns = np.nonzero(rows)  # by pair, then column: each speaker's names
        count = np.bincount(pair, minlength=len(speakers))
        column = columns[np.cumsum(count) - count + (picks * count).astype(np.int64)]
        success = held[targets, column]
        for who, changed in ((speakers, success & ~fixed[speakers]), (targets, success & ~fixed[targets])):
            held[who[changed]] = False
            held[who[changed], column[changed]] = True
        learn = ~success & ~fixed[targets]
        held[targets[learn], column[learn]] = True
        played += len(speakers)
        total = int(held.sum())
        peak = max(peak, total)
        if consensus is None and total == n and (held.sum(axis=0) == n).any():
            consensus = played
            if stop:
                break
    return Batch(Inventories.from_dense(held, names, fixed), played, consensus, peak)
