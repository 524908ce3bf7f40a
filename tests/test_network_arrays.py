"""The numpy network builders (`sandbox.population.network_arrays`) against networkx's generators: the same edges
where the model is deterministic, the same counts and statistics where it is random."""

from __future__ import annotations

from collections import Counter

import networkx as nx
import numpy as np
import pytest

from sandbox.population.network_arrays import (
    barabasi_albert_edges,
    csr_of,
    ring_edges,
    ring_lattice_edges,
    small_world_edges,
)


def _nx_edges(graph: nx.Graph) -> list[list[int]]:
    return sorted([min(a, b), max(a, b)] for a, b in graph.edges())


def _check(edges: np.ndarray, size: int) -> None:
    """The builders' contract: (E, 2) int64, a < b, rows strictly increasing (sorted, no duplicates)."""
    assert edges.dtype == np.int64 and edges.ndim == 2 and edges.shape[1] == 2
    assert (edges[:, 0] < edges[:, 1]).all() and (edges >= 0).all() and (edges < size).all()
    keys = edges[:, 0] * size + edges[:, 1]
    assert (np.diff(keys) > 0).all()


@pytest.mark.parametrize("size", [2, 3, 4, 5, 10, 101])
def test_ring_is_networkx_cycle(size: int) -> None:
    edges = ring_edges(size)
    _check(edges, size)
    assert edges.tolist() == _nx_edges(nx.cycle_graph(size))


def test_ring_of_one_node_has_no_edge() -> None:
    assert ring_edges(1).shape == (0, 2) and ring_edges(0).shape == (0, 2)


@pytest.mark.parametrize("size", [5, 6, 7, 8, 12, 13])
@pytest.mark.parametrize("k", [0, 1, 2, 3, 4, 5, 6])
def test_ring_lattice_is_networkx_watts_strogatz_at_p0(size: int, k: int) -> None:
    if k > size:
        with pytest.raises(ValueError):
            ring_lattice_edges(size, k)
        return
    edges = ring_lattice_edges(size, k)
    _check(edges, size)
    assert edges.tolist() == _nx_edges(nx.watts_strogatz_graph(size, k, 0.0))


@pytest.mark.parametrize(
    ("size", "k", "p"), [(1000, 4, 0.1), (1000, 6, 1.0), (999, 5, 0.5), (20, 16, 1.0), (5, 4, 1.0)]
)
def test_small_world_keeps_the_lattice_edge_count(size: int, k: int, p: float) -> None:
    edges = small_world_edges(size, k, p, np.random.default_rng(3), connected=False)
    _check(edges, size)
    assert len(edges) == size * (k // 2) == nx.watts_strogatz_graph(size, k, p, seed=3).number_of_edges()
    degree = np.bincount(edges.ravel(), minlength=size)
    assert degree.min() >= k // 2  # each node keeps its own k//2 ends
    assert degree.mean() == pytest.approx(2 * (k // 2))


def test_small_world_at_p0_is_the_lattice() -> None:
    edges = small_world_edges(500, 6, 0.0, np.random.default_rng(0))
    assert np.array_equal(edges, ring_lattice_edges(500, 6))


def test_small_world_is_reproducible_under_a_seed() -> None:
    first = small_world_edges(2000, 4, 0.2, np.random.default_rng(11))
    assert np.array_equal(first, small_world_edges(2000, 4, 0.2, np.random.default_rng(11)))
    assert not np.array_equal(first, small_world_edges(2000, 4, 0.2, np.random.default_rng(12)))


def test_small_world_rewires_a_share_p_of_the_edges() -> None:
    size, k, p = 2000, 4, 0.1
    lattice = {tuple(e) for e in ring_lattice_edges(size, k).tolist()}
    edges = small_world_edges(size, k, p, np.random.default_rng(5), connected=False)
    share = np.mean([tuple(e) in lattice for e in edges.tolist()])
    assert abs(share - (1 - p)) < 4 * np.sqrt(p * (1 - p) / len(edges))


@pytest.mark.parametrize("p", [0.1, 0.3, 1.0])
def test_small_world_statistics_match_networkx(p: float) -> None:
    size, k = 2000, 4
    ours = [
        nx.Graph(small_world_edges(size, k, p, np.random.default_rng(s), connected=False).tolist()) for s in range(3)
    ]
    theirs = [nx.watts_strogatz_graph(size, k, p, seed=s) for s in range(3)]
    clustering = [np.mean([nx.average_clustering(g) for g in graphs]) for graphs in (ours, theirs)]
    assert clustering[0] == pytest.approx(clustering[1], abs=0.02)
    spread = [np.mean([np.std([d for _, d in g.degree()]) for g in graphs]) for graphs in (ours, theirs)]
    assert spread[0] == pytest.approx(spread[1], rel=0.1, abs=0.02)


def test_connected_small_world() -> None:
    size = 10_000
    edges = small_world_edges(size, 4, 0.1, np.random.default_rng(2))
    graph = nx.Graph(edges.tolist())
    assert graph.number_of_nodes() == size and nx.is_connected(graph)


def test_small_world_gives_up_after_its_tries() -> None:
    with pytest.raises(ValueError):
        small_world_edges(10, 0, 0.5, np.random.default_rng(0), tries=3)
    assert len(small_world_edges(10, 0, 0.5, np.random.default_rng(0), connected=False)) == 0
    assert small_world_edges(6, 6, 0.5, np.random.default_rng(0)).tolist() == _nx_edges(nx.complete_graph(6))


@pytest.mark.parametrize(("size", "m"), [(2, 1), (10, 1), (50, 2), (100, 3), (300, 7)])
def test_barabasi_albert_edge_count_is_networkx(size: int, m: int) -> None:
    edges = barabasi_albert_edges(size, m, np.random.default_rng(1))
    _check(edges, size)
    assert len(edges) == nx.barabasi_albert_graph(size, m, seed=1).number_of_edges() == m * (size - m)
    star = [[0, node] for node in range(1, m + 1)]
    assert edges[edges[:, 1] <= m].tolist() == star  # the initial star, centre 0
    assert (np.bincount(edges[:, 1], minlength=size)[m + 1 :] == m).all()  # each new node joins m earlier ones


def test_barabasi_albert_degrees_match_networkx() -> None:
    size, m = 5000, 2
    ours = [np.bincount(barabasi_albert_edges(size, m, np.random.default_rng(s)).ravel()) for s in range(3)]
    theirs = [np.array([d for _, d in nx.barabasi_albert_graph(size, m, seed=s).degree()]) for s in range(3)]
    assert [d.mean() for d in ours] == pytest.approx([d.mean() for d in theirs])
    top = [np.mean([d.max() for d in degrees]) for degrees in (ours, theirs)]
    assert 0.5 < top[0] / top[1] < 2
    tail = [np.mean([(d >= 20).mean() for d in degrees]) for degrees in (ours, theirs)]
    assert tail[0] == pytest.approx(tail[1], rel=0.3)


@pytest.mark.parametrize(("size", "m"), [(5, 2), (6, 3)])
def test_barabasi_albert_draws_networkx_distribution(size: int, m: int) -> None:
    """The frequencies of every graph, over many draws, agree with networkx's (a chi-square test of two samples)."""
    draws, rng = 3000, np.random.default_rng(8)
    ours = Counter(str(barabasi_albert_edges(size, m, rng).tolist()) for _ in range(draws))
    theirs = Counter(str(_nx_edges(nx.barabasi_albert_graph(size, m, seed=s))) for s in range(draws))
    assert len(set(ours) - set(theirs)) <= 2  # no graph that networkx never draws (but a rare one it missed)
    chi2 = sum((ours[g] - theirs[g]) ** 2 / (ours[g] + theirs[g]) for g in set(ours) | set(theirs))
    dof = len(set(ours) | set(theirs)) - 1
    assert chi2 < dof + 5 * np.sqrt(2 * dof)


def test_barabasi_albert_is_reproducible_and_checks_m() -> None:
    first = barabasi_albert_edges(3000, 3, np.random.default_rng(4))
    assert np.array_equal(first, barabasi_albert_edges(3000, 3, np.random.default_rng(4)))
    assert not np.array_equal(first, barabasi_albert_edges(3000, 3, np.random.default_rng(5)))
    for size, m in [(5, 0), (5, 5)]:
        with pytest.raises(ValueError):
            barabasi_albert_edges(size, m, np.random.default_rng(0))


def test_csr_by_hand() -> None:
    edges = np.array([[1, 2], [0, 3], [0, 1], [2, 3]])  # any order
    indptr, indices = csr_of(5, edges)
    assert indptr.tolist() == [0, 2, 4, 6, 8, 8]
    assert indices.tolist() == [1, 3, 0, 2, 1, 3, 0, 2]
    assert indptr.dtype == indices.dtype == np.int64


@pytest.mark.parametrize("build", ["small_world", "barabasi_albert"])
def test_csr_is_networkx_adjacency(build: str) -> None:
    size, rng = 700, np.random.default_rng(9)
    edges = small_world_edges(size, 6, 0.3, rng) if build == "small_world" else barabasi_albert_edges(size, 3, rng)
    graph = nx.Graph()
    graph.add_nodes_from(range(size))
    graph.add_edges_from(edges.tolist())
    indptr, indices = csr_of(size, edges)
    assert [indices[indptr[x] : indptr[x + 1]].tolist() for x in range(size)] == [sorted(graph[x]) for x in range(size)]
    shuffled = rng.permutation(edges)[:, ::-1]  # unsorted rows, (b, a) pairs: the same adjacency
    assert all(np.array_equal(a, b) for a, b in zip(csr_of(size, shuffled), (indptr, indices)))
