"""The network a population plays on, as the engine holds it: who meets whom (`Neighbours`, the adjacency in CSR
form, or a complete graph without an edge list), built from the scenario's `network:` (`network_of`), and the draws
of a neighbour that the revision rules make."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from societies.network import InteractionNetwork
    from societies.society_block import Network

__all__ = [
    "ARRAYS_FROM",
    "Neighbours",
    "edge_at",
    "edge_count",
    "edge_pairs",
    "match_edges",
    "neighbour_of",
    "network_of",
    "random_neighbour",
]


@dataclass(frozen=True)
class Neighbours:
    """Who plays whom: the graph's edges and its adjacency in CSR form (`indices[indptr[x]:indptr[x+1]]`), or
    `complete` (every pair meets; no edge list is built)."""

    size: int
    edges: np.ndarray | None  # (E, 2) int64, or None when complete
    indptr: np.ndarray | None
    indices: np.ndarray | None

    @classmethod
    def from_edges(cls, size: int, edges: np.ndarray | None) -> Neighbours:
        if edges is None:
            return cls(size, None, None, None)
        from sandbox.population.network_arrays import csr_of

        indptr, indices = csr_of(size, edges)
        return cls(size, edges, indptr, indices)

    @property
    def complete(self) -> bool:
        return self.edges is None

    def csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(edges, indptr, indices) of a network that is not complete (ValueError for a complete one, which keeps
        none)."""
        if self.edges is None or self.indptr is None or self.indices is None:
            raise ValueError("a complete network keeps no edge list")
        return self.edges, self.indptr, self.indices

    def degree(self) -> np.ndarray:
        if self.complete:
            return np.full(self.size, self.size - 1, dtype=np.int64)
        return np.diff(self.csr()[1])


ARRAYS_FROM = 100_000
"""From this many agents on, a small-world or scale-free network is drawn by the vectorised builders of
`sandbox.population.network_arrays` (the same models; seconds and a few hundred MB at a million agents, where
networkx takes tens of seconds and gigabytes); below it, by networkx as before, so that smaller runs keep their
graphs. Rings and ring lattices are the same graph either way and always come from the arrays."""


def network_of(agents: int, spec: Network, seed: int) -> tuple[InteractionNetwork, Neighbours]:
    """The scenario's network (`societies.network.InteractionNetwork`, seeded from the run's seed tree) and its
    neighbours; a complete network keeps no edge list. Built once for a run's (agents, network, seed): the budget
    check, the dry run's estimate and the game ask for the same one."""
    return _network(agents, spec.model_dump_json(), seed)


@lru_cache(maxsize=2)
def _network(agents: int, spec_json: str, seed: int) -> tuple[InteractionNetwork, Neighbours]:
    from sandbox.base.seeding import Branch, generator
    from societies.network import InteractionNetwork, build_network
    from societies.society_block import Network

    spec = Network.model_validate_json(spec_json)
    rng = generator(seed, Branch.NETWORK)
    edges = _edge_array(agents, spec, rng)
    if edges is not None:
        return InteractionNetwork.from_edges(agents, edges), Neighbours.from_edges(agents, edges)
    graph = build_network(agents, spec, rng)
    edges = None if graph.is_complete else graph.edge_array()
    return graph, Neighbours.from_edges(agents, edges)


def _edge_array(agents: int, spec: Network, rng: np.random.Generator) -> np.ndarray | None:
    """The network's edges from `network_arrays` where it draws this network (see ARRAYS_FROM), else None."""
    from sandbox.population import network_arrays as arrays

    if spec.kind == "ring":
        return arrays.ring_edges(agents)
    if spec.kind == "ring_lattice":
        return arrays.ring_lattice_edges(agents, spec.k)
    if agents < ARRAYS_FROM:
        return None
    if spec.kind == "small_world":  # drawn from the same node's first integer as networkx's seed
        return arrays.small_world_edges(agents, spec.k, spec.p, np.random.default_rng(int(rng.integers(2**31))))
    if spec.kind == "barabasi_albert":
        return arrays.barabasi_albert_edges(agents, spec.m, np.random.default_rng(int(rng.integers(2**31))))
    return None


def random_neighbour(neighbours: Neighbours, rng: np.random.Generator) -> np.ndarray:
    """For each agent, one neighbour drawn uniformly (an isolated agent draws itself)."""
    n = neighbours.size
    if neighbours.complete:
        return (np.arange(n) + rng.integers(1, n, size=n)) % n
    _, indptr, indices = neighbours.csr()
    degree = neighbours.degree()
    pick = np.floor(rng.random(n) * np.maximum(degree, 1)).astype(np.int64)
    at = np.minimum(indptr[:-1] + pick, len(indices) - 1)
    return np.where(degree > 0, indices[at], np.arange(n))


def neighbour_of(agent: int, neighbours: Neighbours, rng: np.random.Generator) -> int:
    """One neighbour of `agent`, drawn uniformly (one draw; `random_neighbour` draws one for every agent)."""
    if neighbours.complete:
        return int((agent + rng.integers(1, neighbours.size)) % neighbours.size)
    _, indptr, indices = neighbours.csr()
    around = indices[indptr[agent] : indptr[agent + 1]]
    return int(around[rng.integers(len(around))])


def match_edges(neighbours: Neighbours) -> np.ndarray:
    """The pairs that play a match, sorted by their first agent: the graph's edges, or every pair when complete."""
    if neighbours.complete:
        return np.array(np.triu_indices(neighbours.size, 1), dtype=np.int64).T
    return neighbours.csr()[0]


def edge_count(neighbours: Neighbours) -> int:
    """How many pairs `match_edges` holds (a complete network's without building them)."""
    n = neighbours.size
    return n * (n - 1) // 2 if neighbours.complete else len(neighbours.csr()[0])


def edge_at(neighbours: Neighbours, k: int) -> tuple[int, int]:
    """Pair `k` of `match_edges(neighbours)`, without building them where the network is complete (pair k of the
    upper triangle, row by row: a million agents' 5e11 pairs).

    >>> complete = Neighbours.from_edges(5, None)
    >>> [edge_at(complete, k) for k in range(10)] == [tuple(e) for e in match_edges(complete).tolist()]
    True
    """
    if not neighbours.complete:
        a, b = neighbours.csr()[0][k].tolist()
        return a, b
    n = neighbours.size
    if not 0 <= k < n * (n - 1) // 2:
        raise IndexError(f"pair {k} of a complete network of {n} agents")
    # row a starts at a * (2n - a - 1) / 2: the largest such start at most k, from the root and then corrected
    a = int((2 * n - 1 - math.sqrt((2 * n - 1) ** 2 - 8 * k)) // 2)
    while a > 0 and a * (2 * n - a - 1) // 2 > k:
        a -= 1
    while (a + 1) * (2 * n - a - 2) // 2 <= k:
        a += 1
    return a, a + 1 + k - a * (2 * n - a - 1) // 2


def edge_pairs(neighbours: Neighbours) -> list[tuple[int, int]]:
    """Every pair of neighbours once, (a, b) with the network's order (a complete network: a < b), as `match_edges`."""
    return [(a, b) for a, b in match_edges(neighbours).tolist()]
