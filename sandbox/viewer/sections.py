"""The sections a run page is made of, as a kind's `view(path)` returns them: a chart or a table of a CSV file, the
figures, the policies as word diffs, cells of a sweep, a tree, the transcripts. `sandbox.viewer.page` reads each
from the run directory into what the browser draws."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sandbox.core.run_dir import TRANSCRIPTS

__all__ = [
    "Branches",
    "Cells",
    "Chart",
    "Figures",
    "Network",
    "NetworkData",
    "Policies",
    "Section",
    "SweepChart",
    "Table",
    "Transcripts",
    "Tree",
]


@dataclass(frozen=True)
class Chart:
    """An interactive line (or marker, or bar) chart of a table's columns.

    Rows are kept where every `where` column equals its value; one trace per `y` column and per value of `group`;
    rows that share an `x` within a trace are averaged (one point per epoch over several runs); `band` names the
    columns of a shaded interval (a 95% CI) around a single `y`.
    """

    file: str
    x: str
    y: str | tuple[str, ...]
    group: str | None = None
    where: Mapping[str, Any] = field(default_factory=dict)
    band: tuple[str, str] | None = None
    title: str = ""
    mode: str = "lines"  # lines, markers or bars
    y_title: str = ""
    x_title: str = ""  # default: the x column's name


@dataclass(frozen=True)
class Table:
    """A table file (CSV or JSONL) shown as a sortable, filterable table (its first `TABLE_ROWS` rows)."""

    file: str
    title: str = ""
    columns: tuple[str, ...] = ()  # shown columns; empty: all


@dataclass(frozen=True)
class Figures:
    """The images matching `pattern` (a glob relative to the run directory)."""

    pattern: str = "*.png"
    title: str = "Figures"


@dataclass(frozen=True)
class Policies:
    """SCAI's policy versions, each as a word diff from the last, with the evidence (episodes) and the MetaLM's
    answer that led to it."""

    file: str = "policies.jsonl"
    episodes: str = "episodes.csv"
    title: str = "Policy versions"


@dataclass(frozen=True)
class Cells:
    """A grid of runs (a sweep's cells): a table whose `column` names each cell's directory under `under`."""

    file: str
    column: str = "run"
    under: str = "runs"
    title: str = "Cells"


@dataclass(frozen=True)
class Tree:
    """The rows of a table as the paths of a tree (a dialogue game's: its setup, then each instruction in turn,
    then the chance outcome), drawn as a sunburst: a node's size is the rows under it, its colour the mean of
    `color` over them. `split` cuts one column's value into several levels (`"generous | tough"`, shown bare);
    a column that is not cut is one level, shown with its name (`setup 0`)."""

    file: str
    path: tuple[str, ...]
    split: str = " | "
    color: str | None = None
    title: str = "Tree"


@dataclass(frozen=True)
class Transcripts:
    """The LLM calls of a JSONL transcript, browsed a page at a time (`sandbox.viewer.transcripts`)."""

    file: str = TRANSCRIPTS
    title: str = "Transcripts"


@dataclass(frozen=True)
class Branches:
    """A run's forks and its parents (`sandbox.core.steps`): the tree of runs from its root ancestor, each with its
    fork step and changes, and the divergence plot, each branch's headline figure over steps (the kind's
    `Steps.series`, `steps`: its reference; None, no plot) with the fork steps marked
    (`sandbox.viewer.branches`). The viewer adds it to the page of a run that has a parent or forks."""

    steps: str | None = None
    title: str = "Branches"


@dataclass(frozen=True)
class NetworkData:
    """A network over steps, as the network view draws it (`Network`): each agent's place, the edges, and at each
    step (a frame) what each agent holds, coded against `texts` (`codes[f, i]`); each text belongs to a group
    (`group_of`), drawn in the group's colour and counted in the legend under the group's name (a strategy, a name,
    a cluster of norm texts). `marked` agents (the fixed, the committed) are drawn larger; `values[f, i]` (a payoff)
    and each agent's lineage (its revisions, whom it took what it holds from) show on hover. `notes`: what the view
    leaves out (frames thinned, values not sent)."""

    x: npt.NDArray[np.floating[Any]]
    y: npt.NDArray[np.floating[Any]]
    edges: npt.NDArray[np.integer[Any]] | None  # (E, 2); None: not drawn (a complete graph: every pair meets)
    steps: Sequence[int]  # each frame's step (-1: before the first)
    texts: Sequence[str]
    group_of: Sequence[int]  # each text's group
    groups: Sequence[str]
    colours: Sequence[str]  # each group's colour, as #rrggbb
    codes: npt.NDArray[np.integer[Any]]  # (frames, agents), indices of `texts`
    unit: str = "generation"
    marked: npt.NDArray[np.bool_] | None = None
    marked_name: str = "fixed"
    values: npt.NDArray[np.floating[Any]] | None = None  # (frames, agents)
    value_name: str = "payoff"
    notes: tuple[str, ...] = ()
    caption: str = ""  # what made the run: game, network, rule, seed
    parent: str = ""  # a fork's parent, by name
    differs: npt.NDArray[np.bool_] | None = None  # (frames, agents): a fork's agents that hold other than the parent's
    # whom agents took what they hold from: (events, 4) rows of step, agent, source (-1: none), how (an index of
    # `hows`); None: the run records no lineage (the view names the neighbours that held it the step before)
    lineage: npt.NDArray[np.integer[Any]] | None = None
    hows: Sequence[str] = ()


@dataclass(frozen=True)
class Network:
    """A population's network over its steps (`sandbox.viewer.network`): agents coloured by what they hold, a
    scrubber and a play button over the steps, a legend with each colour's share at the step shown, hover for an
    agent's text and value, click for its calls in the transcripts; on a fork's page, the agents that hold other
    than the parent's at the step shown. `data(path)` reads the run directory (None: nothing to draw yet)."""

    data: Callable[[Path], NetworkData | None]
    title: str = "Network"
    # a fork's parent's name and which agents differ from it, by frame (`fork(path, root)`: the viewer's folder
    # `root`, outside which no run is read); None: not compared
    fork: Callable[[Path, Path], tuple[str, npt.NDArray[np.bool_]] | None] | None = None


@dataclass(frozen=True)
class SweepChart:
    """A sweep's results against what it swept (`file`: its `seeds.csv`, a row a setting, each metric's mean and
    95% CI over seeds): a chosen metric against a chosen parameter, a line for each value of another (the rest
    held at a chosen value), with its band where the seeds give an interval; and a heat map of the metric over two
    parameters. `axes`: the swept fields, in the sweep's order, those that vary together (a zip group) as one axis
    (named and valued by its first field)."""

    file: str
    axes: tuple[tuple[str, ...], ...]
    title: str = "Results against the swept parameters"


Section = Chart | Table | Figures | Policies | Cells | Tree | Transcripts | Branches | Network | SweepChart
