"""A run's branches on its page (`sections.Branches`): the tree of runs forked from its root ancestor, each with
its fork step and changes, and the divergence plot, each branch's headline figure over steps with the fork steps
marked.

The tree is read from the forks' records (`sandbox.core.steps`): a fork's `fork.json` names its parent (`lineage`
walks up to the root ancestor), a parent's `forks.jsonl` its forks (`forks_of` walks down from every run of the
chain). A run that was deleted, or lies outside the viewer's folder, is named but neither linked nor read: only a
run inside the folder gets a link and a curve. A fork's tables hold its parent's steps before the fork (copied), so
its curve starts at the last step before its fork step (the branch leaves its parent's curve there) when its parent
has a curve, and at step 0 when it has none (a deleted parent's steps are still shown).

Each curve is the kind's `Steps.series` (one value per step and independent run) averaged over the independent
runs. A kind without steps, or a branch whose table cannot be read, has no curve: never an error on the page.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.core import kinds
from sandbox.core.steps import Steps, forks_of, lineage, read_fork
from sandbox.viewer.sections import Branches

__all__ = ["MAX_RUNS", "branches", "folder_of"]

MAX_RUNS = 60  # runs of a family shown; a larger one is cut (the section says so)
CHANGE_TEXT = 120  # characters of a change's value shown; the whole change is in its tooltip


def folder_of(path: Path, base: str) -> Path:
    """The viewer's folder: `path` less `base`, its path relative to the folder."""
    parts = [p for p in base.split("/") if p and p != "."]
    return path.parents[len(parts) - 1] if parts else path


def _change_text(changes: dict[str, Any]) -> str:
    """`field=value, ...`, each value cut to `CHANGE_TEXT` characters ("no change" when there is none)."""
    if not changes:
        return "no change"
    texts = []
    for field, value in changes.items():
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        texts.append(f"{field}={text if len(text) <= CHANGE_TEXT else text[: CHANGE_TEXT - 1] + '…'}")
    return ", ".join(texts)


def _family(path: Path, root: Path, opens: Callable[[Path, str], bool]) -> tuple[list[dict[str, Any]], bool]:
    """The runs of `path`'s family, its root ancestor first, each fork after its parent (depth first, forks in the
    order made), and whether it was cut at `MAX_RUNS`. Each: path, parent (an index, None for the root), its fork
    record (None for the root), whether it is the current run and whether it is read (there, inside the folder, and
    `opens(run, relative)`)."""
    records = lineage(path)
    chain = [path, *(Path(r["parent"]) for r in records)]  # the current run first, the root ancestor last
    seen = [run.resolve() for run in chain]
    chain = chain[: next((i for i, run in enumerate(seen) if run in seen[:i]), len(chain))]  # records in a circle
    found: list[dict[str, Any]] = []
    index: dict[Path, int] = {}

    def add(run: Path, parent: int | None, record: dict[str, Any] | None) -> int:
        resolved = run.resolve()
        index[resolved] = len(found)
        relative = resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else None
        found.append(
            {
                "path": run,
                "parent": parent,
                "record": record,
                "current": resolved == path.resolve(),
                "read": relative is not None and run.is_dir() and opens(run, relative),
                "relative": relative,
            }
        )
        return len(found) - 1

    parent = None
    for depth in range(len(chain) - 1, -1, -1):
        parent = add(chain[depth], parent, records[depth] if depth < len(records) else None)
    cut = False
    queue = list(range(len(found)))
    while queue:
        at = queue.pop(0)
        if not found[at]["read"]:
            continue
        for fork in forks_of(found[at]["path"]):
            if fork.resolve() in index:
                continue
            if len(found) >= MAX_RUNS:
                cut = True
                break
            queue.append(add(fork, at, read_fork(fork)))
    order: list[int] = []

    def visit(i: int) -> None:
        order.append(i)
        for j, run in enumerate(found):
            if run["parent"] == i:
                visit(j)

    visit(0)
    renumber = {old: new for new, old in enumerate(order)}
    runs = [found[i] for i in order]
    for run in runs:
        run["parent"] = None if run["parent"] is None else renumber[run["parent"]]
    return runs, cut


def _name(run: dict[str, Any]) -> str:
    if run["relative"] is not None:
        return run["relative"] if run["relative"] != "." else run["path"].name
    return run["path"].name


def _steps(section: Branches) -> Steps | None:
    if section.steps is None:
        return None
    steps = kinds.resolve(section.steps)
    return steps if isinstance(steps, Steps) and steps.series is not None else None


def _divergence(steps: Steps | None, runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The divergence plot as a chart section (`page`'s chart JSON, with `marks`: the fork steps), or None when no
    branch has a curve."""
    if steps is None or steps.series is None:
        return None
    curves: dict[int, Any] = {}
    figure = ""
    for i, run in enumerate(runs):
        if not run["read"]:
            continue
        try:
            frame = steps.series(run["path"])
            means = frame.groupby("step", sort=True)["value"].mean().dropna()
        except Exception:  # a branch whose table is missing or cannot be read has no curve
            continue
        if len(means):
            curves[i] = means
            figure = figure or str(frame["figure"].iloc[0])
    if not curves:
        return None
    traces = []
    for i, means in curves.items():
        run = runs[i]
        at = run["record"]["at"] if run["record"] else None
        if at is not None and run["parent"] in curves:  # the steps before the fork are the parent's, on its curve:
            means = means[means.index >= at - 1]  # from the last of them, so the branch leaves the parent's curve
        traces.append(
            {
                "name": _name(run),
                "x": [int(x) for x in means.index],
                "y": [float(y) for y in means],
                "current": run["current"],
            }
        )
    forked: dict[int, list[str]] = {}
    for run in runs[1:]:
        if run["record"] is not None and isinstance(run["record"].get("at"), int):
            forked.setdefault(run["record"]["at"], []).append(_name(run))
    return {
        "type": "chart",
        "title": f"{figure} by {steps.unit}, each branch",
        "x_title": steps.unit,
        "y_title": figure,
        "mode": "lines",
        "traces": traces,
        "marks": [{"x": at, "label": "fork: " + ", ".join(names)} for at, names in sorted(forked.items())],
        "file": None,
    }


def branches(section: Branches, path: Path, *, base: str, opens: Callable[[Path, str], bool]) -> dict[str, Any] | None:
    """The section's JSON: `runs` (the tree, each with `parent`, an index into it), `chart` (the divergence plot,
    None without one) and `cut`; None when the run has neither a parent nor a fork. `opens(run, relative)`: whether
    the viewer opens a run directory inside its folder (`relative`: its path there)."""
    path = path.resolve()
    runs, cut = _family(path, folder_of(path, base), opens)
    if len(runs) < 2:
        return None
    rows = []
    for run in runs:
        record = run["record"] or {}
        changes: dict[str, Any] = record["changes"] if isinstance(record.get("changes"), dict) else {}
        rows.append(
            {
                "name": _name(run),
                "link": run["relative"] if run["read"] else None,
                "parent": run["parent"],
                "current": run["current"],
                "exists": run["path"].is_dir(),
                "inside": run["relative"] is not None,
                "at": record.get("at"),
                "unit": record.get("unit"),
                "fresh": bool(record.get("fresh")),
                "changes": _change_text(changes) if run["parent"] is not None else None,
                "changes_full": json.dumps(changes, default=str) if changes else None,
            }
        )
    return {
        "type": "branches",
        "title": section.title,
        "runs": rows,
        "cut": cut,
        "chart": _divergence(_steps(section), runs),
    }
