"""A run page: a kind's sections (`sandbox.viewer.sections`) read from the run directory into what the browser draws.

A kind lays out its run page by naming a `view` function in its `RunKind` (`"module:function"`), which returns
the sections in order::

    def view(path: Path) -> list[Section]:
        return [Chart("epoch_summary.csv", x="epoch", y="mean", group="group", where={"metric": "offered_share"},
                      band=("ci_low", "ci_high"), title="Offered share"),
                Policies(), Table("final_policies.csv")]

The viewer adds what every page has: the headline figures (`summary.json`), the branches of a run that has a parent
or forks (`sandbox.viewer.branches`), the figures (`*.png`) that no section shows, the run directories inside this
one, and the transcripts, so a kind without a `view` still has a full page
(its `RunKind.tables`). A section whose file is missing (a run still in progress) is left out, not an error.

Every section is read into plain JSON (`render`): the browser draws that and reads no file itself.
"""

from __future__ import annotations

import base64
import dataclasses
import math
import mimetypes
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from sandbox.core import kinds
from sandbox.core.costs import COSTS
from sandbox.core.run_dir import SCENARIO, STATUS, SUMMARY, SWEEP, TRANSCRIPTS
from sandbox.core.steps import FORK, FORKS
from sandbox.viewer.branches import branches, folder_of
from sandbox.viewer.network import network_json
from sandbox.viewer.policies import policies_json
from sandbox.viewer.reading import inside, plain, read_table
from sandbox.viewer.sections import (
    Branches,
    Cells,
    Chart,
    Figures,
    Network,
    Policies,
    Section,
    SweepChart,
    Table,
    Transcripts,
    Tree,
)
from sandbox.viewer.sweep import sweep_json

__all__ = [
    "addressable",
    "default_sections",
    "is_run_dir",
    "render",
    "run_page",
    "sections_of",
    "unaddressable",
]

TABLE_ROWS = 1000  # rows of a table sent to the page; the whole file is linked
CHART_POINTS = 5000  # points of one trace; longer traces are thinned evenly


def unaddressable(relative: str) -> str | None:
    r"""Why a path cannot be put in the viewer's addresses (its run is listed as corrupt, and never linked), or None:
    not valid UTF-8 (a name that is not is held as lone surrogates, which no URL can carry), or a backslash
    (`server.inside` refuses one).

    >>> unaddressable("runs/a\\b"), unaddressable("ok/run-1"), addressable("bad-\udcff")
    ('its path holds a backslash, which the viewer does not open: rename the folder', None, False)
    """
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        return "its path is not valid UTF-8 (the viewer cannot name it in an address): rename the folder"
    if "\\" in relative:
        return "its path holds a backslash, which the viewer does not open: rename the folder"
    return None


def addressable(relative: str) -> bool:
    """Whether a path can be put in the viewer's addresses (`unaddressable`)."""
    return unaddressable(relative) is None


def is_run_dir(path: Path) -> bool:
    """Whether `path` looks like a run directory (a scenario, a sweep, a status or a summary in it)."""
    return any((path / marker).is_file() for marker in (SCENARIO, SWEEP, STATUS, SUMMARY))


def default_sections(kind: kinds.RunKind | None, path: Path) -> list[Section]:
    """A kind's tables as `Table` sections (the page of a kind without a `view`)."""
    if kind is None:
        return []
    return [
        Table(file, title=name.replace("_", " "))
        for name, file in kind.tables.items()
        if not file.endswith(".jsonl") and (path / file).is_file()
    ]


def sections_of(kind: kinds.RunKind | None, path: Path) -> list[Section]:
    """The run page's sections: the branches of a fork or a run forked, the kind's `view` (or its tables), then the
    figures no section shows, the runs inside, and the transcripts."""
    sections: list[Section] = list(kind.call("view", path)) if kind is not None and kind.has("view") else []
    if not sections:
        sections = default_sections(kind, path)
    if (path / FORK).is_file() or (path / FORKS).is_file():
        sections.insert(0, Branches(steps=kind.steps if kind is not None else None))
    if (path / COSTS).is_file():
        sections += cost_sections()
    if not any(isinstance(s, Figures) for s in sections):
        sections.append(Figures())
    if not any(isinstance(s, Transcripts) for s in sections) and (path / TRANSCRIPTS).is_file():
        sections.append(Transcripts())
    return sections


STEP = "step (a society's epoch, a population's generation)"


def cost_sections() -> list[Section]:
    """Where the run's time and tokens went (`sandbox.core.costs`): tokens and latency by step and role, and the
    table with calls, cache hits and cost."""
    return [
        Chart(
            COSTS,
            x="step",
            y=("input_tokens", "output_tokens"),
            group="role",
            mode="bars",
            title="Tokens by step and role",
            y_title="tokens",
            x_title=STEP,
        ),
        Chart(
            COSTS,
            x="step",
            y=("latency_p50_s", "latency_p95_s"),
            group="role",
            title="Latency of the calls a model answered, by step and role (median, 95th percentile)",
            y_title="seconds",
            x_title=STEP,
        ),
        Table(COSTS, title="Calls, cache hits, tokens, latency and cost by step and role"),
    ]


def _chart(section: Chart, path: Path) -> dict[str, Any] | None:
    file = inside(path, section.file)
    if file is None or not file.is_file():
        return None
    frame = read_table(file)
    for column, value in section.where.items():
        if column in frame.columns:
            frame = frame[frame[column] == value]
    ys = (section.y,) if isinstance(section.y, str) else tuple(section.y)
    ys = tuple(y for y in ys if y in frame.columns)
    if section.x not in frame.columns or not ys or frame.empty:
        return None
    band = section.band if section.band and set(section.band) <= set(frame.columns) and len(ys) == 1 else None
    groups = (
        [(None, frame)]
        if not section.group or section.group not in frame.columns
        else list(frame.groupby(section.group, sort=True))
    )
    traces = []
    for key, rows in groups:
        numeric = [c for c in (*ys, *(band or ())) if pd.api.types.is_numeric_dtype(rows[c])]
        if not numeric:
            continue
        points = rows.groupby(section.x, sort=True)[numeric].mean().reset_index()
        if len(points) > CHART_POINTS:
            points = points.iloc[:: math.ceil(len(points) / CHART_POINTS)]
        for y in ys:
            if y not in numeric:
                continue
            name = y if key is None else (str(key) if len(ys) == 1 else f"{key}: {y}")
            trace = {"name": name, "x": [plain(v) for v in points[section.x]], "y": [plain(v) for v in points[y]]}
            if band:
                trace["low"] = [plain(v) for v in points[band[0]]]
                trace["high"] = [plain(v) for v in points[band[1]]]
            traces.append(trace)
    if not traces:
        return None
    return {
        "type": "chart",
        "title": section.title or f"{', '.join(ys)} by {section.x}",
        "x_title": section.x_title or section.x,
        "y_title": section.y_title or (ys[0] if len(ys) == 1 else ""),
        "mode": section.mode,
        "traces": traces,
        "file": section.file,
    }


def _table(section: Table, path: Path) -> dict[str, Any] | None:
    file = inside(path, section.file)
    if file is None or not file.is_file():
        return None
    try:
        frame = read_table(file)
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        return {"type": "error", "title": section.title or section.file, "text": f"{section.file}: {error}"}
    if section.columns:
        frame = frame[[c for c in section.columns if c in frame.columns]]
    shown = frame.head(TABLE_ROWS)
    return {
        "type": "table",
        "title": section.title or section.file,
        "file": section.file,
        "columns": [str(c) for c in shown.columns],
        "total": len(frame),
        "rows": [[plain(v) for v in row] for row in shown.itertuples(index=False, name=None)],
    }


def _figures(section: Figures, path: Path, link: Callable[[str], str]) -> dict[str, Any] | None:
    root = path.resolve()
    items = []
    for image in sorted(path.glob(section.pattern)):
        relative = image.relative_to(path).as_posix()
        if not image.is_file() or not image.resolve().is_relative_to(root) or not addressable(relative):
            continue
        items.append({"name": relative, "url": link(relative)})
    return {"type": "figures", "title": section.title, "items": items} if items else None


def _cells(section: Cells, path: Path, base: str) -> dict[str, Any] | None:
    table = _table(Table(section.file, title=section.title), path)
    if table is None or table["type"] != "table":
        return table
    column = table["columns"].index(section.column) if section.column in table["columns"] else None
    links = []
    for row in table["rows"]:
        cell = (path / section.under / str(row[column])) if column is not None else None
        ok = cell is not None and is_run_dir(cell) and cell.resolve().is_relative_to(path.resolve())
        ok = ok and addressable(f"{section.under}/{row[column]}")
        links.append(f"{base}/{section.under}/{row[column]}".lstrip("/") if ok else None)
    return {**table, "type": "cells", "links": links}


def _tree(section: Tree, path: Path) -> dict[str, Any] | None:
    file = inside(path, section.file)
    if file is None or not file.is_file():
        return None
    frame = read_table(file)
    if not set(section.path) <= set(frame.columns) or frame.empty:
        return None
    color = section.color if section.color in frame.columns else None
    nodes: dict[str, dict[str, Any]] = {}
    for row in frame.to_dict("records"):
        levels: list[str] = []
        for column in section.path:
            value = "" if pd.isna(row[column]) else str(row[column])
            if section.split and section.split in value:  # a column of several levels: its parts, bare
                levels += [part.strip() for part in value.split(section.split)]
            else:
                levels.append(f"{column} {value}")
        for depth in range(1, len(levels) + 1):
            node = nodes.setdefault(
                "/".join(levels[:depth]),
                {"label": levels[depth - 1], "count": 0, "sum": 0.0, "parent": "/".join(levels[: depth - 1])},
            )
            node["count"] += 1
            number = row.get(color) if color else None
            node["sum"] += float(number) if isinstance(number, int | float) and math.isfinite(number) else 0.0
    return {
        "type": "tree",
        "title": section.title,
        "ids": list(nodes),
        "labels": [n["label"] for n in nodes.values()],
        "parents": [n["parent"] for n in nodes.values()],
        "values": [n["count"] for n in nodes.values()],
        "colors": [n["sum"] / n["count"] for n in nodes.values()] if color else None,
        "color_title": color,
        "file": section.file,
    }


def _inner_runs(path: Path, base: str, linked: set[str]) -> dict[str, Any] | None:
    """The run directories inside this one (a chain's stages, a sweep's cells that no grid links)."""
    found = []
    for depth_one in sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")):
        candidates = (
            [depth_one]
            if is_run_dir(depth_one)
            else sorted(p for p in depth_one.iterdir() if p.is_dir() and is_run_dir(p))
        )
        for inner in candidates:
            relative = f"{base}/{inner.relative_to(path).as_posix()}".lstrip("/")
            if relative not in linked and inner.resolve().is_relative_to(path.resolve()) and addressable(relative):
                found.append(relative)
    return {"type": "runs", "title": "Runs inside", "links": found} if found else None


def render(section: Section, path: Path, *, base: str, link: Callable[[str], str]) -> dict[str, Any] | None:
    """One section as JSON for the browser (None when its file is not there yet)."""
    if isinstance(section, Chart):
        return _chart(section, path)
    if isinstance(section, Table):
        return _table(section, path)
    if isinstance(section, Figures):
        return _figures(section, path, link)
    if isinstance(section, Policies):
        return policies_json(section, path)
    if isinstance(section, Cells):
        return _cells(section, path, base)
    if isinstance(section, Tree):
        return _tree(section, path)
    if isinstance(section, Branches):
        return branches(section, path, base=base, opens=lambda run, relative: is_run_dir(run) and addressable(relative))
    if isinstance(section, SweepChart):
        return sweep_json(section, path)
    if isinstance(section, Network):
        data = section.data(path)
        if data is None:
            return None
        compared = section.fork(path, folder_of(path, base)) if section.fork is not None else None
        if compared is not None:
            data = dataclasses.replace(data, parent=compared[0], differs=compared[1])
        return network_json(data, section.title)
    if isinstance(section, Transcripts):
        file = inside(path, section.file)
        if file is None or not file.is_file():
            return None
        return {"type": "transcripts", "title": section.title, "file": section.file}
    raise TypeError(f"not a viewer section: {section!r}")


def run_page(path: Path, *, base: str, kind: kinds.RunKind | None, link: Callable[[str], str]) -> list[dict[str, Any]]:
    """The run directory `path` (`base`: its path relative to the viewer's root) as a list of rendered sections,
    then the runs inside it. A section that cannot be read shows as an error, never breaks the page."""
    rendered: list[dict[str, Any]] = []
    sections = sections_of(kind, path)
    for section in sections:
        try:
            item = render(section, path, base=base, link=link)
        except Exception as error:
            item = {
                "type": "error",
                "title": getattr(section, "title", "") or type(section).__name__,
                "text": f"{getattr(section, 'file', '')}: {type(error).__name__}: {error}",
            }
        if item is not None:
            rendered.append(item)
    linked = {link for item in rendered if item["type"] == "cells" for link in item["links"] if link}
    inner = _inner_runs(path, base, linked)
    if inner:
        rendered.append(inner)
    return rendered


def data_uri(path: Path) -> str:
    """A file as a `data:` URI (the report's figures)."""
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode()}"


def figure_names(sections: Iterable[dict[str, Any]]) -> list[str]:
    """The images a rendered page shows."""
    return [item["name"] for s in sections if s["type"] == "figures" for item in s["items"]]
