"""Branches of a run side by side: each branch's headline figure at every step, with its 95% CI across the branch's
independent runs, from the step where the branches part (`sandbox compare`, `sandbox.compare`).

A branch is a finished run directory of a kind that names its steps (`sandbox.core.steps.Steps`: a society's
epochs, a population's generations), or several (the same branch run with several seeds): their independent runs
pool into one interval. Its figure per step is the kind's `Steps.series` (a society: the assistant's mean offered
share in each run; a population: its game's headline column), averaged over the branch's runs with
`sandbox.base.stats.mean_ci` (no interval with one run).

Where the branches part: two runs of one lineage (a parent and its fork, two forks of one run, a fork of a fork)
share the steps before the earliest fork between them and their nearest common ancestor (`parting_step`); the
branches' fork step is the earliest over every pair. `compare_branches` gives the steps from there on (all of them
when the branches share no lineage: runs of different kinds or unrelated runs still compare, with no fork step);
`divergence_figure` draws every step, the fork step marked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Protocol

import pandas as pd
from matplotlib.figure import Figure

from sandbox.base.errors import UsageError
from sandbox.base.stats import mean_ci
from sandbox.core import kinds
from sandbox.core import run_dir as layout
from sandbox.core.steps import lineage, read_fork
from sandbox.engine.fork_plan import steps_of

__all__ = ["COLUMNS", "Branch", "branch_label", "compare_branches", "divergence_figure", "fork_step", "parting_step"]


class _HasPath(Protocol):
    @property
    def path(self) -> Path: ...


Branch = str | Path | _HasPath | Sequence[str | Path]
"""A run directory (or a `RunResult`), or several (one branch run with several seeds)."""

COLUMNS = ["branch", "label", "kind", "unit", "step", "figure", "mean", "ci_low", "ci_high", "n"]
COLOURS = ["#4c72b0", "#c44e52", "#55a868", "#8172b2", "#dd8452", "#937860", "#da8bc3", "#8c8c8c", "#ccb974"]


def _chain(path: Path) -> list[tuple[Path, float]]:
    """The run and its ancestors, nearest first, each with the steps the run shares with it (the run itself: all)."""
    chain: list[tuple[Path, float]] = [(path.resolve(), math.inf)]
    shared = math.inf
    for record in lineage(path):
        shared = min(shared, float(record["at"]))
        chain.append((Path(record["parent"]).resolve(), shared))
    return chain


def parting_step(a: str | Path, b: str | Path) -> int | None:
    """The step where runs `a` and `b` part: the first step one of them played again after their nearest common
    ancestor (the earliest fork between either and it); None when they share no lineage (or are one run).

    A parent and its fork at 3 part at 3; two forks of one run, at 2 and at 4, part at 2; a fork at 1 of a fork at 4
    and the first run part at 1.
    """
    other = dict(_chain(Path(b)))
    for ancestor, shared in _chain(Path(a)):
        if ancestor in other:
            step = min(shared, other[ancestor])
            return None if step == math.inf else int(step)
    return None


def fork_step(branches: Sequence[Branch]) -> int | None:
    """The branches' fork step: the earliest step where any two of them part (`parting_step`); None when no two
    share a lineage."""
    members = [(i, path) for i, branch in enumerate(branches) for path in _members(branch)]
    steps = [parting_step(a, b) for (i, a), (j, b) in combinations(members, 2) if i != j]
    found = [s for s in steps if s is not None]
    return min(found) if found else None


def _members(branch: Branch) -> list[Path]:
    if isinstance(branch, str | Path):
        return [Path(branch)]
    if not isinstance(branch, Sequence):
        return [Path(branch.path)]  # a RunResult
    members = [Path(p) for p in branch]
    if not members:
        raise UsageError("a branch with no run directory")
    return members


def branch_label(path: str | Path, width: int = 48) -> str:
    """A run in a few words: its directory's name, and a fork's step and changes (`equal (epoch 1: state.policy=Sh…)`)."""
    path = Path(path)
    record = read_fork(path)
    if record is None:
        return path.name
    changes = ", ".join(f"{k}={v}" for k, v in (record.get("changes") or {}).items()) or "no change"
    if len(changes) > width:
        changes = changes[: width - 1] + "…"
    return f"{path.name} ({record.get('unit', 'step')} {record['at']}: {changes})"


def _series(path: Path) -> tuple[str, str, pd.DataFrame]:
    """(kind, unit, the run's series), checked: a finished run of a kind with steps and a series."""
    if not path.is_dir():
        raise UsageError(f"{path}: no such run directory")
    kind = kinds.kind_of_dir(path)
    steps = steps_of(kind)
    if steps.series is None:
        raise UsageError(f"{path}: {kind.name} runs name no headline figure per {steps.unit} to compare")
    if not (path / layout.SUMMARY).is_file():
        raise UsageError(f"{path} is not finished (no {layout.SUMMARY}); resume it first: sandbox resume {path}")
    return kind.name, steps.unit, steps.series(path)


def _all_steps(branches: Sequence[Branch], confidence: float) -> pd.DataFrame:
    """Every step of every branch: the figure's mean over the branch's runs and its interval (a figure whose every
    value lies in [0, 1] is a share: its interval is clipped to that range)."""
    if not branches:
        raise UsageError("compare needs at least one run directory")
    read: list[tuple[str, str, str, str, pd.DataFrame]] = []
    for branch in branches:
        members = _members(branch)
        series = [_series(path) for path in members]
        if len({kind for kind, _, _ in series}) > 1:
            raise UsageError(f"the runs of one branch are of one kind: {', '.join(map(str, members))} are not")
        frames = [frame.assign(run=[f"{i}:{r}" for r in frame["run"]]) for i, (_, _, frame) in enumerate(series)]
        label = branch_label(members[0]) + (f" (+{len(members) - 1} runs)" if len(members) > 1 else "")
        if any(label == taken for _, taken, *_ in read):  # two directories of one name: the table keeps both
            label = f"{label} [{len(read) + 1}]"
        read.append((",".join(map(str, members)), label, *series[0][:2], pd.concat(frames, ignore_index=True)))
    values = pd.concat([frame for *_, frame in read], ignore_index=True)
    values = values.assign(value=pd.to_numeric(values["value"], errors="coerce"))
    shares = {figure for figure, v in values.groupby("figure")["value"] if bool(v.dropna().between(0, 1).all())}
    rows = []
    for name, label, kind, unit, frame in read:
        for (figure, step), at in frame.groupby(["figure", "step"], sort=True):
            bounds = (0.0, 1.0) if figure in shares else None
            mean, low, high, n = mean_ci(pd.to_numeric(at["value"], errors="coerce"), confidence, bounds)
            rows.append([name, label, kind, unit, int(step), figure, mean, low, high, n])
    return pd.DataFrame(rows, columns=COLUMNS)


def compare_branches(branches: Sequence[Branch], confidence: float = 0.95) -> pd.DataFrame:
    """The branches' headline figure per step from their fork step on (every step when they share no lineage):
    columns `branch` (its directory, or directories joined by commas), `label`, `kind`, `unit`, `step`, `figure`,
    `mean`, `ci_low`, `ci_high` (NaN with one run) and `n` (the runs). `attrs["fork_step"]` holds the fork step
    (None without one).

    `UsageError` for a directory that is no finished run of a kind with steps, naming it.
    """
    table = _all_steps(branches, confidence)
    step = fork_step(branches)
    shown = table if step is None else table[table["step"] >= step].reset_index(drop=True)
    shown.attrs["fork_step"] = step
    return shown


def divergence_figure(branches: Sequence[Branch], title: str = "", confidence: float = 0.95) -> Figure:
    """Each branch's headline figure over every step, its CI band across runs, the fork step a vertical line; one
    axis per figure (branches of different kinds have different figures)."""
    table = _all_steps(branches, confidence)
    step = fork_step(branches)
    figures = list(dict.fromkeys(table["figure"]))
    if not figures:
        raise UsageError("none of the branches has a figure to draw (their tables hold no step)")
    fig = Figure(figsize=(6.4 * len(figures), 4.2))
    axes = fig.subplots(1, len(figures), squeeze=False)[0]
    colours = {name: COLOURS[i % len(COLOURS)] for i, name in enumerate(dict.fromkeys(table["branch"]))}
    for ax, figure in zip(axes, figures):
        shown = table[table["figure"] == figure]
        for name, rows in shown.groupby("branch", sort=False):
            rows = rows.sort_values("step")
            colour = colours[str(name)]
            ax.plot(rows["step"], rows["mean"], marker="o", color=colour, lw=1.8, label=rows["label"].iloc[0])
            ax.fill_between(
                rows["step"],
                rows["ci_low"].astype(float),
                rows["ci_high"].astype(float),
                color=colour,
                alpha=0.15,
                lw=0,
            )
        units = sorted(set(shown["unit"]))
        if step is not None:
            ax.axvline(step, color="#333333", ls=":", lw=1.2, label=f"fork ({' / '.join(units)} {step})")
        ax.set_xlabel(" / ".join(units))
        ax.set_ylabel(figure)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.legend(fontsize=7, loc="best")
    fig.suptitle(title or f"Branches: headline figure per step, mean and {confidence:.0%} CI across runs", fontsize=11)
    fig.tight_layout()
    return fig
