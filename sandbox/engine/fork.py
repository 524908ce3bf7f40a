"""Fork a run at a step: a new run directory whose steps up to the fork are the parent's, which then runs on with
the changes (`sandbox fork RUN --at STEP --set FIELD=VALUE`, `sandbox.fork`).

How (for every kind that names its `Steps`, `sandbox.core.steps`):

1. The checks, before anything is written: the parent is a run of a kind with steps, from this engine (a store
   with checkpoints), held by no process; the step is one every thread of it has reached; each change is a field of
   the scenario that the kind can change at that step, or a state edit it names; the changed scenario validates.
   Each failure is `UsageError` (exit 2) naming the cause.
2. The fork's directory: the changed scenario; the parent's store, response cache, inline solve and tables, copied;
   in the store every thread is cut back to its checkpoint at the step (LangGraph's checkpoints after it and the
   step's pending writes deleted), the state edits and a new number of steps applied there with LangGraph's
   `update_state` (as the node that wrote that checkpoint, so the graph routes on as it would have); the tables
   whose sizes the checkpoint records cut back to them; the transcript keeps the parent's calls of the steps
   before; `fork.json` records the parent, the step and the changes, and the parent's `forks.jsonl` the fork.
3. The fork runs on as a resumed run does, from the step. Its calls come from the copied response cache when the
   parent made them (a fork without a change makes no model call), and from the model otherwise.

A fork at step 0 whose changes include a field the run reads when it starts (the population's members, the
network) is a new run of the changed scenario with the parent's cache: no step is the parent's.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
import warnings
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

import yaml

from sandbox.base.sync import run_sync
from sandbox.core import kinds
from sandbox.core import run_dir as layout
from sandbox.core.run_dir import RunDirectory, atomic_write_text, hold
from sandbox.core.steps import FORK, FORKS, note_fork
from sandbox.engine.fork_plan import ForkPlan, plan_fork, step_count
from sandbox.engine.store import CHECKPOINT_WAL, open_store
from sandbox.engine.tables import Row, Tables

__all__ = ["copy_database", "fork_run", "make_fork"]


def fork_run(
    parent: Path | str,
    at: int,
    changes: Mapping[str, Any] | None = None,
    *,
    out: Path | str | None = None,
    models: kinds.GivenModels = None,
    hooks: Any = None,
) -> Path:
    """Fork the run `parent` at step `at` with `changes` into `out` (default: beside the parent,
    `<parent>-fork<at>-<time>`), run it to its end, and return its directory. See the module's text."""
    path = make_fork(parent, at, changes, out=out)
    return Path(kinds.kind_of_dir(path).call("resume", path, models=models, hooks=hooks))


def make_fork(
    parent: Path | str, at: int, changes: Mapping[str, Any] | None = None, *, out: Path | str | None = None
) -> Path:
    """Check and write the fork's directory (`fork_run` without running it on: `sandbox resume` does that)."""
    plan = plan_fork(parent, at, changes or {})
    path = Path(out) if out is not None else _default_out(plan.parent, at)
    RunDirectory.check_new(path)
    existed = path.exists()
    with hold(plan.parent, create=False), hold(path):  # the parent is not written, but no run may start in it now
        try:
            _prepare(plan, path)
        except BaseException:
            _remove(path, existed)  # nothing half-written
            raise
        try:
            note_fork(plan.parent, path, plan.record())
        except OSError as error:  # a parent on a read-only disk: the fork still knows its parent (fork.json)
            warnings.warn(f"{plan.parent}: the fork is not listed in its {FORKS} ({error})", stacklevel=2)
    return path


def _remove(path: Path, existed: bool) -> None:
    if existed:
        for entry in path.iterdir():
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def _default_out(parent: Path, at: int) -> Path:
    return parent.parent / f"{parent.name}-fork{at}-{time.strftime('%Y%m%d-%H%M%S')}"


def _prepare(plan: ForkPlan, path: Path) -> None:
    """Write the fork's directory, its scenario last: a fork killed while it is made is no run directory (nothing
    resumes it), and `sandbox fork` makes it again into the same place once it is removed."""
    parent = plan.parent
    path.mkdir(parents=True, exist_ok=True)
    copy_database(parent / layout.CACHE, path / layout.CACHE)
    if not plan.fresh:
        _copy_files(parent, path, plan)
        copy_database(parent / layout.STORE, path / layout.STORE)
        _cut_tables(path, plan)
        run_sync(_cut_store(path, plan))
        _cut_transcript(parent, path, plan.at, plan.steps.closing)
    atomic_write_text(path / FORK, json.dumps(plan.record(), indent=2, default=str))
    RunDirectory(path).write_status("running", created=time.time(), forked_from=str(parent.resolve()), fork_at=plan.at)
    atomic_write_text(path / layout.SCENARIO, yaml.safe_dump(plan.scenario.model_dump(mode="json"), sort_keys=False))


def copy_database(source: Path, target: Path) -> None:
    """Copy an SQLite file with its write-ahead log folded in (SQLite's backup: a consistent copy)."""
    if not source.is_file():
        return
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)
        dst.execute(CHECKPOINT_WAL)


def _copy_files(parent: Path, path: Path, plan: ForkPlan) -> None:
    """What a resumed run reads beside its store, cache and transcript: the tables its steps append to (cut back
    next) and a society's inline solve of its guided members. Nothing else: the parent's results, figures and the
    analyses written into it later (a norm map, an evaluation) are the parent's own."""
    for name in sorted(_step_tables(plan)):
        if (parent / name).is_file():
            shutil.copy2(parent / name, path / name)
    if (parent / layout.GUIDED).is_dir():
        shutil.copytree(parent / layout.GUIDED, path / layout.GUIDED)


def _step_tables(plan: ForkPlan) -> set[str]:
    """The tables whose sizes the checkpoint at the step records (the engine's tables, cut back to them)."""
    return {name for snapshot, _ in plan.threads.values() for name in (snapshot.values.get("tables") or {})}


def _cut_tables(path: Path, plan: ForkPlan) -> None:
    for snapshot, _ in plan.threads.values():
        for name, size in (snapshot.values.get("tables") or {}).items():
            if (path / name).is_file():
                with (path / name).open("r+b") as handle:
                    handle.truncate(size)


async def _cut_store(path: Path, plan: ForkPlan) -> None:
    """Cut every thread of the fork's store back to its checkpoint at the step, then apply the changes there."""
    with closing(sqlite3.connect(path / layout.STORE)) as db, db:
        for thread, (snapshot, _) in plan.threads.items():
            checkpoint = snapshot.config["configurable"]["checkpoint_id"]
            db.execute("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id > ?", (thread, checkpoint))
            db.execute("DELETE FROM writes WHERE thread_id = ? AND checkpoint_id >= ?", (thread, checkpoint))
    steps = plan.steps
    count = int(step_count(plan.scenario.model_dump(mode="json"), steps.count))
    async with open_store(path) as saver:
        graph = steps.graph(saver, plan.scenario)
        for snapshot, writer in plan.threads.values():
            update: dict[str, Any] = {}
            if int(snapshot.values.get(steps.count_key, count)) != count:
                update[steps.count_key] = count
            rows: dict[str, list[Row]] = {}
            for name, value in plan.edits.items():
                assert steps.edit is not None
                edit = steps.edit({**snapshot.values, **update}, name, value, plan.scenario)
                update |= edit.update
                for table, added in edit.rows.items():
                    rows.setdefault(table, []).extend(added)
            if rows:  # after the parent's rows of the steps before, and in the sizes the checkpoint records
                update["tables"] = Tables(path, {name: [] for name in snapshot.values["tables"]}).append({}, rows)
            if (plan.fields or plan.edits) and steps.stopped_key and snapshot.values.get(steps.stopped_key):
                update[steps.stopped_key] = False  # the changed run goes on from where its parent stopped
            if update:
                await graph.aupdate_state(snapshot.config, update, as_node=writer or None)


def _cut_transcript(parent: Path, path: Path, at: int, closing: tuple[str, ...]) -> None:
    """The parent's calls of the steps before the fork (a call's `epoch` is its step), less those made after its last
    step (`closing`) or outside any step (a later `sandbox evaluate`'s), and the games' notes of them."""
    from sandbox.llm import moves

    source = parent / layout.TRANSCRIPTS
    if not source.is_file():
        return
    kept: set[str] = set()
    with source.open(encoding="utf-8") as lines, (path / layout.TRANSCRIPTS).open("w", encoding="utf-8") as out:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            step = record.get("epoch")
            if step is not None and int(step) < at and record.get("step") not in closing:
                out.write(line if line.endswith("\n") else line + "\n")
                kept.add(record.get("call_id"))
    notes = moves.notes_path(source)
    if notes.is_file():
        with (
            notes.open(encoding="utf-8") as lines,
            moves.notes_path(path / layout.TRANSCRIPTS).open("w", encoding="utf-8") as out,
        ):
            for line in lines:
                try:
                    if json.loads(line).get("call_id") in kept:
                        out.write(line)
                except ValueError:
                    continue
