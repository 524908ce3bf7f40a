"""The sections a run page is made of, as a kind's `view(path)` returns them: a chart or a table of a CSV file, the
figures, the policies as word diffs, cells of a sweep, a tree, the transcripts. `sandbox.viewer.page` reads each
from the run directory into what the browser draws."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sandbox.core.run_dir import TRANSCRIPTS

__all__ = ["Branches", "Cells", "Chart", "Figures", "Policies", "Section", "Table", "Transcripts", "Tree"]


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


Section = Chart | Table | Figures | Policies | Cells | Tree | Transcripts | Branches
