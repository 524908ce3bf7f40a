"""A sweep on disk: expand, play every run on an executor, and join their summaries into `sweep.csv`.

Layout of a sweep directory:
    sweep.yaml     the sweep file, its base scenario written in (the directory stands alone)
    runs.csv       one row per run: its id and the overrides it applies
    runs/RUN-ID/   each run's own run directory (resumable with `sandbox resume` like any other)
    budget.json    what the sweep's runs have spent, when the sweep has a budget (shared by the workers)
    sweep.csv      one row per run: id, status, overrides, and its summary's figures (flattened: a.b.c)
    seeds.csv      one row per setting (the overrides but the seed): each figure's mean and 95% CI across seeds
    sweep.json     the sweep's status: counts by status, the executor, timings
    summary.json   the common frame (`sandbox.core.summary`): the sweep's name, its runs, their statuses

`sandbox sweep FILE --out DIR` on a directory that holds the same sweep, or
`sandbox resume DIR`, goes on where it stopped: finished runs are skipped, a
half-finished run resumes, and `sweep.csv` ends as an uninterrupted sweep's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from sandbox.base.errors import UsageError
from sandbox.core.run_dir import SWEEP, RunDirectory, atomic_write_text, clear_start, default_out, hold, run_status
from sandbox.core.summary import FRAME, write_summary
from sandbox.sweep.config import SweepFile, SweepRun, expand, parse_sweep

__all__ = ["SWEEP", "is_sweep", "run_sweep", "seed_table", "start_sweep", "sweep_table"]

RUNS = "runs"
# How a run was played, not what it found: timings vary from session to session, and a run killed halfway
# replays its unfinished calls from the response cache when resumed. They stay in each run's summary.json.
SESSION_FIGURES = ("latency_s", "seconds", "seconds_per_episode", "elapsed_s", "cache_hits")


def is_sweep(path: Path | str) -> bool:
    """Whether `path` is a sweep directory (it holds `sweep.yaml`)."""
    return (Path(path) / SWEEP).is_file()


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """The numbers and short strings of a summary, by dotted path (lists and long texts left out)."""
    flat: dict[str, Any] = {}
    if isinstance(data, dict):
        for key, value in data.items():
            flat.update(_flatten(value, f"{prefix}{key}."))
    elif isinstance(data, bool) or isinstance(data, (int, float)) or (isinstance(data, str) and len(data) <= 80):
        flat[prefix[:-1]] = data
    return flat


def sweep_table(path: Path | str, runs: list[SweepRun]) -> pd.DataFrame:
    """One row per run: its id, status and overrides, then its summary's figures."""
    from sandbox.base.files import read_json

    rows = []
    for run in runs:
        run_dir = Path(path) / RUNS / run.id
        status = run_status(run_dir)
        row: dict[str, Any] = {
            "run": run.id,
            "status": status,
            **{k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in run.overrides.items()},
        }
        if status == "complete":
            row.update(
                {
                    f"summary.{k}": v
                    for k, v in _flatten(read_json(run_dir / "summary.json")).items()
                    if not k.endswith(SESSION_FIGURES) and k not in FRAME
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


def seed_table(table: pd.DataFrame) -> pd.DataFrame:
    """One row per setting of `sweep.csv` (its overrides but the seed), over its finished runs: `seeds`, and
    for each numeric figure of their summaries the mean and the two ends of its 95% t-interval across seeds
    (`FIGURE.mean`, `FIGURE.ci_low`, `FIGURE.ci_high`; NaN ends below two seeds)."""
    from sandbox.base.stats import mean_ci

    done = table[table["status"] == "complete"] if "status" in table else table.iloc[0:0]
    keys = [c for c in table.columns if c not in ("run", "status", "seed") and not c.startswith("summary.")]
    figures = [
        c
        for c in done.columns
        if c.startswith("summary.")
        and pd.api.types.is_numeric_dtype(done[c])
        and not pd.api.types.is_bool_dtype(done[c])
    ]
    rows = []
    for setting, group in done.groupby(keys, sort=False, dropna=False) if keys else [((), done)]:
        row: dict[str, Any] = dict(zip(keys, setting if isinstance(setting, tuple) else (setting,)))
        row["seeds"] = len(group)
        for figure in figures:
            values = group[figure].dropna()
            if len(values):
                mean, low, high, _ = mean_ci(values.astype(float))
                row.update({f"{figure}.mean": mean, f"{figure}.ci_low": low, f"{figure}.ci_high": high})
        rows.append(row)
    return pd.DataFrame(rows)


def _jobs(path: Path, sweep: SweepFile, runs: list[SweepRun]) -> list[dict[str, Any]]:
    budget = sweep.sweep.budget
    return [
        {
            "path": str(path / RUNS / run.id),
            "kind": run.kind,
            "scenario": run.scenario.model_dump(mode="json"),
            "budget": budget.model_dump() if budget.limits() else None,
            "ledger": str(path / "budget.json") if budget.limits() else None,
        }
        for run in runs
    ]


def require_extras(runs: list[SweepRun], executor: str) -> None:
    """`MissingExtraError` (exit 2) unless the extras the runs' kinds and `executor` need are installed."""
    from sandbox.base.extras import require
    from sandbox.core.kinds import get

    needs = ["scale"] if executor == "ray" else []
    for run in runs:
        needs += get(run.kind).needs(run.scenario)
    require(*needs, what="the sweep" + (" on Ray" if executor == "ray" else ""))


def _settings(data: dict[str, Any], source: str) -> dict[str, Any]:
    """A sweep file's data as two sweeps that play the same runs share: its budget left out, its base scenario with
    every field (a directory written before a base file was read through its kind's loader holds the file's own
    fields)."""
    from sandbox.core.kinds import kind_of_data
    from sandbox.core.scenario_files import parse_kind

    base = data["sweep"]["base"]
    if isinstance(base, dict):
        base = parse_kind(kind_of_data(base).name, base, source).model_dump(mode="json")
    return {**data, "sweep": {**data["sweep"], "budget": None, "base": base}}


def start_sweep(
    data: dict[str, Any], source: str, base_dir: Path, out: Path | str | None = None, **options: Any
) -> Path:
    """Expand the sweep file's `data` and play it into `out` (new, or a directory holding the same sweep)."""
    sweep, base = parse_sweep(data, source, base_dir)
    runs = expand(sweep, base, source)  # every run validated: nothing is written for an invalid sweep
    require_extras(runs, options.get("executor") or sweep.sweep.executor)  # nor for one missing an extra
    path = Path(out) if out is not None else default_out(sweep)
    resolved = {**sweep.model_dump(mode="json"), "sweep": {**sweep.model_dump(mode="json")["sweep"], "base": base}}
    if is_sweep(path):
        from sandbox.base.files import read_yaml

        held = read_yaml(path / SWEEP)
        if _settings(held, str(path / SWEEP)) != _settings(resolved, source):
            raise UsageError(f"{path} holds another sweep; give a new --out, or `sandbox resume {path}` to finish it")
        if held["sweep"].get("budget") != resolved["sweep"]["budget"]:  # the file's budget changed: it applies
            options = {**options, "budget": sweep.sweep.budget}
    else:
        RunDirectory.check_new(path)
    with hold(path):
        if not is_sweep(path):
            clear_start(path)
            atomic_write_text(path / SWEEP, yaml.safe_dump(resolved, sort_keys=False))
            table = pd.DataFrame([{"run": r.id, **{k: json.dumps(v) for k, v in r.overrides.items()}} for r in runs])
            atomic_write_text(path / "runs.csv", table.to_csv(index=False))
        return run_sweep(path, **options)


def run_sweep(
    path: Path | str,
    *,
    executor: str | None = None,
    workers: int | None = None,
    address: str | None = None,
    budget: Any = None,
    on_start: Callable[[int, int], None] | None = None,
    on_run: Callable[[dict[str, Any]], None] | None = None,
) -> Path:
    """Play the runs of the sweep at `path` that are not finished, then write `sweep.csv` and `sweep.json`.

    Args:
        path: The sweep directory.
        executor: local or ray, instead of the sweep file's.
        workers: Runs at once, instead of the sweep file's.
        address: A Ray cluster's address (`ray:` executor); a local Ray is started otherwise.
        budget: The sweep's budget instead of its file's (a higher cap, to finish a sweep a cap stopped); it is
            written into `sweep.yaml`.
        on_start: Called with (runs in all, runs already finished).
        on_run: Called with each run's outcome ({id, status, error}) as it finishes.
    """
    from sandbox.base.files import read_json, read_yaml
    from sandbox.sweep.executors import run_jobs

    path = Path(path)
    if not is_sweep(path):
        raise UsageError(f"{path} is not a sweep directory (no {SWEEP})")
    with hold(path):
        sweep, base = parse_sweep(read_yaml(path / SWEEP), str(path / SWEEP), path)
        runs = expand(sweep, base, str(path / SWEEP))
        todo = [run for run in runs if run_status(path / RUNS / run.id) != "complete"]
        executor = executor or sweep.sweep.executor
        require_extras(todo, executor)  # before the new budget is written
        if budget is not None:
            data = read_yaml(path / SWEEP)
            data["sweep"]["budget"] = budget.model_dump()
            atomic_write_text(path / SWEEP, yaml.safe_dump(data, sort_keys=False))
            sweep, base = parse_sweep(data, str(path / SWEEP), path)
        if on_start:
            on_start(len(runs), len(runs) - len(todo))
        started = time.time()
        outcomes: list[dict[str, Any]] = []

        def done(outcome: dict[str, Any]) -> None:
            outcomes.append(outcome)
            if on_run:
                on_run(outcome)

        (path / RUNS).mkdir(exist_ok=True)
        run_jobs(
            _jobs(path, sweep, todo),
            executor=executor,
            workers=workers or sweep.sweep.workers,
            on_done=done,
            address=address,
        )
        table = sweep_table(path, runs)
        atomic_write_text(path / "sweep.csv", table.to_csv(index=False))
        atomic_write_text(path / "seeds.csv", seed_table(table).to_csv(index=False))
        counts = table["status"].value_counts().to_dict()
        errors = {o["id"]: o["error"] for o in outcomes if o.get("error")}
        write_summary(path, {"scenario": sweep.name, "runs": len(runs), "statuses": counts}, kind="sweep")
        atomic_write_text(
            path / "sweep.json",
            json.dumps(
                {
                    "name": sweep.name,
                    "runs": len(runs),
                    "statuses": counts,
                    "executor": executor,
                    "seconds_this_session": round(time.time() - started, 3),
                    "errors": errors,
                    "budget": read_json(path / "budget.json") if (path / "budget.json").is_file() else None,
                },
                indent=2,
            ),
        )
    return path
