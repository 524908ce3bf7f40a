"""Replay a finished run offline: its scenario played again from the start with every answer taken from its response
cache (no model at all), and every table compared with the run's own (`sandbox replay RUN`, `sandbox.replay`).

A determinism audit: the replay asks exactly the calls the run asked, in any order, if and only if everything
between the answers (seeds, pairings, parsers, state, tables) is determined by the scenario. What the game decided
(moves, names, counts, choices: text and integers) must match exactly, measured floats (means, shares, entropies,
embedding distances) within a stated tolerance (`sandbox.engine.table_check`), so that a replay on another machine,
whose numeric kernels round otherwise, is identical too; the float cells that differed in their last digits are
counted. A table that differs is named with its first differing row, that row's step, the column and both values;
a call the recording does not hold stops the replay
(`sandbox.llm.offline.NotRecordedError`), and is named. Columns that hold wall-clock time (`seconds`) are left
out, and so is the transcript's timing: its calls are compared by id and answer.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from sandbox.base.errors import SandboxError, UsageError
from sandbox.core import kinds
from sandbox.core import run_dir as layout
from sandbox.core.run_dir import RunDirectory, hold
from sandbox.core.steps import Steps, read_fork
from sandbox.engine.fork import copy_database, make_fork
from sandbox.engine.fork_plan import check_run, steps_of
from sandbox.engine.table_check import TableCheck, compare_table, float_cells

__all__ = ["ReplayReport", "TableCheck", "replay_run"]

TIMING = ("seconds",)  # columns of wall-clock time, which no replay reproduces


@dataclass
class ReplayReport:
    """What a replay found."""

    run: Path
    replay: Path | None  # the replay's directory (kept when asked, or when it differs); None: removed
    identical: bool
    tables: list[TableCheck] = field(default_factory=list)
    calls: int = 0  # the calls the replay asked (each answered from the recording)
    model_calls: int = 0  # the calls that reached a model: 0 unless the stack was not offline
    missing: str = ""  # the first call the recording did not hold (the replay stopped there)
    seconds: float = 0.0
    original_seconds: float | None = None  # the run's own working time (run.json)

    @property
    def close(self) -> int:
        """The float cells that differed in their last digits, within the tolerance (`sandbox.engine.table_check`)."""
        return sum(check.close for check in self.tables)

    def lines(self) -> list[str]:
        verdict = "identical" if self.identical else "NOT identical"
        within = f"; {float_cells(self.close)} within the tolerance" if self.close else ""
        lines = [
            f"{self.run}: the replay is {verdict} ({len(self.tables)} tables, {self.calls} calls from the "
            f"recording{within})"
        ]
        if self.missing:
            lines.append(self.missing)
        lines += [f"  {check.line()}" for check in self.tables]
        took = f"the replay took {self.seconds:.1f} s"
        if self.original_seconds:
            took += f" against the run's {self.original_seconds:.1f} s ({self.seconds / self.original_seconds:.2f}x)"
        return [*lines, took]


def replay_run(
    path: Path | str, *, out: Path | str | None = None, models: kinds.GivenModels = None, keep: bool = False
) -> ReplayReport:
    """Replay the finished run `path` offline into `out` (default: a temporary folder, removed when the replay is
    identical unless `keep`) and compare its tables; `models`: the model objects the run was given (tests), so that
    the cache keys match."""
    run = Path(path)
    kind = _check(run)
    if out is not None:
        RunDirectory.check_new(Path(out))
    target = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix=f"{run.name}-replay-"))
    try:
        return _replay(run, kind, target, models, remove=out is None and not keep)
    except BaseException:
        if out is None:
            shutil.rmtree(target, ignore_errors=True)  # a temporary folder: nothing left behind
        raise


def _replay(run: Path, kind: kinds.RunKind, target: Path, models: kinds.GivenModels, *, remove: bool) -> ReplayReport:
    from sandbox.llm.offline import offline

    steps = steps_of(kind)
    started = time.perf_counter()
    record = read_fork(run)
    if record is not None:  # a fork: its parent replayed, then forked again as it was
        parent = _replayed_parent(run, record, models)
        if isinstance(parent, ReplayReport):
            return parent
        make_fork(parent, int(record["at"]), record.get("changes") or {}, out=target)
        shutil.rmtree(parent, ignore_errors=True)
        copy_database(run / layout.CACHE, target / layout.CACHE)  # the parent's answers and the fork's own
    else:
        with hold(target):
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(run / layout.SCENARIO, target / layout.SCENARIO)
            copy_database(run / layout.CACHE, target / layout.CACHE)
            if (run / layout.GUIDED).is_dir():  # an inline solve is the society's input: taken as it was
                shutil.copytree(run / layout.GUIDED, target / layout.GUIDED)
            RunDirectory(target).write_status("running", created=time.time(), replay_of=str(run.resolve()))
    missing = ""
    with offline():
        try:
            kind.call("resume", target, models=models)
        except SandboxError as error:
            missing = _not_recorded(target) or f"the replay failed: {error}"
    report = ReplayReport(run, target, False, seconds=time.perf_counter() - started, missing=missing)
    report.original_seconds = RunDirectory(run).status().get("active_seconds") or RunDirectory(run).status().get(
        "seconds"
    )
    if not missing:
        report.tables = _compare_tables(run, target, kind, steps)
    report.calls, report.model_calls, transcript = _calls(run, target)
    if transcript is not None:
        report.tables.append(transcript)
    report.identical = not missing and all(check.identical for check in report.tables)
    if report.identical and remove:
        shutil.rmtree(target, ignore_errors=True)
        report.replay = None
    return report


def _replayed_parent(run: Path, record: dict[str, Any], models: kinds.GivenModels) -> Path | ReplayReport:
    """The fork `run`'s parent replayed (kept, to fork again); a report that says why not when it cannot be."""
    parent = Path(record["parent"])
    if not (parent / layout.SUMMARY).is_file():
        raise UsageError(
            f"{run} is a fork of {parent}, which is gone or unfinished: a fork is replayed from its parent's replay"
        )
    report = replay_run(parent, models=models, keep=True)
    if report.identical and report.replay is not None:
        return report.replay
    missing = f"its parent {parent} does not replay identically: " + "; ".join(
        [report.missing] * bool(report.missing) + [c.line() for c in report.tables if not c.identical]
    )
    return ReplayReport(run, report.replay, False, missing=missing, seconds=report.seconds)


def _check(run: Path) -> kinds.RunKind:
    kind = check_run(run, "replay")
    if not (run / layout.SUMMARY).is_file():
        raise UsageError(f"{run} is not finished (no {layout.SUMMARY}): replay a finished run (resume it first)")
    return kind


def _not_recorded(target: Path) -> str:
    """The first call of the replay's transcript that the recording did not hold, in words ("" if none)."""
    transcript = target / layout.TRANSCRIPTS
    if not transcript.is_file():
        return ""
    with transcript.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                error = json.loads(line).get("error") or ""
            except ValueError:
                continue
            if "NotRecordedError" in error:
                return error.split(": ", 1)[-1]
    return ""


def _read(path: Path) -> pd.DataFrame:
    if path.suffix == ".jsonl":
        return pd.read_json(path, lines=True, dtype=False)
    return pd.read_csv(path, keep_default_na=False, dtype=str)


def _compare_tables(run: Path, target: Path, kind: kinds.RunKind, steps: Steps) -> list[TableCheck]:
    checks = []
    for file in dict.fromkeys(kind.tables.values()):
        if file == layout.TRANSCRIPTS or file in steps.later or not (run / file).is_file():
            continue
        original = _read(run / file)
        if not (target / file).is_file():
            checks.append(TableCheck(file, len(original), False, "the replay did not write it"))
            continue
        checks.append(first_difference(file, original, _read(target / file), steps))
    return checks


def first_difference(name: str, original: pd.DataFrame, replayed: pd.DataFrame, steps: Steps) -> TableCheck:
    """The table `name` of the run against the replay's: identical (what the game decided exactly, measured floats
    within `sandbox.engine.table_check`'s tolerance), or where it first differs (row, step, column, both values)."""
    timing = [c for c in original.columns if c in TIMING or str(c).endswith(".seconds")]
    a, b = original.drop(columns=timing), replayed.drop(columns=[c for c in timing if c in replayed.columns])
    return compare_table(name, a, b, where=lambda row: _step(row, steps))


def _step(row: pd.Series, steps: Steps) -> str:
    for key in (steps.key, "epoch", "generation"):
        if key in row.index:
            return f" ({steps.unit} {row[key]})"
    return ""


def _calls(run: Path, target: Path) -> tuple[int, int, TableCheck | None]:
    """(calls the replay asked, calls that reached a model, the transcripts' answers compared by call id)."""
    from sandbox.llm.transcript import read_transcript

    replayed = read_transcript(target / layout.TRANSCRIPTS) if (target / layout.TRANSCRIPTS).is_file() else []
    calls = len(replayed)
    made = sum(1 for r in replayed if not r.get("cache_hit") and not r.get("error"))
    if not (run / layout.TRANSCRIPTS).is_file():
        return calls, made, None
    again = {r["call_id"]: r.get("answer") for r in replayed if not r.get("error")}
    original = {  # a call outside any step that the replay did not ask is a later command's (`sandbox evaluate`)
        r["call_id"]: r.get("answer")
        for r in read_transcript(run / layout.TRANSCRIPTS)
        if not r.get("error") and (r.get("epoch") is not None or r["call_id"] in again)
    }
    name = layout.TRANSCRIPTS
    for call_id, answer in original.items():
        if call_id not in again:
            return calls, made, TableCheck(name, len(original), False, f"call {call_id} was not asked again")
        if again[call_id] != answer:
            return calls, made, TableCheck(name, len(original), False, f"call {call_id} has another answer")
    extra = [c for c in again if c not in original]
    if extra:
        return calls, made, TableCheck(name, len(original), False, f"call {extra[0]} was not in the run")
    return calls, made, TableCheck(name, len(original), True)
