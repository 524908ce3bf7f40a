"""The runs under a folder, one row each: kind, status, scenario, start, duration, calls, tokens, headline figures.

A run directory is a folder holding a scenario, a sweep, a status or a summary (`page.is_run_dir`); the walk
does not descend into one (a sweep's cells and a chain's stages are on its page). Each row is read from the few
small files a run keeps (`run.json`, `summary.json`, `scenario.yaml`) and, for calls and tokens, from its
transcript by a byte scan; rows are cached by those files' sizes and times, so a viewer that polls a folder of
thousands of runs reads again only what changed.

Status:
* `running`: a process holds the directory now (`sandbox.run_dir.is_held`);
* `complete`: its summary is written;
* `stopped`: a budget cap or Ctrl-C stopped it (`sandbox resume` goes on);
* `failed`: the run raised an error (resumable too);
* `incomplete`: not finished and no process holds it (killed, or marked complete without a summary);
* `corrupt`: a file the row needs cannot be read; the row says which, and the list goes on.
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sandbox import kinds
from sandbox.run_dir import SCENARIO, STATUS, SUMMARY, SWEEP, TRANSCRIPTS, flock_holders, inode_key

__all__ = ["Catalog", "find_runs", "read_row"]

SKIP = {"__pycache__", "node_modules", "adapter", "checkpoint", "student_base"}  # never runs; large
MAX_DEPTH = 8
HEADLINE = 4  # headline figures per row, where the kind names none
_TOKENS = re.compile(rb'"(?:input|output)_tokens": (\d+)')
_HITS = re.compile(rb'"cache_hit": true')
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _stats(path: Path) -> dict[str, int]:
    """Calls, cache hits and tokens of a transcript, by a byte scan (no JSON parse)."""
    data = path.read_bytes()
    return {"calls": data.count(b"\n"), "cache_hits": len(_HITS.findall(data)),
            "tokens": sum(int(n) for n in _TOKENS.findall(data))}  # fmt: skip


def _headline(summary: dict[str, Any], kind: kinds.RunKind | None) -> dict[str, Any]:
    keys = list(kind.headline) if kind is not None else []
    if not keys:
        keys = [k for k, v in summary.items() if k not in ("schema_version", "seed", "calls")
                and isinstance(v, int | float) and not isinstance(v, bool)][:HEADLINE]  # fmt: skip
    found = {}
    for key in keys:  # a dotted key reads into the summary's mappings (offered_share_by_norm.fair.mean)
        value: Any = summary
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, int | float | str) and not isinstance(value, bool):
            found[key] = value
    return found


def read_row(path: Path, root: Path, holders: dict[str, str]) -> dict[str, Any]:
    """One run directory's row (never raises: a file that cannot be read makes the row `corrupt`, naming it)."""
    relative = path.relative_to(root).as_posix() if path != root else "."
    row: dict[str, Any] = {"path": relative, "kind": None, "status": "corrupt", "problem": None, "scenario": None,
                           "started": None, "duration": None, "calls": None, "cache_hits": None, "tokens": None,
                           "headline": {}}  # fmt: skip
    where = STATUS
    try:
        status = _json(path / STATUS) if (path / STATUS).is_file() else {}
        where = SUMMARY
        summary = _json(path / SUMMARY) if (path / SUMMARY).is_file() else None
        if summary is not None and not isinstance(summary, dict):
            raise ValueError("not a JSON object")
        named = summary.get("kind") if summary and isinstance(summary.get("kind"), str) else None
        kind = kinds.kinds().get(named) if named else None  # a kind not installed here keeps its name
        where = SCENARIO
        if (path / SCENARIO).is_file():
            data = yaml.load((path / SCENARIO).read_text(encoding="utf-8"), Loader=_LOADER)
            if not isinstance(data, dict):
                raise ValueError("not a mapping")
            kind = kind or (None if named else kinds.kind_of_data(data))
            row["scenario"] = (summary or {}).get("scenario") or data.get("name")
        elif (path / SWEEP).is_file():
            kind = kind or (None if named else kinds.kind_of_dir(path))
            row["scenario"] = (summary or {}).get("scenario") or path.name
        elif summary is None:
            raise ValueError(f"missing: no {SCENARIO} or {SWEEP}")
        else:
            row["scenario"] = summary.get("scenario")
        row["kind"] = named or (kind.name if kind else None)
        where = TRANSCRIPTS
        if (path / TRANSCRIPTS).is_file():
            row.update(_stats(path / TRANSCRIPTS))
        elif summary and isinstance(summary.get("calls"), int):
            row["calls"] = summary["calls"]
        row["headline"] = _headline(summary or {}, kind)
    except Exception as error:  # noqa: BLE001 - any unreadable file: the row says so, the list goes on
        row["problem"] = f"{where}: {type(error).__name__}: {error}"[:300]
        return row
    row["started"] = status.get("created") or path.stat().st_mtime
    if isinstance(status.get("seconds"), int | float):
        row["duration"] = status["seconds"]
    elif status.get("updated") and status.get("created"):
        row["duration"] = status["updated"] - status["created"]
    held = inode_key(path.stat()) in holders
    recorded = status.get("status") or ("complete" if summary is not None else "running")
    if held:
        row["status"] = "running"
    elif recorded == "complete":
        row["status"] = "complete" if summary is not None else "incomplete"
    elif recorded in ("stopped", "interrupted"):
        row["status"] = "stopped"
    elif recorded == "failed":
        row["status"] = "failed"
        row["problem"] = status.get("error")
    else:  # running, but no process holds it: killed
        row["status"] = "incomplete"
    return row


def _signature(path: Path) -> tuple[Any, ...]:
    """What a row depends on: the sizes and times of the files it reads."""
    parts: list[Any] = []
    for name in (STATUS, SUMMARY, SCENARIO, SWEEP, TRANSCRIPTS):
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
        holders = flock_holders()
        found = find_runs(self.root) if self.root.is_dir() else []
        rows = []
        with self._lock:
            for path in found:
                signature = _signature(path)
                cached = self._rows.get(path)
                if cached is None or cached[0] != signature or cached[1]["status"] == "running":
                    cached = (signature, read_row(path, self.root, holders))
                    self._rows[path] = cached
                elif cached[1]["status"] != "corrupt":  # a run may have stopped or started since: its hold
                    row = read_row(path, self.root, holders) if _held_changed(path, cached[1], holders) else None
                    if row is not None:
                        cached = (signature, row)
                        self._rows[path] = cached
                rows.append(cached[1])
        return rows

    def row(self, path: Path) -> dict[str, Any]:
        """The row of the run directory `path` (inside `root`), read now."""
        return read_row(path, self.root, flock_holders())


def _held_changed(path: Path, row: dict[str, Any], holders: dict[str, str]) -> bool:
    try:
        return (inode_key(path.stat()) in holders) != (row["status"] == "running")
    except OSError:
        return True
