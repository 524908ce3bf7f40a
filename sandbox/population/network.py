"""The network a population plays on, as the engine holds it: who meets whom (`Neighbours`, the adjacency in CSR
form, or a complete graph without an edge list), built from the scenario's `network:` (`network_of`), and the draws
of a neighbour that the revision rules make."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from societies.network import InteractionNetwork
    from societies.society_block import Network

__all__ = ["Neighbours", "edge_pairs", "match_edges", "neighbour_of", "network_of", "random_neighbour"]


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
        both = np.concatenate([edges, edges[:, ::-1]])
        order = np.lexsort((both[:, 1], both[:, 0]))
        both = both[order]
        indptr = np.zeros(size + 1, dtype=np.int64)
        np.add.at(indptr, both[:, 0] + 1, 1)
        return cls(size, edges, np.cumsum(indptr), both[:, 1].copy())

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


def network_of(agents: int, spec: Network, seed: int) -> tuple[InteractionNetwork, Neighbours]:
    """The scenario's network (`societies.network.Network`, seeded from the run's seed tree) and its neighbours;
    a complete network keeps no edge list."""
    from sandbox.base.seeding import Branch, generator
    from societies.network import build_network

    graph = build_network(agents, spec, generator(seed, Branch.NETWORK))
    edges = None if graph.is_complete else np.array(sorted(graph.to_networkx().edges()), dtype=np.int64)
    return graph, Neighbours.from_edges(agents, edges)


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


def edge_pairs(neighbours: Neighbours) -> list[tuple[int, int]]:
    """Every pair of neighbours once, (a, b) with the network's order (a complete network: a < b), as `match_edges`."""
    return [(a, b) for a, b in match_edges(neighbours).tolist()]
