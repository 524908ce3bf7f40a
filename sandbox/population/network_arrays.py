"""Large interaction networks as numpy edge arrays, built without networkx.

networkx takes 4 to 9 s and 0.3 to 0.8 GB to build a Watts–Strogatz or Barabási–Albert graph of 1,000,000 nodes,
Python objects per node and edge; a population of that size needs only the edges (0.1 to 0.3 s here). These builders draw the same models as networkx's
generators, vectorised: each returns an (E, 2) int64 array holding every undirected edge once as (a, b) with a < b,
rows sorted, no self-loops, no duplicates, and `csr_of` turns it into the symmetric adjacency in CSR form.
networkx stays for small networks, for the other models and for reading edge lists; these serve large populations.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components

__all__ = ["barabasi_albert_edges", "csr_of", "ring_edges", "ring_lattice_edges", "small_world_edges"]

Edges = npt.NDArray[np.int64]
_ROUNDS = 1000  # redraw rounds of the rewiring before a still-blocked edge keeps its lattice end
_CHUNK = 1 << 14  # the most Barabási–Albert draws resolved together (a repeated node resolves its chunk again)


def _pairs(a: Edges, b: Edges, size: int) -> Edges:
    """The edges {a_i, b_i} as sorted (low, high) rows (key low*size + high, so size < 3e9)."""
    keys = np.sort(np.minimum(a, b) * size + np.maximum(a, b))
    return np.stack(np.divmod(keys, max(size, 1)), axis=1).astype(np.int64, copy=False)


def _complete(size: int) -> Edges:
    return np.stack(np.triu_indices(size, 1), axis=1).astype(np.int64)


def ring_edges(size: int) -> Edges:
    """The cycle 0-1-…-(size-1)-0, as `nx.cycle_graph(size)`: one edge for 2 nodes, none for 1 (where networkx
    gives a self-loop).

    >>> ring_edges(4).tolist()
    [[0, 1], [0, 3], [1, 2], [2, 3]]
    """
    return _complete(size) if size < 3 else ring_lattice_edges(size, 2)


def ring_lattice_edges(size: int, k: int) -> Edges:
    """Each node joined to its k//2 nearest on each side, as `nx.watts_strogatz_graph(size, k, 0)`: the complete
    graph when k == size, ValueError when k > size.

    >>> ring_lattice_edges(5, 4).tolist()
    [[0, 1], [0, 2], [0, 3], [0, 4], [1, 2], [1, 3], [1, 4], [2, 3], [2, 4], [3, 4]]
    """
    u, v = _lattice(size, k)
    return _complete(size) if k == size else _pairs(u, v, size)


def _lattice(size: int, k: int) -> tuple[Edges, Edges]:
    """The lattice edges (u, u+j mod size) in networkx's order: j = 1..k//2 outer, u inner."""
    if k > size:
        raise ValueError(f"k > size ({k} > {size}): choose a smaller k or a larger size")
    half = 0 if k == size else k // 2
    u = np.tile(np.arange(size, dtype=np.int64), half)
    return u, (u + np.repeat(np.arange(1, half + 1, dtype=np.int64), size)) % size


def small_world_edges(
    size: int, k: int, p: float, rng: np.random.Generator, connected: bool = True, tries: int = 100
) -> Edges:
    """The Watts–Strogatz small world, as `nx.watts_strogatz_graph` (`nx.connected_watts_strogatz_graph` when
    `connected`: the whole draw is repeated until connected, ValueError after `tries`).

    From the ring lattice, each lattice edge (u, u+j) is rewired with probability p to (u, w), w uniform over the
    nodes that are not u and not already joined to u; the size*(k//2) edges and each node's k//2 own ends stay.
    The difference from networkx: it rewires one edge at a time, so "already joined" means the graph at that moment
    (a lattice edge counts until it is rewired away); here all rewirings are drawn at once, and a new end is
    redrawn while it is u, any of u's lattice neighbours (even one whose edge is rewired away), or the new end of
    an earlier rewired edge at u. So no new edge is a lattice edge, and an edge whose u finds no free partner in
    many redraws (k close to size) keeps its lattice end, as networkx skips it; the order of draws differs too.

    >>> edges = small_world_edges(20, 4, 0.2, np.random.default_rng(1))
    >>> edges.shape, bool((edges[:, 0] < edges[:, 1]).all())
    ((40, 2), True)
    """
    if size > 1 and k == size:
        return _complete(size)
    for _ in range(tries if connected else 1):
        edges = _rewired(size, k, p, rng)
        if not connected or size <= 1:
            return edges
        rows = np.concatenate([[0], np.cumsum(np.bincount(edges[:, 0], minlength=size))])
        graph = csr_array((np.ones(len(edges), dtype=np.int8), edges[:, 1], rows), shape=(size, size))
        if connected_components(graph, directed=False, return_labels=False) == 1:
            return edges
    raise ValueError(f"no connected small world in {tries} tries")


def _rewired(size: int, k: int, p: float, rng: np.random.Generator) -> Edges:
    u, v = _lattice(size, k)
    rewire = rng.random(u.size) < (p if 2 * (k // 2) + 1 < size else 0.0)  # else u has no free partner
    src, old, half = u[rewire], v[rewire], k // 2
    new = rng.integers(0, size, src.size)
    taken = np.sort(np.minimum(u, v)[~rewire] * size + np.maximum(u, v)[~rewire])  # the graph's edges so far
    pending = np.arange(src.size)  # the rewired edges whose new end is not yet accepted, in networkx's order
    for _ in range(_ROUNDS):
        if not pending.size:
            break
        s, w = src[pending], new[pending]
        keys = np.minimum(s, w) * size + np.maximum(s, w)
        at = np.minimum(np.searchsorted(taken, keys), max(taken.size - 1, 0))
        gap = (w - s) % size  # 0: u itself; 1..k//2 or size-k//2..: a lattice neighbour
        bad = (gap <= half) | (gap >= size - half) | (taken[at] == keys if taken.size else False)
        order = np.argsort(keys, kind="stable")  # the same new edge twice: the first keeps it
        bad[order[1:][keys[order[1:]] == keys[order[:-1]]]] = True
        good = np.sort(keys[~bad])
        taken = np.insert(taken, np.searchsorted(taken, good), good)
        pending = pending[bad]
        new[pending] = rng.integers(0, size, pending.size)
    if pending.size:  # no free partner: keep the lattice edge (no new edge is one)
        keys = np.minimum(src[pending], old[pending]) * size + np.maximum(src[pending], old[pending])
        taken = np.sort(np.concatenate([taken, keys]))
    return np.stack(np.divmod(taken, max(size, 1)), axis=1).astype(np.int64, copy=False)


def barabasi_albert_edges(size: int, m: int, rng: np.random.Generator) -> Edges:
    """Barabási–Albert preferential attachment, as `nx.barabasi_albert_graph(size, m)`: a star of m+1 nodes (0 the
    centre), then each new node s joins m distinct earlier nodes, each drawn with probability proportional to its
    degree (a draw that repeats one already chosen is redrawn), for m*(size-m) edges in all.

    The Batagelj–Brandes list of node ends, vectorised: its layout is fixed (the star's 2m ends, then per step s
    its m targets and m copies of s), so each draw is a uniform position below the list's length at step s, and a
    position that holds an earlier target is followed back to its node. Steps go in chunks; within a chunk the
    first step with a repeated node redraws it and the steps after it are resolved again, which keeps networkx's
    distribution exactly (not its random stream).

    >>> edges = barabasi_albert_edges(10, 2, np.random.default_rng(0))
    >>> len(edges), edges[:2].tolist()
    (16, [[0, 1], [0, 2]])
    """
    if not 1 <= m < size:
        raise ValueError(f"Barabási–Albert needs 1 <= m < size, got m={m}, size={size}")
    steps = np.arange(m + 1, size, dtype=np.int64)
    targets = np.empty((steps.size, m), dtype=np.int64)  # row s-m-1: the nodes that s joins
    start = m + 1
    while start < size:
        stop = min(size, start + min(max(start, 64), max(1, _CHUNK // m)))
        _attach(targets, start, stop, m, rng)
        start = stop
    a = np.concatenate([np.zeros(m, dtype=np.int64), targets.ravel()])
    b = np.concatenate([np.arange(1, m + 1, dtype=np.int64), np.repeat(steps, m)])
    return _pairs(a, b, size)


def _attach(targets: Edges, start: int, stop: int, m: int, rng: np.random.Generator) -> None:
    """Fill the targets of the steps start..stop-1, those of earlier steps being final."""
    length = 2 * m * (np.arange(start, stop, dtype=np.int64) - m)  # the list's length before each step
    drawn = rng.integers(0, length[:, None], (stop - start, m))
    first = 0  # the rows before it are final
    while True:
        rows = _resolve(targets, drawn, start, first, m)
        repeat = np.zeros(rows.shape, dtype=bool)
        for j in range(1, m):
            repeat[:, j] = (rows[:, :j] == rows[:, j : j + 1]).any(axis=1)
        hit = np.flatnonzero(repeat.any(axis=1))
        if not hit.size:
            return
        first += int(hit[0])
        cols = np.flatnonzero(repeat[hit[0]])
        drawn[first, cols] = rng.integers(0, length[first], cols.size)


def _resolve(targets: Edges, drawn: Edges, start: int, first: int, m: int) -> Edges:
    """The nodes at the positions drawn for rows first.. of the chunk (stored into `targets`)."""
    pos = drawn[first:].ravel().copy()
    out = np.empty_like(pos)
    todo = np.arange(pos.size)
    while todo.size:
        p = pos[todo]
        step, off = np.divmod(p - 2 * m, 2 * m)
        step += m + 1
        star, own = p < 2 * m, off >= m  # the star's ends; the copies of the step's own node
        known = ~star & ~own & (step < start + first)
        out[todo[star]] = np.maximum(p[star] - m + 1, 0)
        out[todo[own & ~star]] = step[own & ~star]
        out[todo[known]] = targets[step[known] - m - 1, off[known]]
        follow = ~(star | own | known)
        todo = todo[follow]
        pos[todo] = drawn[step[follow] - start, off[follow]]
    rows = out.reshape(-1, m)
    targets[start + first - m - 1 : start + drawn.shape[0] - m - 1] = rows
    return rows


def csr_of(size: int, edges: Edges) -> tuple[Edges, Edges]:
    """The symmetric adjacency of `edges` (any order) in CSR form: node x's neighbours, ascending, are
    `indices[indptr[x]:indptr[x + 1]]`.

    >>> indptr, indices = csr_of(4, np.array([[0, 1], [1, 2], [0, 3]]))
    >>> indptr.tolist(), indices.tolist()
    ([0, 2, 4, 5, 6], [1, 3, 0, 2, 1, 0])
    """
    rows = np.concatenate([edges[:, 0], edges[:, 1]]).astype(np.int64, copy=False)
    cols = np.concatenate([edges[:, 1], edges[:, 0]]).astype(np.int64, copy=False)
    order = np.argsort(rows * size + cols)
    indptr = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=size), out=indptr[1:])
    return indptr, cols[order]
