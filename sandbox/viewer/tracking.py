"""Runs logged to MLflow: a scenario's `tracking:` block (or `sandbox run --track URI`) sends each finished run to
an MLflow tracking store.

What a run logs, once its summary is written (`sandbox.core.summary.write_summary` calls `track_finished`):

* parameters: the resolved scenario, flattened (`scenario.society.norms` -> a JSON text, `scenario.seed` -> `7`);
* metrics: every chart of the kind's run page (`RunKind.view`, the same description `sandbox view` draws), one
  metric per line with the epoch, episode or generation as its step, named by its table, filter, column and group
  (`epoch_summary.offered_share.mean/assistant`, `metrics.reward`); and the summary's numbers as
  `summary.<field>` (TRL's own step logs keep their names: `reward`, `loss`);
* artifacts: the scenario, the summary, the kind's tables (`tables/`), its plots (`plots/`), and SCAI's policies.

The MLflow run is made the first time it is needed and its id kept in the run directory (`tracking.json`), so a
resumed run logs to the same MLflow run, and a run inside a tracked run (a sweep's cell, a chain's stage) is its
child (`mlflow.parentRunId`), even from another process. A training run that uses TRL also gets TRL's own
step logs in the same MLflow run (`report_to`, `start`).

MLflow's client is the `tracking` extra; the scenario's block checks it is installed when the file is read.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from sandbox.core import kinds
from sandbox.core.run_dir import SCENARIO, SUMMARY, SWEEP, atomic_write_text

__all__ = ["TRACKING", "ensure_run", "logged_metrics", "report_to", "start", "track_finished", "tracking_of"]

TRACKING = "tracking.json"  # {"uri", "experiment", "run_id", "parent", "logged"}
PARENT_DEPTH = 3  # how far up a tracked run is looked for (a sweep's cells are at sweep/runs/run-0000)
PARAM_LENGTH = 6000  # MLflow's longest parameter value
_UNSAFE = re.compile(r"[^A-Za-z0-9_\-. /]")


def tracking_of(path: Path) -> dict[str, Any] | None:
    """The `tracking:` block of the run directory `path`'s resolved scenario (or sweep), or None."""
    for name in (SCENARIO, SWEEP):
        file = path / name
        if file.is_file():
            try:
                data = yaml.safe_load(file.read_text(encoding="utf-8"))
            except (OSError, yaml.YAMLError):
                return None
            block = data.get("tracking") if isinstance(data, dict) else None
            return {"uri": "file:./mlruns", "experiment": None, **block} if isinstance(block, dict) else None
    return None


def _parent(path: Path) -> Path | None:
    """The nearest run directory above `path` that is tracked (an MLflow run already, or a run directory whose
    scenario or sweep asks): a sweep of a cell, a chain of a stage. A folder that is no run is never one."""
    for above in list(path.resolve().parents)[:PARENT_DEPTH]:
        if (above / TRACKING).is_file():
            return above
        # a run directory: its status, or a sweep's file beside its runs (not a scenario file that a user named so)
        is_run = (above / "run.json").is_file() or ((above / SWEEP).is_file() and (above / "runs").is_dir())
        if is_run and tracking_of(above) is not None:
            return above
    return None


def _absolute(uri: str) -> str:
    """A file store's URI with an absolute path (a run resumed from another folder logs to the same store)."""
    if uri.startswith("file:"):
        return "file:" + str(Path(uri.removeprefix("file:").removeprefix("//")).resolve())
    if "://" not in uri:  # a bare path
        return "file:" + str(Path(uri).resolve())
    return uri


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One process at a time makes a directory's MLflow run (a sweep's cells finish in several processes)."""
    with (path / ".tracking.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _client(uri: str) -> Any:
    if uri.startswith("file:") or "://" not in uri:  # MLflow 3 refuses its file store unless asked for it
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    # a server that does not answer delays a finished run by seconds, not by MLflow's minutes of retries
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "20")
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def ensure_run(path: Path, config: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The MLflow run of the run directory `path` (`tracking.json`), made now when it has none; None when neither
    it nor a run above it is tracked. `config` (`{"uri", "experiment"}`): track it there though it did not ask."""
    path = Path(path)
    record = path / TRACKING
    if record.is_file():
        return json.loads(record.read_text())
    config, parent = config or tracking_of(path), None
    above = _parent(path)  # a cell of a tracked sweep is its child, though the base scenario was tracked too
    if above is not None:
        parent = ensure_run(above)
    if config is None and parent is None:
        return None
    if config is None or parent is not None:
        config = {"uri": parent["uri"], "experiment": parent["experiment"]}
    with _locked(path):
        if record.is_file():
            return json.loads(record.read_text())
        uri = _absolute(config["uri"])
        client = _client(uri)
        name = config.get("experiment") or _scenario_name(path) or "sandbox"
        experiment = client.get_experiment_by_name(name)
        experiment_id = experiment.experiment_id if experiment else client.create_experiment(name)
        tags = {"sandbox.path": str(path.resolve())}
        if parent is not None:
            tags["mlflow.parentRunId"] = parent["run_id"]
        run = client.create_run(experiment_id, run_name=path.name, tags=tags)
        data = {
            "uri": uri,
            "experiment": name,
            "run_id": run.info.run_id,
            "parent": parent["run_id"] if parent else None,
            "logged": False,
        }
        atomic_write_text(record, json.dumps(data, indent=2))
        return data


def start(path: Path) -> bool:
    """Make the MLflow run of a tracked run directory now and point MLflow's own integrations at it (TRL's
    `report_to="mlflow"` logs its steps into the same run); False when `path` is not tracked."""
    record = ensure_run(path)
    if record is None:
        return False
    _client(record["uri"])  # the file store's opt-in
    os.environ["MLFLOW_TRACKING_URI"] = record["uri"]
    os.environ["MLFLOW_EXPERIMENT_NAME"] = record["experiment"]
    os.environ["MLFLOW_RUN_ID"] = record["run_id"]
    return True


def report_to(path: Path) -> str:
    """TRL's `report_to` for the run directory `path`: `mlflow` when it is tracked (its run made now), else none;
    a store that cannot be reached is a warning and none (the training goes on, `sandbox track` logs it later)."""
    import warnings

    try:
        return "mlflow" if start(path) else "none"
    except Exception as error:
        warnings.warn(f"{path}: TRL's steps not logged to MLflow ({type(error).__name__}: {error})", stacklevel=2)
        return "none"


def _scenario_name(path: Path) -> str | None:
    for name in (SCENARIO, SWEEP):
        try:
            data = yaml.safe_load((path / name).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            return data["name"]
    return None


def _flatten(data: Any, prefix: str = "") -> dict[str, str]:
    """A scenario as MLflow parameters: nested mappings as dotted keys, lists as JSON text."""
    if isinstance(data, dict):
        flat: dict[str, str] = {}
        for key, value in data.items():
            flat.update(_flatten(value, f"{prefix}{key}."))
        return flat
    text = data if isinstance(data, str) else json.dumps(data, default=str)
    return {prefix.rstrip(".")[:250]: text[:PARAM_LENGTH]}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        try:
            value = float(value)
        except (TypeError, ValueError):
            return None
    return float(value) if math.isfinite(value) else None


def logged_metrics(kind: kinds.RunKind | None, path: Path) -> list[tuple[str, float, int]]:
    """(key, value, step) of every line of the kind's run-page charts, and the summary's numbers."""
    import pandas as pd

    from sandbox.core.costs import TIMINGS
    from sandbox.viewer.page import sections_of
    from sandbox.viewer.sections import Chart

    metrics: list[tuple[str, float, int]] = []
    for chart in (s for s in sections_of(kind, path) if isinstance(s, Chart)):
        file = path / chart.file
        if not file.is_file():
            continue
        frame = pd.read_json(file, lines=True) if file.suffix == ".jsonl" else pd.read_csv(file)
        for column, value in chart.where.items():
            if column in frame.columns:
                frame = frame[frame[column] == value]
        ys = (chart.y,) if isinstance(chart.y, str) else tuple(chart.y)
        ys = tuple(
            y for y in ys if y in frame.columns and pd.api.types.is_numeric_dtype(frame[y]) and y not in TIMINGS
        )  # timings are no metrics: a run resumed from its cache would log others than an uninterrupted one
        if chart.x not in frame.columns or not ys or frame.empty:
            continue
        stepped = pd.api.types.is_integer_dtype(frame[chart.x])
        if not stepped and pd.api.types.is_numeric_dtype(frame[chart.x]):
            continue  # a scatter over a measured x (a judge's reward by offered share): not a series of steps
        groups = (
            [(None, frame)] if not chart.group or chart.group not in frame.columns else list(frame.groupby(chart.group))
        )
        for key, rows in groups:
            points = rows.groupby(chart.x)[list(ys)].mean()
            for y in ys:
                name = ".".join([Path(chart.file).stem, *(str(v) for v in chart.where.values()), y])
                for x, value in points[y].items():
                    number = _number(value)
                    if number is None:
                        continue
                    parts = [name, *([] if key is None else [str(key)]), *([] if stepped else [str(x)])]
                    metrics.append((_UNSAFE.sub("_", "/".join(parts))[:250], number, int(x) if stepped else 0))
    try:
        summary = json.loads((path / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        summary = {}
    for key, value in summary.items() if isinstance(summary, dict) else ():
        number = None if key == "schema_version" else _number(value) if not isinstance(value, str) else None
        if number is not None:
            metrics.append((_UNSAFE.sub("_", f"summary.{key}")[:250], number, 0))
    return metrics


def _artifacts(kind: kinds.RunKind | None, path: Path) -> list[tuple[Path, str]]:
    """(file, artifact folder): the scenario and summary, the kind's tables, the plots."""
    found = [(path / name, "") for name in (SCENARIO, SWEEP, SUMMARY, "run.json") if (path / name).is_file()]
    for file in kind.tables.values() if kind else ():
        if (path / file).is_file() and not file.endswith("transcripts.jsonl"):
            found.append((path / file, "tables" + (f"/{Path(file).parent}" if "/" in file else "")))
    found += [(image, "plots") for image in sorted(path.glob("*.png"))]
    return found


def track_finished(path: Path | str, config: dict[str, Any] | None = None) -> str | None:
    """Log the finished run directory `path` to its MLflow run (see the module's docstring); its MLflow run id, or
    None when it is not tracked. Logged once: a summary written again (an evaluation) logs its artifacts again.
    `config` (`{"uri", "experiment"}`): log a run that did not ask (`sandbox track DIR --uri URI`)."""
    path = Path(path)
    record = ensure_run(path, config)
    if record is None:
        return None
    from mlflow.entities import Metric, Param, RunTag

    client = _client(record["uri"])
    run_id = record["run_id"]
    try:
        kind = kinds.kind_of_dir(path)
    except Exception:
        kind = None
    if not record.get("logged"):
        scenario = {}
        for name in (SCENARIO, SWEEP):
            if (path / name).is_file():
                scenario = yaml.safe_load((path / name).read_text(encoding="utf-8")) or {}
                break
        # `scenario.` before each: TRL's own parameters (its `seed` among them) share the run
        params = [Param(f"scenario.{k}"[:250], v) for k, v in _flatten(scenario).items()]
        now = _now_ms()
        metrics = [Metric(k, v, now, step) for k, v, step in logged_metrics(kind, path)]
        tags = [RunTag("sandbox.kind", kind.name if kind else "unknown")]
        client.log_batch(run_id, tags=tags)
        for at in range(0, len(params), 100):  # MLflow's most parameters in one batch
            client.log_batch(run_id, params=params[at : at + 100])
        for at in range(0, len(metrics), 1000):  # and metrics
            client.log_batch(run_id, metrics=metrics[at : at + 1000])
    for file, folder in _artifacts(kind, path):
        client.log_artifact(run_id, str(file), folder or None)
    client.set_terminated(run_id, "FINISHED")
    atomic_write_text(path / TRACKING, json.dumps({**record, "logged": True}, indent=2))
    return run_id


def _now_ms() -> int:
    import time

    return int(time.time() * 1000)
