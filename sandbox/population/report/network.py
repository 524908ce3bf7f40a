"""A population run's network view (`sandbox view`, `sandbox report`, `plot_network`): its agents at their places
(`layout`), coloured by what each holds after each generation (`held.csv`).

The colours: a scripted strategy or a name of the naming game has its own colour; an LLM agent's norm text takes
its norm map cluster's (`clusters.csv`, named by its most central text) where the run has a norm map, else its own.
The `COLOURS - 1` most held are coloured, by their share over the run; the rest share one grey ("other"). The
naming game's `several` (an agent holding more than one name) is light grey and `none` lighter. Fixed members
(the naming game's committed agents) are marked. On hover: each agent's payoff (or score) that generation, where
`population.csv` records one per agent and generation, and its lineage where the run records one
(`sandbox.population.report.lineage`).
"""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from sandbox.base.files import read_csv
from sandbox.population.held import HELD, Held, read_held
from sandbox.population.report.caption import caption
from sandbox.population.report.layout import LAYOUT, layout, network_of_run
from sandbox.population.report.lineage import LINEAGE, lineage_of_run
from sandbox.viewer.sections import NetworkData

__all__ = ["COLOURS", "fork_differences", "held_of_run", "network_data", "norm_groups"]

# matplotlib's tab10 (Plotly's default colours too): the first nine for the most held, the tenth's grey for "other"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf")
COLOURS = len(PALETTE) + 1
OTHER = "#7f7f7f"
FIXED = {"several": "#c7c7c7", "none": "#ececec"}  # the naming game's agents that hold more than one name, or none
MAX_EDGES = 300_000  # edges drawn at most (a denser graph is drawn without them, and the view says so)
FILES = (
    HELD,
    LAYOUT,
    "edges.csv",
    "population.csv",
    "norms.csv",
    "norm_clusters.csv",
    "clusters.csv",
    LINEAGE,
    "revisions.csv",
)


def norm_groups(run: Path, texts: list[str]) -> list[str]:
    """Each text's group: its norm map cluster's name (`clusters.csv`, through the versions of `norms.csv` that
    hold the text), or the text itself where the run has no norm map or the text no cluster."""
    files = [run / name for name in ("norms.csv", "norm_clusters.csv", "clusters.csv")]
    if not all(f.is_file() for f in files):
        return list(texts)
    norms, of, clusters = (read_csv(f) for f in files)
    name = dict(zip(clusters["cluster"], clusters["name"].astype(str)))
    cluster = dict(zip(of["norm"], of["cluster"]))
    by_text: dict[str, str] = {}
    for norm, text in zip(norms["norm"], norms["strategy"].astype(str)):
        if norm in cluster:
            by_text.setdefault(text, name.get(cluster[norm], text))
    return [by_text.get(text, text) for text in texts]


def _groups(held: Held, named: list[str]) -> tuple[list[int], list[str], list[str]]:
    """Each text's group (an index), the groups' names and colours: the most held first, the rest as "other"."""
    counts = np.bincount(held.codes.ravel(), minlength=len(held.labels)) if held.codes.size else np.zeros(0)
    weight: Counter[str] = Counter()
    for name, count in zip(named, counts.tolist()):
        weight[name] += count
    special = [name for name in weight if name in FIXED]
    ranked = [name for name, _ in weight.most_common() if name not in FIXED]
    other = len(ranked) > COLOURS  # ten fit: the tenth takes the grey
    coloured = ranked[: len(PALETTE)] if other else ranked
    names = [*coloured, *special, *(["other"] if other else [])]
    colours = [*(*PALETTE, OTHER)[: len(coloured)], *(FIXED[name] for name in special), *([OTHER] if other else [])]
    index = {name: i for i, name in enumerate(names)}
    return [index.get(name, len(names) - 1) for name in named], names, colours


def _values(run: Path, held: Held) -> tuple[npt.NDArray[np.float32] | None, str]:
    """Each agent's payoff (or score) by frame, from `population.csv` (NaN where none), and its name."""
    file = run / "population.csv"
    if not file.is_file():
        return None, ""
    header = pd.read_csv(file, nrows=0).columns
    column = next((c for c in ("payoff", "score") if c in header), None)
    if column is None or not {"generation", "agent"} <= set(header):
        return None, ""
    table = pd.read_csv(file, usecols=["generation", "agent", column])
    values = np.full(held.codes.shape, np.nan, dtype=np.float32)
    row_of = {int(g): f for f, g in enumerate(held.generations.tolist())}
    rows = table["generation"].map(row_of)
    ok = (
        rows.notna()
        & table["agent"].between(0, held.agents - 1)
        & pd.to_numeric(table[column], errors="coerce").notna()
    )
    values[rows[ok].astype(int).to_numpy(), table["agent"][ok].astype(int).to_numpy()] = table[column][ok].astype(float)
    return (values, column) if np.isfinite(values).any() else (None, "")


def _marked(run: Path, agents: int) -> tuple[npt.NDArray[np.bool_] | None, str]:
    from sandbox.base.errors import SandboxError
    from sandbox.core.scenario_files import load_run_scenario
    from sandbox.population.settings import place_members

    try:
        scenario = load_run_scenario(run)
    except SandboxError:  # a scenario this version does not read: nothing marked
        return None, ""
    members = scenario.population.members
    fixed = np.array([members[m].fixed for m in place_members(scenario)], dtype=bool)
    if len(fixed) != agents or not fixed.any():
        return None, ""
    return fixed, "committed" if getattr(scenario.population.game, "kind", "") == "naming" else "fixed"


def held_of_run(run: Path) -> Held | None:
    """What each agent held by generation: `held.csv`, or for a run made before that table, the `strategy` column
    of `population.csv` (its generations only); None when neither is there."""
    if (run / HELD).is_file():
        return read_held(run)
    file = run / "population.csv"
    if not file.is_file() or not {"generation", "agent", "strategy"} <= set(pd.read_csv(file, nrows=0).columns):
        return None
    table = pd.read_csv(file, usecols=["generation", "agent", "strategy"], keep_default_na=False)
    table["strategy"] = table["strategy"].astype(str)
    labels = list(dict.fromkeys(table["strategy"]))
    code = {label: i for i, label in enumerate(labels)}
    generations = sorted(table["generation"].unique().tolist())
    agents = int(table["agent"].max()) + 1 if len(table) else 0
    codes = np.zeros((len(generations), agents), dtype=np.uint16)
    row = {g: f for f, g in enumerate(generations)}
    codes[table["generation"].map(row).to_numpy(), table["agent"].to_numpy()] = table["strategy"].map(code).to_numpy()
    return Held(np.array(generations, dtype=np.int64), labels, codes)


def network_data(run: Path | str, *, by: Literal["cluster", "text"] = "cluster") -> NetworkData | None:
    """The run directory's network view; None where it recorded nothing to draw (not yet started). `by`: an LLM
    norm text coloured by its norm map cluster, or by itself."""
    run = Path(run)
    stamp = tuple((f.stat().st_mtime_ns, f.stat().st_size) if f.is_file() else None for f in (run / n for n in FILES))
    return _cached(run.resolve(), stamp, by)


@functools.lru_cache(maxsize=8)
def _cached(run: Path, stamp: tuple[Any, ...], by: str) -> NetworkData | None:
    held = held_of_run(run)
    if held is None or not len(held.generations) or not (run / "scenario.yaml").is_file():
        return None
    network = network_of_run(run)  # edges.csv read once, for the layout and the edges drawn
    places, edges = layout(run, network), network[2]
    notes = []
    if len(edges) > MAX_EDGES:
        notes.append(f"the {len(edges):,} edges are not drawn (more than {MAX_EDGES:,}); edges.csv holds them")
    named = norm_groups(run, held.labels) if by == "cluster" else held.labels
    group_of, groups, colours = _groups(held, named)
    values, value_name = _values(run, held)
    marked, marked_name = _marked(run, held.agents)
    lineage = lineage_of_run(run)
    return NetworkData(
        x=places[:, 0],
        y=places[:, 1],
        edges=edges if 0 < len(edges) <= MAX_EDGES else None,
        steps=held.generations.tolist(),
        texts=held.labels,
        group_of=group_of,
        groups=groups,
        colours=colours,
        codes=held.codes,
        marked=marked,
        marked_name=marked_name or "fixed",
        values=values,
        value_name=value_name or "payoff",
        notes=tuple(notes),
        caption=caption(run),
        lineage=None
        if lineage is None
        else np.stack([lineage.generations, lineage.agents, lineage.sources, lineage.how], axis=1),
        hows=() if lineage is None else tuple(lineage.hows),
    )


def fork_differences(run: Path, root: Path | None = None) -> tuple[str, npt.NDArray[np.bool_]] | None:
    """For a fork: its parent's name and, at each of the fork's recorded generations, which agents hold another
    label than the parent's agents did at that generation (False where the parent has no such generation). None
    for a run that is no fork, or whose parent is gone, lies outside `root` (the viewer's folder: never read), or
    recorded nothing to compare."""
    from sandbox.core.steps import read_fork

    record = read_fork(run)
    if record is None:
        return None
    parent = Path(record["parent"])
    if root is not None and not parent.resolve().is_relative_to(root.resolve()):
        return None
    held, before = held_of_run(run), held_of_run(parent) if parent.is_dir() else None
    if held is None or before is None or before.agents != held.agents:
        return None
    rows = {int(g): f for f, g in enumerate(before.generations.tolist())}
    ours, theirs = np.array(held.labels, dtype=object), np.array(before.labels, dtype=object)
    differs = np.zeros(held.codes.shape, dtype=bool)
    for f, g in enumerate(held.generations.tolist()):
        if g in rows:
            differs[f] = ours[held.codes[f]] != theirs[before.codes[rows[g]]]
    return str(record.get("parent_name") or parent.name), differs
