"""Where each agent sits in the network view: computed once a run, the first time it is drawn, and kept in the run
directory as `layout.csv` (agent, x, y).

By the network's kind: a grid at its lattice coordinates; a ring and a ring lattice on a circle in the agents'
order; a complete graph as a square of agents (no edges drawn: every pair meets); any other graph (a small world,
whose shortcuts pull the ring together, a scale-free graph, an edge list) by igraph's Fruchterman-Reingold force
layout, seeded, with its grid approximation from 1,000 agents on (about 0.6 s for 10,000 agents on one core).
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from sandbox.base.files import read_csv, read_yaml
from sandbox.core.run_dir import atomic_write_text

__all__ = ["CIRCLE", "LAYOUT", "compute_layout", "layout", "network_of_run"]

LAYOUT = "layout.csv"
CIRCLE = ("ring", "ring_lattice")  # the kinds drawn on a circle, in the agents' order


def compute_layout(agents: int, kind: str, edges: npt.NDArray[np.int64], seed: int = 0) -> npt.NDArray[np.float64]:
    """Each agent's (x, y) for a network of `kind` (`population.network.kind`) with `edges` ((E, 2); empty for a
    complete graph), y upwards.

    >>> compute_layout(4, "grid", np.zeros((0, 2), dtype=np.int64)).tolist()
    [[0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0]]
    >>> np.round(compute_layout(4, "ring", np.zeros((0, 2), dtype=np.int64)), 3).tolist()
    [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [-0.0, -1.0]]
    """
    index = np.arange(agents)
    if kind in ("grid", "complete") or (kind != "edges" and not len(edges) and kind not in CIRCLE):
        side = round(math.sqrt(agents)) if kind == "grid" else math.ceil(math.sqrt(agents))
        rows = math.ceil(agents / side)
        return np.column_stack([index % side, rows - 1 - index // side]).astype(np.float64)
    if kind in CIRCLE:
        angle = 2 * math.pi * index / agents
        return np.column_stack([np.cos(angle), np.sin(angle)])
    import igraph

    graph = igraph.Graph(n=agents, edges=edges.tolist())
    igraph.set_random_number_generator(random.Random(seed))
    try:
        placed = graph.layout_fruchterman_reingold(grid="auto")  # its start drawn from the seeded generator
    finally:
        igraph.set_random_number_generator(random)  # igraph's default: the random module
    return np.asarray(placed.coords, dtype=np.float64)


Network = tuple[int, str, npt.NDArray[np.int64], int]  # agents, network kind, edges, seed (`network_of_run`)


def network_of_run(run: Path) -> Network:
    """The run directory's agents, network kind, edges ((E, 2)) and seed, from its scenario and `edges.csv`."""
    scenario = read_yaml(run / "scenario.yaml")
    block = scenario["population"]
    edges_file = run / "edges.csv"
    edges = read_csv(edges_file)[["a", "b"]].to_numpy(dtype=np.int64) if edges_file.is_file() else np.zeros((0, 2))
    return (
        int(block["agents"]),
        str(block.get("network", {}).get("kind", "complete")),
        edges.astype(np.int64),
        int(scenario.get("seed", 0)),
    )


def layout(run: Path | str, network: Network | None = None) -> npt.NDArray[np.float64]:
    """The run's layout ((agents, 2)): `layout.csv` if there, else computed (`compute_layout`) and written there
    (left unwritten, without an error, in a folder this process may not write). `network`: the run's
    `network_of_run`, where the caller has read it already."""
    run = Path(run)
    file = run / LAYOUT
    agents, kind, edges, seed = network_of_run(run) if network is None else network
    if file.is_file():
        kept = read_csv(file)
        if len(kept) == agents:
            return kept[["x", "y"]].to_numpy(dtype=np.float64)
    placed = compute_layout(agents, kind, edges, seed)
    table = pd.DataFrame({"agent": np.arange(agents), "x": placed[:, 0].round(4), "y": placed[:, 1].round(4)})
    try:
        atomic_write_text(file, table.to_csv(index=False))
    except OSError:
        pass
    return table[["x", "y"]].to_numpy(dtype=np.float64)
