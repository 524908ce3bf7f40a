"""A chain on disk: each stage a run directory of its own kind inside the chain's, linked by `chain.json`.

Layout:
    scenario.yaml       the chain scenario, its society read in; resume reads it
    run.json            status (running, complete, failed), timings
    chain.json          the manifest: each stage's directories, kind, status and wall time
    society/            (a) a society run: the assistant learns a policy (kind society)
    judge/              (b) the judge labels every move under the learned policy (kind judge)
    distill/seed-N/     (c) a student trained on the judged reward, one per seed (kind distill, no evaluation)
    evaluate/SUBJECT/   (d) the society again with the subject as its assistant and nothing learning (kind society):
                        assistant (the learned policy, fixed), student-seed-N (no policy, no MetaLM), base
    comparison.csv, comparison.png, summary.json      (e) users, assistant, students and base side by side

A stage whose directories are complete is not run again; one left half-way
is resumed by its own kind; so a chain killed anywhere and resumed ends with
the tables of one that was not. `rerun_from` (`--from STAGE`) removes that
stage's directories and those of the stages after it, and runs them with the
chain file's current settings; the stages before it must be complete and
unchanged. The stages' LLM calls count against one budget (`chain.budget`,
`budget.json`).

Stages run through the kind registry (`sandbox.core.kinds`), so the chain calls
each kind as `sandbox run` would.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sandbox.base.errors import ScenarioError, UsageError
from sandbox.base.files import read_json, read_yaml
from sandbox.chain.layout import MANIFEST, stage_runs
from sandbox.chain.scenario import STAGES, ChainScenario
from sandbox.chain.stages import distill_scenario, evaluation_scenario, judge_scenario
from sandbox.core import kinds
from sandbox.core.kinds import GivenModels, Ledgers
from sandbox.core.run_dir import SCENARIO, RunDirectory, atomic_write_text, default_out, hold, run_status

__all__ = ["ChainHooks", "resume_chain", "run_chain"]

BUDGET = "budget.json"


@dataclass
class ChainHooks:
    """Progress callbacks: `on_stage(stage, directory, state)` with state `start`, `skip` (already complete),
    `resume` or `done`; `on_step()` after each episode of a stage that has them."""

    on_stage: Callable[[str, str, str], None] = lambda stage, directory, state: None
    on_step: Callable[[], None] = lambda: None


def _ledgers(scenario: ChainScenario, path: Path) -> list[Any]:
    from sandbox.llm.budget import FileLedger

    budget = scenario.chain.budget
    return [FileLedger(budget, path / BUDGET, name="chain")] if budget.limits() else []


def _manifest(path: Path) -> dict[str, Any]:
    return read_json(path / MANIFEST) if (path / MANIFEST).is_file() else {"stages": {}}


def _write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    atomic_write_text(path / MANIFEST, json.dumps(manifest, indent=2))


def _record(path: Path, stage: str, **fields: Any) -> None:
    manifest = _manifest(path)
    manifest["stages"][stage] = {**manifest["stages"].get(stage, {}), **fields}
    _write_manifest(path, manifest)


def _kind_hooks(kind: str, hooks: ChainHooks) -> Any:
    if kind == "society":
        from sandbox.society.runner import ProgressHooks

        return ProgressHooks(on_episode=lambda _: hooks.on_step())
    if kind == "distill":
        from sandbox.training.hooks import TrainHooks

        return TrainHooks(on_episode=lambda _: hooks.on_step())
    return hooks.on_step  # the judge: after each move labelled


def _start_and_go_on(kind: str, models: GivenModels, ledgers: Ledgers) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """How a stage directory of `kind` starts and how it goes on: through the registry, or (a distillation) without
    its own evaluation (stage (d) is the chain's) and with no budget (its judge is not asked)."""
    if kind == "distill":
        from sandbox.distill.run import distill_scenario as start
        from sandbox.distill.run import resume_distill

        return (
            lambda scenario, directory, hooks: start(scenario, directory, hooks=hooks, evaluate=False),
            lambda directory, hooks: resume_distill(directory, hooks=hooks, evaluate=False),
        )
    found = kinds.get(kind)
    return (
        lambda scenario, directory, hooks: found.call(
            "run", scenario, directory, models=models, hooks=hooks, ledgers=ledgers
        ),
        lambda directory, hooks: found.call("resume", directory, models=models, hooks=hooks, ledgers=ledgers),
    )


def _play(
    kind: str,
    build: Callable[[], Any],
    directory: Path,
    ledgers: Ledgers,
    hooks: ChainHooks,
    stage: str,
    name: str,
    models: GivenModels,
) -> None:
    """Run (new), resume (half-way) or skip (complete) one stage directory with its kind (`models`: chat models
    by role instead of the scenario's specs)."""
    status = run_status(directory)
    if status == "complete":
        hooks.on_stage(stage, name, "skip")
        return
    start, go_on = _start_and_go_on(kind, models, ledgers)
    progress = _kind_hooks(kind, hooks)
    if status == "new":
        hooks.on_stage(stage, name, "start")
        if directory.exists():
            shutil.rmtree(directory)  # a directory the kind had not yet written its scenario into
        start(build(), directory, progress)
    else:
        hooks.on_stage(stage, name, "resume")
        go_on(directory, progress)
    hooks.on_stage(stage, name, "done")


def _stage_models(models: GivenModels, stage: str, name: str) -> GivenModels:
    """The chat models given for one stage directory: the judge's for the judge; the society's roles for the
    society and the assistant subject; the users' (and the MetaLM's) alone where a student or the base plays."""
    if not models:
        return None
    if stage == "judge":
        return {"judge": models["judge"]} if "judge" in models else None
    roles = ("user", "assistant", "meta") if name in ("society", "evaluate/assistant") else ("user", "meta")
    return {role: models[role] for role in roles if role in models} or None


def _run_stages(path: Path, scenario: ChainScenario, hooks: ChainHooks, models: GivenModels = None) -> Path:
    """Every stage in order (a complete one skipped), then the comparison; the chain's status on the way out."""
    from sandbox.core.budget import budget_stop
    from sandbox.llm.budget import BudgetExhaustedError

    pending = _manifest(path).get("rerun_from")
    if pending is not None:  # a rerun killed while it removed the stages it reruns: remove the rest
        _remove_from(path, scenario, pending)
    run_dir = RunDirectory(path)
    run_dir.write_status("running")
    try:
        _stages(path, scenario, hooks, models)
    except BudgetExhaustedError as error:
        budget_stop(run_dir, [error])  # stopped, and how to go on with a higher cap
    except Exception as error:
        run_dir.write_status("failed", reason=repr(error))
        raise
    except BaseException:  # Ctrl-C, a kill
        run_dir.write_status("interrupted")
        raise
    run_dir.write_status("complete", finished=time.time())
    return path


def _stages(path: Path, scenario: ChainScenario, hooks: ChainHooks, models: GivenModels) -> None:
    ledgers = _ledgers(scenario, path)
    runs = stage_runs(scenario)
    plan: dict[str, list[tuple[str, str, Callable[[], Any]]]] = {
        "society": [("society", "society", scenario.society)],
        "judge": [("judge", "judge", lambda: judge_scenario(scenario, path))],
        "distill": [
            ("distill", d, lambda i=i: distill_scenario(scenario, path, i)) for i, d in enumerate(runs["distill"])
        ],
        "evaluate": [("society", d, lambda d=d: evaluation_scenario(scenario, path, d)) for d in runs["evaluate"]],
    }
    for stage in STAGES[:-1]:
        started = time.time()
        for kind, name, build in plan[stage]:
            _play(
                kind,
                build,
                path / name,
                [] if kind == "distill" else ledgers,
                hooks,
                stage,
                name,
                _stage_models(models, stage, name),
            )
        seconds = _manifest(path)["stages"].get(stage, {}).get("seconds", 0.0)
        _record(path, stage, dirs=runs[stage], status="complete", seconds=round(seconds + time.time() - started, 3))
    from sandbox.chain.compare import compare

    hooks.on_stage("compare", "", "start")
    compare(path, scenario)
    _record(path, "compare", dirs=[], status="complete")
    hooks.on_stage("compare", "", "done")


def _stored(path: Path) -> ChainScenario:
    from sandbox.core.scenario_files import parse_kind

    return parse_kind("chain", read_yaml(path / SCENARIO), str(path / SCENARIO))


def _parts(scenario: ChainScenario, path: Path) -> dict[str, Any]:
    """What each stage is built from: a stage after a changed part is not kept by `--from`."""
    data = scenario.model_dump(mode="json")["chain"]
    unjudged = {"name", "concurrency", "training", "label"}
    return {
        "society": data["society"],
        "judge": judge_scenario(scenario, path).model_dump(mode="json", exclude=unjudged),
        "distill": [
            distill_scenario(scenario, path, i).model_dump(mode="json", exclude={"name"})
            for i in range(scenario.chain.seeds)
        ],
        "evaluate": [data["evaluation"], data["distill"]["form"], data["training"]["ppo"]],
    }


def _with_society(scenario: ChainScenario, source: str) -> ChainScenario:
    """`scenario` with its society read in (a file name given through the Python API), checked as a file is."""
    if not isinstance(scenario.chain.society, str):
        return scenario
    from sandbox.core.scenario_files import parse_kind

    data = scenario.model_dump(mode="json")
    data["chain"]["society"] = scenario.society().model_dump(mode="json")
    return parse_kind("chain", data, source)


def run_chain(
    scenario: ChainScenario,
    out: Path | str | None = None,
    *,
    rerun_from: str | None = None,
    hooks: ChainHooks | None = None,
    source: str = "<scenario>",
    models: GivenModels = None,
) -> Path:
    """Run the chain into `out` (new), or go on with the chain already there; return its directory.

    Args:
        scenario: The chain scenario (its society read in; a file name is read relative to the working directory).
        out: The chain's directory (default `runs/<name>-<time>`). One that holds this chain goes on from where it
            stopped; one that holds other files is refused.
        rerun_from: A stage: its directories and those after it are removed and run again with `scenario`'s
            settings; the stages before it must be complete and unchanged.
        hooks: Progress callbacks.
        source: The scenario file's name, for error messages.
        models: Chat models by role (user, assistant, meta, judge) instead of the stages' specs; the students and
            the base model are the chain's own.
    """
    from sandbox.core.kinds import get as kind_named

    kind_named("chain").require(scenario)  # the extras it needs (a smollm2 student, an hf: judge), first
    path = Path(out) if out is not None else default_out(scenario)
    if rerun_from is not None and rerun_from not in STAGES:
        raise UsageError(f"--from {rerun_from}: not a stage (the stages: {', '.join(STAGES)})")
    scenario = _with_society(scenario, source)  # a society file that cannot be read writes nothing
    held = _held_kind(path)
    if held not in (None, "chain"):
        option = f"--from {rerun_from}: " if rerun_from is not None else ""
        raise UsageError(f"{option}{path} holds a run of kind {held}, not a chain; give the chain another --out")
    chain_dir = held == "chain"
    if not chain_dir:
        if rerun_from is not None:
            raise UsageError(f"--from {rerun_from}: {path} holds no chain to rerun; run it without --from first")
        RunDirectory.check_new(path)
    else:
        _check_rerun(path, scenario, rerun_from)
    with hold(path):
        if not chain_dir:
            RunDirectory.create(path, scenario)
            _write_manifest(path, {"stages": {}})
        elif rerun_from is not None:
            # Marked first: a rerun killed while it removes the old stages removes the rest when it goes on.
            manifest = _manifest(path)
            _write_manifest(path, {**manifest, "rerun_from": rerun_from})
            atomic_write_text(path / SCENARIO, yaml.safe_dump(scenario.model_dump(mode="json"), sort_keys=False))
            _remove_from(path, scenario, rerun_from)
        return _run_stages(path, scenario, hooks or ChainHooks(), models)


def _held_kind(path: Path) -> str | None:
    """The kind of the run in `path` (a chain's, or another kind's), None when it holds none."""
    from sandbox.core.kinds import kind_of_dir

    try:
        return kind_of_dir(path).name
    except UsageError:  # no run directory there
        return None


def _check_rerun(path: Path, scenario: ChainScenario, rerun_from: str | None) -> None:
    """`UsageError` when the chain in `path` cannot go on with `scenario` (from `rerun_from`)."""
    stored = _stored(path)
    mine, theirs = _parts(scenario, path), _parts(stored, path)
    changed = [stage for stage in STAGES[:-1] if mine[stage] != theirs[stage]]
    if rerun_from is None:
        if changed:
            raise UsageError(
                f"{path} holds this chain with other settings for the {changed[0]} stage; rerun from "
                f"it with --from {changed[0]}, or give another --out"
            )
        return
    keep = STAGES[: STAGES.index(rerun_from)]
    early = [stage for stage in changed if stage in keep]
    if early:
        raise UsageError(f"--from {rerun_from}: the {early[0]} stage's settings changed too; rerun --from {early[0]}")
    for stage in keep:
        for directory in stage_runs(stored)[stage]:
            if run_status(path / directory) != "complete":
                raise ScenarioError(
                    str(path / MANIFEST),
                    [
                        (
                            f"stages.{stage}",
                            f"--from {rerun_from}: {path / directory} is missing or unfinished; rerun --from {stage}",
                        )
                    ],
                )


def _remove_from(path: Path, scenario: ChainScenario, stage: str) -> None:
    """Remove `stage`'s folder and the later stages' (`distill/`, `evaluate/` whole: students of seeds the new
    file no longer has go too), then the mark."""
    manifest = _manifest(path)
    for name in STAGES[STAGES.index(stage) :]:
        for folder in {directory.split("/")[0] for directory in stage_runs(scenario)[name]}:
            shutil.rmtree(path / folder, ignore_errors=True)
        manifest["stages"].pop(name, None)
    for name in ("comparison.csv", "comparison.png", "summary.json"):
        (path / name).unlink(missing_ok=True)
    manifest.pop("rerun_from", None)
    _write_manifest(path, manifest)


def resume_chain(
    path: Path | str,
    *,
    hooks: ChainHooks | None = None,
    models: GivenModels = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    max_cost: float | None = None,
) -> Path:
    """Go on with a chain from where it stopped (a finished stage is not run again); `max_*` raise its budget's
    caps (written into its `scenario.yaml`)."""
    path = Path(path)
    with hold(path, create=False):
        scenario = _stored(path)
        if any(v is not None for v in (max_calls, max_tokens, max_cost)):
            budget = scenario.chain.budget.with_caps(max_calls=max_calls, max_tokens=max_tokens, max_cost=max_cost)
            scenario = scenario.model_copy(update={"chain": scenario.chain.model_copy(update={"budget": budget})})
            atomic_write_text(path / SCENARIO, yaml.safe_dump(scenario.model_dump(mode="json"), sort_keys=False))
        return _run_stages(path, scenario, hooks or ChainHooks(), models)
