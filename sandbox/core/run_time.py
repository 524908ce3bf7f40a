"""A run's working time: each session (a run, then each `sandbox resume`) from when it took its run directory to
its last status, kept in `run.json` by `RunDirectory.write_status` (`active_before`, `session_started`,
`session_pid`, `active_seconds`) and read back by the viewer. A killed session counts up to the last file the run
wrote; the time a run lay killed is not counted.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["last_write", "session_seconds", "worked_before"]


# The files a run writes as it goes (its transcript with every call, its store, its tables), whose times say when
# it last worked; not a report, a tracking record or a file someone put beside it.
_WORK_SUFFIXES = (".jsonl", ".csv", ".sqlite", ".sqlite-wal", ".json")
_NOT_WORK = {"tracking.json"}


def last_write(path: Path | str) -> float | None:
    """The latest modification time of the files a run writes directly in `path` (a transcript grows with every
    call; `report.html` or a file put beside the run is not its work), or None when it holds none."""
    try:
        with os.scandir(path) as entries:
            times = [
                entry.stat().st_mtime
                for entry in entries
                if entry.is_file(follow_symlinks=False)
                and entry.name.endswith(_WORK_SUFFIXES)
                and not entry.name.startswith(".")
                and entry.name not in _NOT_WORK
            ]
    except OSError:
        return None
    return max(times, default=None)


def session_seconds(status: dict[str, Any], *, now: float | None = None, last: float | None = None) -> float | None:
    """A run's working time, from its status (`RunDirectory.write_status`): the sessions before this one, plus
    this one up to `now` (a session in progress), else up to its last status, or, for a session that was killed
    (status still `running`), up to `last` (the directory's last write). None for a run without these fields
    (written before they were kept).

    >>> status = {"status": "running", "active_before": 60.0, "session_started": 1000.0, "updated": 1005.0}
    >>> session_seconds(status, now=1030.0), session_seconds(status, last=1020.0), session_seconds({})
    (90.0, 80.0, None)
    """
    started, before = status.get("session_started"), status.get("active_before")
    if not isinstance(started, int | float) or not isinstance(before, int | float):
        return None
    done = status.get("active_seconds")
    if now is None and status.get("status") != "running" and isinstance(done, int | float):
        return float(done)  # a session that ended: its own count (a later write without a hold changes nothing)
    written = status.get("updated")
    updated = float(written) if isinstance(written, int | float) else float(started)
    if now is not None:
        end = now
    elif status.get("status") == "running":
        end = max(updated, last or updated)
    else:
        end = updated
    return round(before + max(0.0, end - started), 3)


def worked_before(status: dict[str, Any], last: float | None) -> float:
    """The working time of a run's sessions before this one, from its status: kept by `write_status`, else (a run
    from before it kept them) its own `seconds`, else the time between its start and its last status."""
    kept = session_seconds(status, last=last)
    if kept is not None:
        return kept
    seconds, created, updated = status.get("seconds"), status.get("created"), status.get("updated")
    if isinstance(seconds, int | float) and not isinstance(seconds, bool):
        return float(seconds)
    if isinstance(created, int | float) and isinstance(updated, int | float):
        return max(0.0, float(updated) - float(created))
    return 0.0
