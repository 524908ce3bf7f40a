"""A fork's plan: the checks before anything is written, and each thread's checkpoint at the step
(`sandbox.engine.fork` writes the fork from it; `sandbox.engine.replay` reads runs with the same checks).

The checks: the parent is a run of a kind with steps (`steps_of`), from this engine (a store with checkpoints),
held by no process (`check_run`); the step is one every thread of it has reached; each change is a field of the
scenario that the kind can change at that step, or a state edit it names; the changed scenario validates. Each
failure is `UsageError` or `ScenarioError` (exit 2) naming the cause.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.base.errors import UsageError
from sandbox.base.sync import run_sync
from sandbox.core import kinds
from sandbox.core import run_dir as layout
from sandbox.core.run_dir import is_held
from sandbox.core.scenario_files import load_run_scenario, with_changes
from sandbox.core.steps import Steps, changed_fields, first_differences, split_changes
from sandbox.engine.pruned_store import BOUNDARY
from sandbox.engine.store import last_state, open_store

__all__ = ["ForkPlan", "check_format", "check_run", "plan_fork", "step_count", "steps_of"]


def steps_of(kind: kinds.RunKind) -> Steps:
    """The kind's steps (`RunKind.steps`); `UsageError` when its runs have none to fork or replay at."""
    if kind.steps is None:
        raise UsageError(
            f"{kind.name} runs have no steps to fork at (only runs that checkpoint steps: society, population)"
        )
    steps = kinds.resolve(kind.steps)
    assert isinstance(steps, Steps), f"{kind.steps} is not a Steps"
    return steps


@dataclass
class ForkPlan:
    """What a fork will do, checked before anything is written."""

    parent: Path
    kind: kinds.RunKind
    steps: Steps
    at: int
    scenario: Any
    fields: dict[str, Any]
    edits: dict[str, Any]
    fresh: bool  # a new run of the changed scenario (a start field changed at step 0): no checkpoint is carried
    threads: dict[str, Any] = field(default_factory=dict)  # thread -> the snapshot at the step (not `fresh`)

    def record(self) -> dict[str, Any]:
        from sandbox import __version__

        return {
            "parent": str(self.parent.resolve()),
            "parent_name": self.parent.name,
            "kind": self.kind.name,
            "at": self.at,
            "unit": self.steps.unit,
            "changes": {**self.fields, **{f"state.{k}": v for k, v in self.edits.items()}},
            "fresh": self.fresh,
            "made": time.time(),
            "sandbox": __version__,
        }


def check_run(path: Path, what: str) -> kinds.RunKind:
    """The kind of the run directory `path` that a fork or a replay (`what`) reads; `UsageError` when it is no run
    directory, its kind has no steps, a process holds it, or it has no engine checkpoints."""
    if not path.is_dir():
        raise UsageError(f"{path}: no such run directory")
    kind = kinds.kind_of_dir(path)
    steps_of(kind)
    if is_held(path):
        raise UsageError(f"{path} is in use by a process (a run in progress); {what} it when it has stopped")
    check_format(path, what)
    return kind


def check_format(path: Path, what: str) -> None:
    """`UsageError` when the run `path` has no engine checkpoints: made by an older sandbox (the loops before the
    engine checkpointed in `state.json`), or stopped before its first step."""
    if (path / "state.json").is_file() or not (path / layout.STORE).is_file():
        raise UsageError(
            f"{path} has no engine checkpoints ({layout.STORE}): it was made by an older sandbox, or stopped before "
            f"its first step; run its scenario again to {what} it"
        )


async def _snapshots(parent: Path, steps: Steps, scenario: Any, at: int, count: int) -> dict[str, Any]:
    """Each thread's snapshot at step `at` and the node that wrote it, read from the parent's store."""
    found: dict[str, Any] = {}
    async with open_store(parent) as saver:
        graph = steps.graph(saver, scenario)
        for thread in steps.threads(scenario):
            found[thread] = await _at_step(graph, thread, steps, at, count)
    return found


def _pruned_parent(snapshot: Any, older: Any) -> bool:
    """Whether `snapshot` is a generation's boundary whose parent was pruned (`sandbox.engine.pruned_store`): the
    snapshot before it in the history is not its parent."""
    parent = (snapshot.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    return bool(snapshot.metadata.get(BOUNDARY)) and parent != older.config["configurable"].get("checkpoint_id")


async def _at_step(graph: Any, thread: str, steps: Steps, at: int, count: int) -> tuple[Any, str]:
    """Thread `thread`'s snapshot where step `at` is about to start, and the node that wrote it.

    * Within the run: the snapshot at the step whose next node is the step's first (`Steps.first`: after a
      society's MetaLM has written the step's policy, after a population's record of the step before).
    * At the run's end, or where the fork ends at the step: the first snapshot that counts the step (before a kind's
      closing nodes, SCAI's final proposals), so that the run goes on or ends from there.
    * At the run's end with more steps, for a kind whose run skips a node after its last step (`Steps.redo`: a
      population's revision): the snapshot before that node, one step back, so that the fork runs it.

    A snapshot that a fork's own changes made (LangGraph's `update` source, right after the one chosen) is taken in
    its place, with the writer of the one it follows: a fork of a fork at the same step keeps the first fork's
    changes. Only the snapshots at the step (and one step back) are kept in memory while the history is read.
    """
    candidates: list[list[Any]] = []  # [snapshot, writer], newest first
    done: int | None = None
    last: list[Any] | None = None  # the candidate read just before (newer): this snapshot is its writer's
    async for snapshot in graph.aget_state_history({"configurable": {"thread_id": thread}}):
        if done is None:
            done = int(snapshot.values.get(steps.key, 0))
        if last is not None:
            last[1] = snapshot.next[0] if len(snapshot.next) == 1 else ""
            if _pruned_parent(last[0], snapshot):
                last[1] = steps.last  # its writer's checkpoint was pruned: a boundary, which a step's last node wrote
            last = None
        if int(snapshot.values.get(steps.key, -1)) in (at, at - 1):
            last = [snapshot, ""]
            candidates.append(last)
    oldest_first = candidates[::-1]
    at_step = [(i, c) for i, c in enumerate(oldest_first) if int(c[0].values.get(steps.key, -1)) == at]
    base: int | None = None
    if done == at and count > at and steps.redo is not None and at > 0:
        base = next((i for i, c in enumerate(oldest_first) if c[0].next == (steps.redo,)), None)
    elif done == at or count == at:
        base = at_step[0][0] if at_step else None
    else:
        base = next((i for i, c in at_step if c[0].next == (steps.first,)), None)
    if base is None or not oldest_first[base][1]:
        raise UsageError(f"no checkpoint at {steps.unit} {at} in {thread} (the run's store does not hold one)")
    chosen = base
    while chosen + 1 < len(oldest_first) and oldest_first[chosen + 1][0].metadata.get("source") == "update":
        chosen += 1  # a fork's own changes at this step
    return oldest_first[chosen][0], oldest_first[base][1]


def plan_fork(parent: Path | str, at: int, changes: Mapping[str, Any]) -> ForkPlan:
    """Check a fork of `parent` at step `at` with `changes` ({field: value}, `state.NAME` for a state edit) and say
    what it will do; `UsageError` or `ScenarioError` (exit 2) when it cannot be made. Writes nothing."""
    parent = Path(parent)
    kind = check_run(parent, "fork")
    steps = steps_of(kind)
    if at < 0:
        raise UsageError(f"--at {at}: a {steps.unit} is 0 or more")
    scenario = load_run_scenario(parent)
    _check_step(parent, steps, scenario, at)
    fields, edits = split_changes(changes)
    changed = with_changes(scenario, fields, f"{parent / layout.SCENARIO} with the fork's changes")
    different = changed_fields(scenario.model_dump(mode="json"), changed.model_dump(mode="json"))
    fixed = [f for f in different if steps.is_fixed(f)]
    if edits and steps.edit is None:
        raise UsageError(f"--set state.{next(iter(edits))}: {kind.name} runs take no state edits")
    count = int(step_count(changed.model_dump(mode="json"), steps.count))
    if count < at:
        raise UsageError(f"--set {steps.count}={count}: fewer {steps.unit}s than the fork keeps from its parent ({at})")
    if fixed and at > 0:
        raise UsageError(
            f"--set {first_differences(fixed)}: read when the run starts and then held in its state, so a fork at "
            f"{steps.unit} {at} cannot change it; fork at {steps.unit} 0 (a new run with the parent's cache), or edit "
            f"the state instead ({steps.edits or 'this kind takes no state edits'})"
        )
    fresh = bool(fixed)  # at step 0
    if fresh and edits:
        raise UsageError(
            f"--set state.{next(iter(edits))}: {first_differences(fixed)} make the fork a new run, which has no state "
            "to edit at its start; change the scenario's fields instead"
        )
    plan = ForkPlan(parent, kind, steps, at, changed, dict(fields), dict(edits), fresh)
    if not fresh:
        plan.threads = run_sync(_snapshots(parent, steps, scenario, at, count))
        assert steps.edit is not None or not edits
        for thread, (snapshot, _) in plan.threads.items():
            for name, value in edits.items():
                try:
                    steps.edit(snapshot.values, name, value, changed)  # type: ignore[misc]
                except ValueError as error:
                    raise UsageError(f"--set state.{name}: {error} (at {steps.unit} {at} of {thread})") from None
    return plan


def _check_step(parent: Path, steps: Steps, scenario: Any, at: int) -> None:
    """`UsageError` when a thread of the run has not reached step `at` (read from its last checkpoint)."""
    for thread in steps.threads(scenario):
        state = last_state(parent, thread)
        if not state:
            raise UsageError(f"{parent}: {thread} has no checkpoint (the run stopped before its first {steps.unit})")
        done = int(state.get(steps.key, 0))
        if at > done:
            where = f" ({thread})" if len(steps.threads(scenario)) > 1 else ""
            raise UsageError(
                f"--at {at}: {parent} has played {done} {steps.unit}s{where}; fork at {steps.unit} 0 to {done}"
            )


def step_count(data: Any, path: str) -> Any:
    for part in path.split("."):
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data
