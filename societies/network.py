"""Interaction networks built with networkx, and a matcher that pairs agents along edges.

A complete network is never materialised: for 10,000 users it would hold
fifty million edges, and a random matching on it is just a shuffled pairing.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from sandbox.base.registry import Registry
from societies.contracts import Pair
from societies.society_block import Matching, Network

NETWORKS: Registry = Registry("network")


class InteractionNetwork:
    """Who may meet whom. `graph` is None for the complete network."""

    def __init__(self, size: int, graph: nx.Graph | None) -> None:
        if graph is not None and graph.number_of_nodes() != size:
            raise ValueError(f"network has {graph.number_of_nodes()} nodes, population has {size}")
        self.size = size
        self.graph = graph
        self._edges = None if graph is None else np.array(sorted(graph.edges()), dtype=np.int64).reshape(-1, 2)
        if self._edges is not None and len(self._edges) == 0:
            raise ValueError("the interaction network has no edges")

    @classmethod
    def from_edges(cls, size: int, edges: np.ndarray) -> InteractionNetwork:
        """A network of `size` agents held as its (E, 2) edge array alone (a large population's: no networkx graph;
        `to_networkx` builds one on demand)."""
        network = cls(size, None)
        if len(edges) == 0:
            raise ValueError("the interaction network has no edges")
        network._edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        return network

    @property
    def is_complete(self) -> bool:
        return self._edges is None

    def edge_array(self) -> np.ndarray:
        """The (E, 2) edges, each once and sorted (ValueError for the complete network, which keeps none)."""
        if self._edges is None:
            raise ValueError("the complete network keeps no edge list")
        return self._edges

    def to_networkx(self) -> nx.Graph:
        """The network as a networkx graph (builds it on demand for the complete network and one held as edges)."""
        if self.graph is not None:
            return self.graph
        if self._edges is None:
            return nx.complete_graph(self.size)
        graph = nx.empty_graph(self.size)
        graph.add_edges_from(self._edges.tolist())
        return graph

    def random_edge(self, rng: np.random.Generator) -> tuple[int, int]:
        if self._edges is None:
            a, b = rng.choice(self.size, size=2, replace=False)
            return int(a), int(b)
        a, b = self._edges[rng.integers(len(self._edges))]
        return int(a), int(b)

    def maximal_matching(self, rng: np.random.Generator) -> list[tuple[int, int]]:
        """A random maximal matching: each agent in at most one pair, no edge left addable."""
        if self._edges is None:
            order = rng.permutation(self.size)
            return [(int(order[i]), int(order[i + 1])) for i in range(0, self.size - 1, 2)]
        used = np.zeros(self.size, dtype=bool)
        pairs = []
        for index in rng.permutation(len(self._edges)):
            a, b = self._edges[index]
            if not used[a] and not used[b]:
                used[a] = used[b] = True
                pairs.append((int(a), int(b)))
        return pairs


@NETWORKS.register("complete")
def _complete(size: int, spec: Network, rng: np.random.Generator) -> nx.Graph | None:
    return None


@NETWORKS.register("ring")
def _ring(size: int, spec: Network, rng: np.random.Generator) -> nx.Graph:
    return nx.cycle_graph(size)


@NETWORKS.register("small_world")
def _small_world(size: int, spec: Network, rng: np.random.Generator) -> nx.Graph:
    if spec.k >= size:
        raise ValueError(f"small_world needs k ({spec.k}) smaller than the population ({size})")
    return nx.connected_watts_strogatz_graph(size, spec.k, spec.p, seed=int(rng.integers(2**31)))


@NETWORKS.register("ring_lattice")
def _ring_lattice(size: int, spec: Network, rng: np.random.Generator) -> nx.Graph:
    if spec.k >= size:
        raise ValueError(f"ring_lattice needs k ({spec.k}) smaller than the population ({size})")
    return nx.watts_strogatz_graph(size, spec.k, 0.0)  # no rewiring: each node and its k nearest on the ring


@NETWORKS.register("grid")
def _grid(size: int, spec: Network, rng: np.random.Generator) -> nx.Graph:
    side = int(round(size**0.5))
    if side * side != size or side < 3:
        raise ValueError(f"grid needs a square population of at least 9 agents (side x side), not {size}")
    lattice = nx.grid_2d_graph(side, side, periodic=spec.periodic)
    if spec.neighbourhood == "moore":
        for r, c in list(lattice.nodes):
            for dr, dc in ((1, 1), (1, -1)):
                r2, c2 = r + dr, c + dc
                if spec.periodic:
                    r2, c2 = r2 % side, c2 % side
                if 0 <= r2 < side and 0 <= c2 < side:
                    lattice.add_edge((r, c), (r2, c2))
    return nx.convert_node_labels_to_integers(lattice, ordering="sorted")  # agent r*side + c at row r, column c


@NETWORKS.register("barabasi_albert")
def _barabasi_albert(size: int, spec: Network, rng: np.random.Generator) -> nx.Graph:
    if spec.m >= size:
        raise ValueError(f"barabasi_albert needs m ({spec.m}) smaller than the population ({size})")
    return nx.barabasi_albert_graph(size, spec.m, seed=int(rng.integers(2**31)))


@NETWORKS.register("edges")
def _edge_list(size: int, spec: Network, rng: np.random.Generator) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(range(size))
    graph.add_edges_from(spec.edges or [])
    return graph


def build_network(size: int, spec: Network, rng: np.random.Generator) -> InteractionNetwork:
    """Build the interaction network named by `spec` for `size` agents."""
    return InteractionNetwork(size, NETWORKS.get(spec.kind)(size, spec, rng))


def match(network: InteractionNetwork, matching: Matching, count: int | None, rng: np.random.Generator) -> list[Pair]:
    """Draw the pairs of one epoch along the network's edges.

    Args:
        network: Who may meet whom.
        matching: `maximal` plays rounds of random maximal matchings until
            `count` pairs are drawn; `random` draws each pair as a random edge.
        count: Pairs wanted; None means one maximal matching.
        rng: The epoch's generator; the order of each pair (who moves first)
            is drawn from it too.
    """
    if matching.kind == "random":
        edges = [network.random_edge(rng) for _ in range(count or network.size // 2)]
    else:
        edges = []
        while True:
            round_ = network.maximal_matching(rng)
            if count is None:
                edges = round_
                break
            edges.extend(round_)
            if len(edges) >= count:
                edges = edges[:count]
                break
    flips = rng.random(len(edges)) < 0.5
    return [Pair(b, a) if flip else Pair(a, b) for (a, b), flip in zip(edges, flips)]
