"""The steps every labeling task shares: the seed tree's branches, progress hooks, the verdicts file a killed run
resumes from, the judge's conditions, asking every (condition, item) once, and the ultimatum test set.

`sandbox.proxy.label_run` (ultimatum and matrix tasks) and
`sandbox.proxy.negotiation_label` build on these.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox.base.jobs import gather_jobs
from sandbox.base.seeding import seed_node
from sandbox.proxy.scenario import AGENT_SEEDS, CALLS, EXAMPLES, SCRAMBLE, TEST, ProxyScenario

__all__ = [
    "AGENT_SEEDS",
    "CALLS",
    "EXAMPLES",
    "SCRAMBLE",
    "TEST",
    "LabelHooks",
    "Partial",
    "ask_all",
    "call_seed",
    "judge_conditions",
]


@dataclass
class LabelHooks:
    """Progress callbacks: `on_start(total, done)` once, `on_item()` per verdict; `on_phase(what, total)` when
    the negotiators start training, then `on_item()` per dialogue."""

    on_start: Callable[[int, int], None] | None = None
    on_item: Callable[[], None] | None = None
    on_phase: Callable[[str, int], None] | None = None


def call_seed(scenario: ProxyScenario, index: int) -> int:
    return int(seed_node(scenario.seed, CALLS, index).generate_state(1)[0])


class Partial:
    """Verdicts appended as they arrive, so a killed run resumes where it stopped."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.done: dict[str, dict[str, Any]] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:  # a line cut off by the kill
                    continue
                self.done[row["key"]] = row
        self._file = path.open("a", encoding="utf-8")

    def add(self, row: dict[str, Any]) -> None:
        self.done[row["key"]] = row
        self._file.write(json.dumps(row) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def judge_conditions(scenario: ProxyScenario) -> list[str]:
    """The judge's conditions: with the user's objective (llm) and without it (no_objective)."""
    block = scenario.proxy
    if block.intent.form == "none":
        return ["no_objective"]
    return ["llm", "no_objective"] if block.no_objective else ["llm"]


async def ask_all(
    conditions: list[str],
    items: list[Any],
    partial: Partial,
    hooks: LabelHooks,
    ask: Callable[[str, int, Any], Awaitable[dict[str, Any]]],
) -> None:
    """Ask every (condition, item) not yet answered, concurrently (the model stack limits how many at once)."""
    jobs = [(condition, index, item) for condition in conditions for index, item in enumerate(items)]
    done = sum(f"{c}:{i}" in partial.done for c, i, _ in jobs)
    todo = [job for job in jobs if f"{job[0]}:{job[1]}" not in partial.done]

    async def one(job: tuple[str, int, Any]) -> None:
        condition, index, item = job
        partial.add({"key": f"{condition}:{index}", **await ask(condition, index, item)})

    on_start, on_item = hooks.on_start, hooks.on_item
    await gather_jobs(
        todo,
        one,
        on_start=on_start and (lambda _: on_start(len(jobs), done)),
        on_done=on_item and (lambda _: on_item()),
    )
