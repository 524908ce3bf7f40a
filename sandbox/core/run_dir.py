"""The run directory: where a run's scenario, store, transcripts, tables and plots live.

Layout:
    scenario.yaml       the resolved scenario (overrides applied); resume reads it
    run.json            status (running, failed, complete), versions, timings (`active_seconds`: the working
                        time of every session, `session_seconds`)
    store.sqlite        LangGraph checkpoints, then the episodes and metrics tables
    cache.sqlite        the LLM response cache of this run
    transcripts.jsonl   one record per LLM call
    agents.csv          the population of each run (agent, norm, manner)
    episodes.csv        one row per episode
    metrics.csv         one row per agent, epoch and run
    summary.json        headline figures with 95% confidence intervals
    policies.jsonl      SCAI: every policy with its run, epoch, evidence and diff (a search's candidates too)
    epochs.csv          SCAI: one row per run, epoch and group (users, assistant)
    epoch_summary.csv   SCAI: per epoch and group, means and 95% CIs across runs
    final_policies.csv  SCAI: each run's final policy and its norm bin
    final_proposals.csv SCAI: the final policy's proposals after the last epoch
    evaluation.csv      SCAI: `sandbox evaluate` proposals under new conditions
    *.png               plots
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
import fcntl
import functools
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from sandbox.base.errors import UsageError
from sandbox.base.files import read_json
from sandbox.core.run_time import last_write, worked_before

SCENARIO = "scenario.yaml"
SWEEP = "sweep.yaml"  # a sweep directory's (`sandbox.sweep.run`)
STATUS = "run.json"
STORE = "store.sqlite"
CACHE = "cache.sqlite"
TRANSCRIPTS = "transcripts.jsonl"
AGENTS = "agents.csv"
EPISODES = "episodes.csv"
METRICS = "metrics.csv"
PAYOFFS = "payoffs.csv"
SUMMARY = "summary.json"
POLICIES = "policies.jsonl"
EPOCHS = "epochs.csv"
EPOCH_SUMMARY = "epoch_summary.csv"
FINAL_POLICIES = "final_policies.csv"
FINAL_PROPOSALS = "final_proposals.csv"
EVALUATION = "evaluation.csv"
GUIDED = "guided"  # a society's inline solve of its guided members' game: a `sandbox solve` run inside the run
# The temporary file of a new run directory's first file (`atomic_write_text`): all a start killed at once leaves.
_START_TMP = re.compile(rf"\.({re.escape(SCENARIO)}|{re.escape(SWEEP)})\.\d+\.tmp")

# Run directories this process holds: resolved path -> (open lock file descriptor, depth of nested holds).
_HELD: dict[Path, tuple[int, int]] = {}
_HELD_GUARD = threading.Lock()
# The directories the current context (a thread, an asyncio task and what it awaits) holds: only its own holds nest.
_OWNED: contextvars.ContextVar[frozenset[Path]] = contextvars.ContextVar("sandbox_held_dirs", default=frozenset())
# The session of each run directory this process holds: when the hold was taken, and the directory's last write
# before it (a killed session's end, as near as the files tell). `RunDirectory.write_status` keeps the time.
_SESSIONS: dict[Path, tuple[float, float | None]] = {}


def flock_holders() -> dict[str, str]:
    """Every file that a `flock` is held on, as "MAJOR:MINOR:INODE" -> the holder's process id, from /proc/locks
    (Linux; empty elsewhere). Compare with `held_inodes` where the device may differ (btrfs reports a
    subvolume's own device to `stat`, not the one /proc/locks prints)."""
    holders: dict[str, str] = {}
    try:
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if "FLOCK" in fields and "->" not in fields:  # "1: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF"
                at = fields.index("FLOCK")
                holders.setdefault(fields[at + 4], fields[at + 3])
    except OSError:
        pass
    return holders


def inode_key(stat: os.stat_result) -> str:
    """A file's "MAJOR:MINOR:INODE", as /proc/locks names it."""
    return f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"


def _holder(fd: int) -> str:
    """Who holds the flock on `fd`'s file: "process PID (its command line)" from /proc/locks on Linux."""
    pid = flock_holders().get(inode_key(os.fstat(fd)))
    if pid is None:
        return "another process"
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        command = ""
    return f"process {pid}" + (f" ({command})" if command else "")


def held_inodes(holders: dict[str, str] | None = None) -> set[int]:
    """The inode numbers of the files a `flock` is held on (`flock_holders`, device left out)."""
    return set(held_pids(holders))


def is_held(path: Path | str, held: set[int] | None = None) -> bool:
    """Whether a process holds the run directory `path` (`hold`) now: a run in progress (Linux; False elsewhere).
    `held`: `held_inodes()` read once for many directories."""
    try:
        inode = os.stat(path).st_ino
    except OSError:
        return False
    return inode in (held_inodes() if held is None else held)


def held_pids(holders: dict[str, str] | None = None) -> dict[int, str]:
    """The inode numbers of the files a `flock` is held on, each with its holder's process id."""
    found: dict[int, str] = {}
    for key, pid in (flock_holders() if holders is None else holders).items():
        inode = key.rsplit(":", 1)[-1]
        if inode.isdigit():
            found[int(inode)] = pid
    return found


@contextmanager
def hold(path: Path | str, *, create: bool = True) -> Iterator[None]:
    """Hold the run directory `path` for this process while the block runs; make it if it does not exist
    (`create`; else `UsageError` when it is not a run directory).

    One process at a time writes a run directory: a second one (another
    `sandbox resume DIR`, a sweep's other worker) gets `UsageError` (exit 2)
    naming the process that holds it. The hold is an advisory `flock` on the
    directory itself (no file is written), which the kernel drops when the
    holder exits, so a killed process leaves nothing that blocks the next one.
    Holds nest within one context (a resume inside a command that holds the
    directory already, `asyncio.run` included); another thread or task of the
    same process that asks for a held directory gets `UsageError` too.
    """
    key = Path(path).resolve()
    with _HELD_GUARD:
        if key in _HELD:
            if key not in _OWNED.get():
                raise UsageError(f"{path} is in use by another thread or task of this process")
            fd, depth = _HELD[key]
            _HELD[key] = (fd, depth + 1)
        else:
            if not create and not any((key / marker).is_file() for marker in (SCENARIO, SWEEP)):
                killed = " (a run killed before it started: start it again with --out)" if start_leftovers(key) else ""
                raise UsageError(f"{path} is not a run directory (no {SCENARIO}){killed}")
            key.mkdir(parents=True, exist_ok=True)
            fd = os.open(key, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                busy = error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK)
                holder = _holder(fd) if busy else ""
                os.close(fd)
                if busy:
                    raise UsageError(f"{path} is in use by {holder}; wait for it to finish, or stop it") from None
                raise UsageError(
                    f"{path}: cannot hold the directory ({error.strerror}); its filesystem may not support flock"
                ) from None
            _HELD[key] = (fd, 1)
            _SESSIONS[key] = (time.time(), last_write(key))
    token = _OWNED.set(_OWNED.get() | {key})
    try:
        yield
    finally:
        _OWNED.reset(token)
        with _HELD_GUARD:
            fd, depth = _HELD[key]
            if depth > 1:
                _HELD[key] = (fd, depth - 1)
            else:
                del _HELD[key]
                _SESSIONS.pop(key, None)
                os.close(fd)  # drops the flock


F = TypeVar("F", bound=Callable[..., Any])


def holding(fn: F) -> F:
    """Run `fn` (sync or async; its first argument an existing run directory's path) holding that directory
    (`hold`; `UsageError` when it is not a run directory)."""
    if asyncio.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def held_async(path: Path | str, *args: Any, **kwargs: Any) -> Any:
            with hold(path, create=False):
                return await fn(path, *args, **kwargs)

        return held_async  # type: ignore[return-value]

    @functools.wraps(fn)
    def held(path: Path | str, *args: Any, **kwargs: Any) -> Any:
        with hold(path, create=False):
            return fn(path, *args, **kwargs)

    return held  # type: ignore[return-value]


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file, so a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def start_leftovers(path: Path) -> list[Path] | None:
    """What a new run killed before it started left in the directory `path`: the temporary files of its first file
    (`atomic_write_text`'s `.scenario.yaml.PID.tmp`, a sweep's `.sweep.yaml.PID.tmp`); None when `path` holds
    anything else (or is a file)."""
    if not path.is_dir():
        return None if path.exists() else []
    found = list(path.iterdir())
    return found if all(_START_TMP.fullmatch(entry.name) and entry.is_file() for entry in found) else None


def clear_start(path: Path) -> None:
    """Remove what a new run killed before it started left in `path` (`start_leftovers`); call it holding `path`,
    so that no process is writing them."""
    for leftover in start_leftovers(path) or []:
        leftover.unlink(missing_ok=True)


def default_out(scenario: Any, root: Path | str = "runs") -> Path:
    """`runs/<scenario name>-<timestamp>` (any scenario with a `name`)."""
    return Path(root) / f"{scenario.name}-{time.strftime('%Y%m%d-%H%M%S')}"


@dataclass(frozen=True)
class RunDirectory:
    """A run directory on disk."""

    path: Path

    def __truediv__(self, name: str) -> Path:
        return self.path / name

    @classmethod
    def check_new(cls, path: Path) -> None:
        """Raise `UsageError` when `path` holds anything: a new run never writes over files. A run killed before
        it started (its scenario's temporary file alone: `start_leftovers`) counts as empty."""
        if start_leftovers(path) is None:
            raise UsageError(f"{path} already exists and is not empty; resume it with `sandbox resume {path}`")

    @classmethod
    def create(cls, path: Path, scenario: Any) -> RunDirectory:
        """Make the directory (held: `hold`) and write the resolved scenario and a `running` status; the leftovers
        of a start that was killed go first."""
        cls.check_new(path)
        clear_start(path)
        path.mkdir(parents=True, exist_ok=True)
        run_dir = cls(path)
        atomic_write_text(path / SCENARIO, yaml.safe_dump(scenario.model_dump(mode="json"), sort_keys=False))
        run_dir.write_status("running", created=time.time())
        return run_dir

    @classmethod
    def open(cls, path: Path | str) -> RunDirectory:
        """Open an existing run directory; `UsageError` when it is not one."""
        path = Path(path)
        if not (path / SCENARIO).is_file():
            raise UsageError(f"{path} is not a run directory (no {SCENARIO})")
        return cls(path)

    def status(self) -> dict[str, Any]:
        try:
            return read_json(self.path / STATUS)
        except UsageError:  # missing or unreadable: no status yet
            return {}

    def write_status(self, status: str, **fields: Any) -> None:
        from sandbox import __version__

        old = self.status()
        now = time.time()
        data = {**old, **fields, "status": status, "version": __version__, "updated": now}
        session = _SESSIONS.get(self.path.resolve())
        if session is not None:  # the working time: earlier sessions (a killed one up to its last write), then this
            started, last = session
            if old.get("session_started") != started:
                data["active_before"] = worked_before(old, last)
                data["session_started"] = started
            data["session_pid"] = os.getpid()
            data["active_seconds"] = round(data["active_before"] + now - started, 3)
        atomic_write_text(self.path / STATUS, json.dumps(data, indent=2))
        if status == "complete":
            run_finished(self.path)


TRACKER = "sandbox.viewer.tracking:track_finished"  # logs a finished run to MLflow (`tracking:`); imported on use
TRACKED = ("tracking.json",)  # a run directory whose MLflow run exists


def _asks_tracking(path: Path) -> bool:
    """Whether the run directory `path`, or one of the three above it, asks to be tracked (a top-level `tracking:`
    in its scenario or sweep file, or an MLflow run made already): a few small reads, no import."""
    for where in [path, *list(path.resolve().parents)[:3]]:
        if any((where / name).is_file() for name in TRACKED):
            return True
        for name in (SCENARIO, SWEEP):
            try:
                if any(
                    line.startswith("tracking:") for line in (where / name).read_text(encoding="utf-8").splitlines()
                ):
                    return True
            except (OSError, UnicodeDecodeError):
                continue
    return False


def run_finished(path: Path | str) -> None:
    """A run directory's summary or complete status was written: once both are (a sweep keeps no status), log it
    to MLflow when its scenario asks (`sandbox.viewer.tracking`). A store that cannot be reached is a warning: the
    run stays whole, and `sandbox track DIR` logs it later."""
    path = Path(path)
    if not (path / SUMMARY).is_file() or RunDirectory(path).status().get("status", "complete") != "complete":
        return
    if not _asks_tracking(path):
        return
    import importlib
    import warnings

    module, _, name = TRACKER.partition(":")
    try:
        getattr(importlib.import_module(module), name)(path)
    except Exception as error:
        warnings.warn(
            f"{path}: not logged to MLflow ({type(error).__name__}: {error}); log it with `sandbox track {path}`",
            stacklevel=2,
        )


def run_status(path: Path | str) -> str:
    """new, complete (its summary written), incomplete (marked complete without a summary), or the status its
    run.json records (running, stopped, failed, interrupted)."""
    path = Path(path)
    if not (path / SCENARIO).is_file():
        return "new"
    status = RunDirectory(path).status().get("status", "running")
    if status == "complete":
        return "complete" if (path / SUMMARY).is_file() else "incomplete"
    return status
