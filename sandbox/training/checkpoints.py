"""A training run's progress on disk: metrics appended row by row, whole checkpoints, the run's status.

Shared by every training run (moral fine-tuning, distillation). A checkpoint
is replaced at once (written beside the old one, then swapped), so a kill
leaves one whole checkpoint; `keep_rows` drops the rows after it, which a
resumed run plays again.
"""

from __future__ import annotations

import csv
import json
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sandbox.base.errors import RunFailedError
from sandbox.core.run_dir import RunDirectory, atomic_write_text

__all__ = ["CHECKPOINT", "MetricsFile", "keep_rows", "recover_checkpoint", "running", "save_checkpoint"]

CHECKPOINT = "checkpoint"


class MetricsFile:
    """`metrics.csv` opened for appending: each row written and flushed at once (a header on an empty file).

    A file that has a header keeps it: a run resumed by a newer sandbox, whose rows carry a column the
    file lacks, writes the file's columns only (and leaves a column it no longer has empty)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writer: csv.DictWriter[str] | None = None

    def __enter__(self) -> MetricsFile:
        header = ""
        if self.path.is_file():
            with self.path.open(newline="", encoding="utf-8") as existing:
                header = existing.readline()
        self.columns = next(csv.reader([header]), None) if header.endswith("\n") else None
        self.handle = self.path.open("a", newline="", encoding="utf-8")
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()

    def append(self, row: dict[str, Any]) -> None:
        if self.writer is None:
            self.writer = csv.DictWriter(self.handle, fieldnames=self.columns or list(row), extrasaction="ignore")
            if self.handle.tell() == 0:
                self.writer.writeheader()
        self.writer.writerow(row)
        self.handle.flush()


def keep_rows(path: Path, episodes: int) -> None:
    """Keep the header and the rows of episodes before `episodes` (a killed run may leave a cut line)."""
    if not path.is_file():
        return
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = lines[:1] + [line for line in lines[1:] if line.endswith("\n") and _episode(line) < episodes]
    atomic_write_text(path, "".join(kept) if len(kept) > 1 else "")


def _episode(line: str) -> int:
    try:
        return int(line.split(",", 1)[0])
    except ValueError:
        return 1 << 62


def save_checkpoint(run_dir: RunDirectory, trainer: Any, episodes: int, extra: dict[str, Any] | None = None) -> None:
    """Replace the checkpoint at once: write beside it, then swap (a kill leaves one whole checkpoint).

    `extra` names other trainers saved inside it (`checkpoint/NAME`)."""
    final, fresh, old = run_dir / CHECKPOINT, run_dir / f"{CHECKPOINT}.new", run_dir / f"{CHECKPOINT}.old"
    shutil.rmtree(fresh, ignore_errors=True)
    trainer.save(fresh)
    for name, other in (extra or {}).items():  # e.g. a learning opponent's own trainer
        other.save(fresh / name)
    (fresh / "state.json").write_text(json.dumps({"episodes": episodes, "time": time.time()}))
    if final.exists():
        final.replace(old)
    fresh.replace(final)
    shutil.rmtree(old, ignore_errors=True)


def recover_checkpoint(run_dir: RunDirectory) -> None:
    """A kill between the two renames of `_checkpoint` leaves only `checkpoint.old` or `.new`."""
    final = run_dir / CHECKPOINT
    for spare in (run_dir / f"{CHECKPOINT}.new", run_dir / f"{CHECKPOINT}.old"):
        if not final.exists() and (spare / "state.json").is_file():
            spare.replace(final)
        shutil.rmtree(spare, ignore_errors=True)


@contextmanager
def running(run_dir: RunDirectory, start: int) -> Iterator[None]:
    """Mark the run running; on an interrupt or a failure, say so in `run.json` (the run stays resumable)."""
    run_dir.write_status("running", started=time.time(), start_episode=start)
    try:
        yield
    except KeyboardInterrupt:
        run_dir.write_status("interrupted")
        raise
    except Exception as error:
        run_dir.write_status("failed", error=repr(error))
        raise RunFailedError(
            f"training failed after episode {start}: {error!r}; resume it with `sandbox resume {run_dir.path}`"
        ) from error
