"""The runs under a folder, one row each: kind, status, scenario, start, duration, calls, tokens, headline figures.

A run directory is a folder holding a scenario, a sweep, a status or a summary (`page.is_run_dir`); the walk
does not descend into one (a sweep's cells and a chain's stages are on its page). Each row is read from the few
small files a run keeps (`run.json`, `summary.json`, `scenario.yaml`) and, for calls and tokens, from its
transcript by a byte scan; rows are cached by those files' sizes and times, so a viewer that polls a folder of
thousands of runs reads again only what changed. A fork's row names its parent and the step (`fork`, from its
`fork.json`; None when there is none, or it cannot be read: the run is listed all the same).

Status:
* `running`: a process holds the directory now (`sandbox.core.run_dir.is_held`);
* `complete`: its summary is written;
* `stopped`: a budget cap or Ctrl-C stopped it (`sandbox resume` goes on);
* `failed`: the run raised an error (resumable too);
* `incomplete`: not finished and no process holds it (killed, or marked complete without a summary);
* `corrupt`: a file the row needs cannot be read (not JSON, nested too deeply, a symlink out of the folder) or the
  folder's name cannot be put in an address (not UTF-8, a backslash); the row says which, and the list goes on.
  A row the viewer cannot open has `opens: false`.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sandbox.core import kinds
from sandbox.core.run_dir import (
    SCENARIO,
    STATUS,
    SUMMARY,
    SWEEP,
    TRANSCRIPTS,
    held_pids,
)
from sandbox.core.run_time import last_write, session_seconds
from sandbox.core.steps import FORK
from sandbox.llm.specs import not_an_llm
from sandbox.viewer.page import unaddressable
from sandbox.viewer.transcripts import count_lines, next_newline, whole_lines

__all__ = ["Catalog", "find_runs", "read_row", "shallow"]

SKIP = {"__pycache__", "node_modules", "adapter", "checkpoint", "student_base"}  # never runs; large
MAX_DEPTH = 8
HEADLINE = 4  # headline figures per row, where the kind names none
_TOKENS = re.compile(rb'"(?:input|output)_tokens": ?(\d+)')
_HITS = re.compile(rb'"cache_hit": ?true')
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_FLOW = re.compile(r"[\[\]{}]")
_DASHES = re.compile(r"^[ \t]*((?:-[ \t]+)+)", re.MULTILINE)
_INDENT = re.compile(r"^[ \t]*", re.MULTILINE)
DEEP = 100  # levels of nesting past which a scenario is read by the Python parser, not libyaml's


def shallow(text: str, limit: int = DEEP) -> bool:
    """Whether YAML `text` nests at most about `limit` levels: flow brackets, compact sequences (`- - - x`) and
    indentation, counted roughly (a bracket inside a quoted string counts too: such text only goes to the slower
    parser). libyaml's C parser recurses with no limit, so a file nested 100,000 deep ends the process (a
    segmentation fault, the whole viewer gone); Python's parser stops with a `RecursionError`, which is caught.

    >>> shallow("a: [1, {b: 2}]\\nc:\\n  - - x\\n"), shallow("[" * 500 + "]" * 500), shallow("- " * 500 + "x")
    (True, False, False)
    """
    depth = deepest = 0
    for bracket in _FLOW.findall(text):
        depth = depth + 1 if bracket in "[{" else max(0, depth - 1)
        deepest = max(deepest, depth)
    dashes = max((m.group(1).count("-") for m in _DASHES.finditer(text)), default=0)
    indent = max((len(m.group(0)) for m in _INDENT.finditer(text)), default=0)
    return deepest <= limit and dashes <= limit and indent <= 4 * limit


def _yaml(text: str) -> Any:
    """A scenario's YAML: libyaml's fast parser when the text is shallow (`shallow`), else Python's."""
    return yaml.load(text, Loader=_LOADER if shallow(text) else yaml.SafeLoader)


def find_runs(root: Path) -> list[Path]:
    """The run directories under `root` (itself included when it is one), sorted, not descending into a run."""
    found: list[Path] = []
    base_depth = len(root.parts)
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        names = set(files)
        if names & {SCENARIO, SWEEP, STATUS, SUMMARY}:
            found.append(here)
            dirs.clear()
            continue
        if len(here.parts) - base_depth >= MAX_DEPTH:
            dirs.clear()
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP)
    return sorted(found)


def _inside(root: Path, file: Path) -> Path:
    """`file`, when it does not lead out of `root` (a symlink out is refused: its contents are never shown). The
    walk follows no link to a directory, so only `file` itself can be one (`resolve` costs: it is asked then)."""
    if file.is_symlink() and not file.resolve().is_relative_to(root.resolve()):
        raise ValueError("a symlink out of the runs folder")
    return file


def _json(root: Path, path: Path) -> Any:
    return json.loads(_inside(root, path).read_text(encoding="utf-8"))


class _Stats:
    """Calls, cache hits and tokens of transcripts, by a byte scan (no JSON parse) a block at a time, read on from
    where the last scan stopped when a transcript grows (a run in progress); a file with no newline is scanned
    once."""

    def __init__(self) -> None:
        self._seen: dict[Path, tuple[int, int, int, dict[str, int]]] = {}  # file -> (inode, offset, scanned, counts)
        self._lock = threading.Lock()

    def of(self, file: Path) -> dict[str, int]:
        with self._lock, file.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            zero = {"calls": 0, "cache_hits": 0, "tokens": 0}
            inode, offset, scanned, counts = self._seen.get(file, (stat.st_ino, 0, 0, zero))
            if inode != stat.st_ino or stat.st_size < offset:
                inode, offset, scanned, counts = stat.st_ino, 0, 0, zero
            counts = dict(counts)
            end = next_newline(handle, max(offset, scanned), stat.st_size)
            if end > max(offset, scanned):
                for _, data in whole_lines(handle, offset, end):
                    counts["calls"] += count_lines(data)
                    counts["cache_hits"] += len(_HITS.findall(data))
                    counts["tokens"] += sum(int(n) for n in _TOKENS.findall(data))
                offset = end
            self._seen[file] = (inode, offset, stat.st_size, counts)  # past the last newline: none until size
            return dict(counts)


_STATS = _Stats()


def _headline(summary: dict[str, Any], kind: kinds.RunKind | None) -> dict[str, Any]:
    keys = list(kind.headline) if kind is not None else []
    if not keys:
        keys = [
            k
            for k, v in summary.items()
            if k not in ("schema_version", "seed", "calls") and isinstance(v, int | float) and not isinstance(v, bool)
        ][:HEADLINE]
    found = {}
    for key in keys:  # a dotted key reads into the summary's mappings (offered_share_by_norm.fair.mean)
        value: Any = summary
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, int | float | str) and not isinstance(value, bool):
            found[key] = value
    return found


def _fork(root: Path, path: Path) -> dict[str, Any] | None:
    """A fork's mark from its `fork.json`: its parent's name, the step and what a step is (None: no fork, or a
    record that cannot be read)."""
    try:
        record = _json(root, path / FORK) if (path / FORK).is_file() else None
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    parent = record.get("parent_name") or Path(str(record.get("parent", ""))).name
    at = record.get("at")
    return {"parent": str(parent), "at": at if isinstance(at, int) else None, "unit": str(record.get("unit") or "step")}


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def read_row(path: Path, root: Path, held: dict[int, str]) -> dict[str, Any]:
    """One run directory's row (never raises: a file that cannot be read makes the row `corrupt`, naming it).
    `held`: the inodes a process holds a lock on, with its process id (`sandbox.core.run_dir.held_pids`), read once
    per listing."""
    relative = path.relative_to(root).as_posix() if path != root else "."
    row: dict[str, Any] = {
        "path": relative,
        "kind": None,
        "status": "corrupt",
        "problem": None,
        "scenario": None,
        "started": None,
        "duration": None,
        "calls": None,
        "cache_hits": None,
        "tokens": None,
        "headline": {},
        "fork": None,
        "opens": True,
        "not_an_llm": None,
    }
    problem = unaddressable(relative)
    if problem is not None:
        row["path"] = relative.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        row["problem"], row["opens"] = problem, False
        return row
    where = STATUS
    try:
        status = _json(root, path / STATUS) if (path / STATUS).is_file() else {}
        if not isinstance(status, dict):
            raise ValueError("not a JSON object")
        where = SUMMARY
        summary = _json(root, path / SUMMARY) if (path / SUMMARY).is_file() else None
        if summary is not None and not isinstance(summary, dict):
            raise ValueError("not a JSON object")
        named = summary.get("kind") if summary and isinstance(summary.get("kind"), str) else None
        kind = kinds.kinds().get(named) if named else None  # a kind not installed here keeps its name
        where = SCENARIO
        if (path / SCENARIO).is_file():
            data = _yaml(_inside(root, path / SCENARIO).read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a mapping")
            kind = kind or (None if named else kinds.kind_of_data(data))
            row["scenario"] = (summary or {}).get("scenario") or data.get("name")
            row["not_an_llm"] = not_an_llm(data.get("models")) or None  # roles a `rules:` function answered
        elif (path / SWEEP).is_file():
            _inside(root, path / SWEEP)
            kind = kind or (None if named else kinds.kind_of_dir(path))
            row["scenario"] = (summary or {}).get("scenario") or path.name
        elif summary is None:
            raise ValueError(f"missing: no {SCENARIO} or {SWEEP}")
        else:
            row["scenario"] = summary.get("scenario")
        row["scenario"] = None if row["scenario"] is None else str(row["scenario"])
        row["kind"] = named or (kind.name if kind else None)
        where = TRANSCRIPTS
        if (path / TRANSCRIPTS).is_file():
            row.update(_STATS.of(_inside(root, path / TRANSCRIPTS)))
        elif summary and isinstance(summary.get("calls"), int):
            row["calls"] = summary["calls"]
        row["headline"] = _headline(summary or {}, kind)
        row["fork"] = _fork(root, path)
        where = "the directory"
        stat = path.stat()
    except Exception as error:
        row["problem"] = f"{where}: {type(error).__name__}: {error}"[:300]
        return row
    row["started"] = _seconds(status.get("created")) or stat.st_mtime
    created, updated = _seconds(status.get("created")), _seconds(status.get("updated"))
    worked = session_seconds(status, last=last_write(path))
    # in progress: the session that holds the run wrote its status (a resume that has not yet is not counted on
    # from the last session's start), and the page's polls count on from `live`
    live = (
        stat.st_ino in held
        and status.get("status") == "running"
        and held[stat.st_ino] == str(status.get("session_pid"))
    )
    if live and worked is not None:
        row["live"] = {"before": status["active_before"], "since": status["session_started"]}
        row["duration"] = session_seconds(status, now=time.time())
    elif worked is not None:
        row["duration"] = worked
    elif _seconds(status.get("seconds")) is not None:  # a run from before the sessions were kept
        row["duration"] = _seconds(status["seconds"])
    elif created is not None and updated is not None:
        row["duration"] = updated - created
    recorded = status.get("status") or ("complete" if summary is not None else "running")
    if stat.st_ino in held:
        row["status"] = "running"
    elif recorded == "complete":
        row["status"] = "complete" if summary is not None else "incomplete"
    elif recorded in ("stopped", "interrupted"):
        row["status"] = "stopped"
    elif recorded == "failed":
        row["status"] = "failed"
        row["problem"] = str(status.get("error") or status.get("reason") or "")[:300] or None
    else:  # running, but no process holds it: killed
        row["status"] = "incomplete"
    return row


def _signature(path: Path) -> tuple[Any, ...]:
    """What a row depends on: the sizes and times of the files it reads."""
    parts: list[Any] = []
    for name in (STATUS, SUMMARY, SCENARIO, SWEEP, TRANSCRIPTS, FORK):
        try:
            stat = (path / name).stat()
            parts.append((stat.st_size, stat.st_mtime_ns))
        except OSError:
            parts.append(None)
    return tuple(parts)


@dataclass
class Catalog:
    """The runs under `root`, cached between calls (a row is read again when its files change)."""

    root: Path

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        self._rows: dict[Path, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def rows(self) -> list[dict[str, Any]]:
        """Every run's row, sorted by path."""
        held = held_pids()
        found = find_runs(self.root) if self.root.is_dir() else []
        rows = []
        with self._lock:
            for path in found:
                signature = _signature(path)
                cached = self._rows.get(path)
                running = cached is not None and cached[1]["status"] == "running"
                if cached is None or cached[0] != signature or running != _held(path, held):
                    cached = (signature, read_row(path, self.root, held))
                    self._rows[path] = cached
                live = cached[1].get("live")
                if live:  # a run in progress: its working time counts on
                    cached[1]["duration"] = round(live["before"] + max(0.0, time.time() - live["since"]), 3)
                rows.append(cached[1])
        return rows

    def row(self, path: Path) -> dict[str, Any]:
        """The row of the run directory `path` (inside `root`), read now."""
        return read_row(path, self.root, held_pids())


def _held(path: Path, held: dict[int, str]) -> bool:
    try:
        return path.stat().st_ino in held
    except OSError:
        return False
