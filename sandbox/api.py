"""The Python API for every kind of run: load a scenario file, run it, resume a run, read a run directory.

Example (in a notebook)::

    from sandbox import load_scenario, run
    result = run(load_scenario("scenarios/default.yaml"))      # a society; any kind's file runs the same way
    result = run("default", out="runs/demo")                   # a shipped scenario, by name
    result.metrics.groupby("norm")["offered_share"].mean()
    result.plot()

    training = run("scenarios/moral/tiny/utilitarian_vs_tft.yaml", out="runs/util")
    training.table("metrics")

Each kind's commands (`sandbox train`, `label`, ...) are thin wrappers over
the same functions (`sandbox.core.kinds.RunKind.run` and `resume`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.core import kinds
from sandbox.core.result import RunResult
from sandbox.core.scenario_files import load_scenario

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RunResult", "compare", "fork", "load_scenario", "replay", "resume", "run"]


def run(
    scenario: Any,
    *,
    out: str | Path | None = None,
    models: kinds.GivenModels = None,
    hooks: Any = None,
    ledgers: kinds.Ledgers = (),
) -> RunResult:
    """Run a scenario of any kind (a validated scenario, or a path to a YAML file) and return its result.

    Args:
        scenario: A scenario model of a registered kind, or a scenario file.
        out: The run directory (new or empty); default `runs/<name>-<timestamp>`.
        models: Chat models per role, instead of the scenario's specs (how tests pass a scripted model); for
            the kinds that call chat models (society, labeling, solve).
        hooks: The kind's progress callbacks.
        ledgers: Budget ledgers beyond the run's own (a sweep's).

    Works in scripts and in notebooks (a running event loop is left alone).
    """
    if isinstance(scenario, (str, Path)):
        scenario = load_scenario(scenario)
    kind = kinds.kind_of_scenario(scenario)
    path = kind.call("run", scenario, out, models=models, hooks=hooks, ledgers=ledgers)
    return RunResult.load(path)


def resume(
    path: str | Path,
    *,
    models: kinds.GivenModels = None,
    hooks: Any = None,
    ledgers: kinds.Ledgers = (),
) -> RunResult:
    """Continue an interrupted run of any kind and return its result."""
    kind = kinds.kind_of_dir(path)
    return RunResult.load(kind.call("resume", Path(path), models=models, hooks=hooks, ledgers=ledgers))


def fork(
    run: str | Path,
    *,
    at: int,
    changes: dict[str, Any] | None = None,
    out: str | Path | None = None,
    models: kinds.GivenModels = None,
    hooks: Any = None,
) -> RunResult:
    """Fork the run directory `run` at step `at` (an epoch of a society, a generation of a population), run the fork
    on with `changes` and return its result.

    Args:
        run: A run directory of a kind that checkpoints steps (society, population), held by no process.
        at: The step the fork starts from: its steps before `at` are the run's own (copied, never played again).
        changes: {field: value}: scenario fields by dotted path (`{"population.revision.beta": 2}`), or state edits
            the kind names under `state.` (`{"state.policy": "Share equally."}`); none: the run again from `at`,
            its calls served from its response cache.
        out: The fork's directory (new or empty); default `<run>-fork<at>-<time>` beside the run.
        models: Chat models per role, as for `run` (they must be the run's own for its cache to answer).
        hooks: The kind's progress callbacks.

    Raises:
        UsageError, ScenarioError: a change the kind cannot apply at `at`, a step beyond the run, a run in progress
            or from an older sandbox; nothing is written.
    """
    from sandbox.engine.fork import fork_run

    return RunResult.load(fork_run(run, at, changes, out=out, models=models, hooks=hooks))


def replay(
    run: str | Path, *, out: str | Path | None = None, models: kinds.GivenModels = None, keep: bool = False
) -> Any:
    """Play the finished run `run` again offline, every answer from its response cache (no model called), and
    compare every table: a `sandbox.engine.replay.ReplayReport` (`identical`, each table's check, the first
    difference, the calls, the time against the run's). A fork is replayed from its parent's replay.

    Args:
        out: Keep the replay in this directory (default: a temporary one, removed when identical unless `keep`).
        models: The model objects the run was given (tests): a cache key names its model.
    """
    from sandbox.engine.replay import replay_run

    return replay_run(run, out=out, models=models, keep=keep)


def compare(runs: Sequence[str | Path | RunResult | Sequence[str | Path]], confidence: float = 0.95) -> pd.DataFrame:
    """The branches' headline figure per step, side by side from the step where they part: a parent and its forks,
    or any finished runs of kinds with steps (society, population; no fork step when they share no lineage).

    Args:
        runs: Run directories or results (`result.forks`, `[result, *result.forks]`); a list of directories in
            place of one is one branch run with several seeds, their runs pooled.
        confidence: The level of each interval (across the branch's independent runs; NaN ends with one run).

    Returns:
        One row per branch, step and figure: `branch`, `label`, `kind`, `unit`, `step`, `figure`, `mean`,
        `ci_low`, `ci_high`, `n`; `attrs["fork_step"]` is the fork step. The figure:
        `sandbox.engine.branches.divergence_figure(runs)`.
    """
    from sandbox.engine.branches import compare_branches

    return compare_branches(list(runs), confidence)
