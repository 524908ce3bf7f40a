"""A toy run kind, defined in the tests folder: what a third-party package adds through the registry.

A `toy:` scenario counts `steps` steps; each step appends a row (its index and
a number drawn from the run's seed tree) to `steps.csv` and flushes it, so a
run killed between steps resumes at the next one and ends with the same table.
It uses only the core's public helpers (run directories, holds, the summary
writer, the seed tree), never a method package: the docs' "writing a new
kind" page walks through it.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

from pydantic import Field

from sandbox.base.files import read_csv
from sandbox.base.scenario_model import ScenarioModel, StrictModel
from sandbox.base.seeding import seed_node
from sandbox.core.conformance import ConformanceCase
from sandbox.core.kinds import RunKind, by_option
from sandbox.core.run_dir import RunDirectory, default_out, hold, holding
from sandbox.core.scenario_files import load_run_scenario, parse_kind
from sandbox.core.summary import write_summary

STEPS = "steps.csv"


class ToyBlock(StrictModel):
    """What a toy run does."""

    steps: int = Field(3, ge=1, le=10_000, description="Steps to count.")
    pause_s: float = Field(0.0, ge=0.0, le=10.0, description="Seconds each step waits (a test kills the run then).")


class ToyScenario(ScenarioModel):
    """A toy scenario file: a name, a seed and a `toy:` block."""

    name: str = Field(..., pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    seed: int = Field(0, ge=0)
    toy: ToyBlock = Field(default_factory=ToyBlock)


def _play(run_dir: RunDirectory, scenario: ToyScenario, hooks: Any) -> Path:
    path = run_dir / STEPS
    done = len(read_csv(path)) if path.is_file() and path.stat().st_size else 0
    with path.open("a", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        if done == 0:
            writer.writerow(["step", "draw"])
        for step in range(done, scenario.toy.steps):
            time.sleep(scenario.toy.pause_s)
            draw = int(seed_node(scenario.seed, step).generate_state(1)[0] % 1000)
            writer.writerow([step, draw])
            handle.flush()
            if hooks:
                hooks(step)
    table = read_csv(path)
    write_summary(
        run_dir, {"scenario": scenario.name, "steps": len(table), "total": int(table["draw"].sum())}, kind="toy"
    )
    run_dir.write_status("complete")
    return run_dir.path


def run(
    scenario: ToyScenario, out: Path | str | None = None, *, models: Any = None, hooks: Any = None, ledgers: Any = ()
) -> Path:
    """Count the scenario's steps into a new run directory."""
    path = Path(out) if out is not None else default_out(scenario)
    RunDirectory.check_new(path)
    with hold(path):
        return _play(RunDirectory.create(path, scenario), scenario, hooks)


@holding
def resume(path: Path | str, *, models: Any = None, hooks: Any = None, ledgers: Any = ()) -> Path:
    """Count the steps a killed run had left."""
    run_dir = RunDirectory.open(path)
    run_dir.write_status("running")
    return _play(run_dir, load_run_scenario(path), hooks)


def overrides(scenario: ToyScenario, *, source: str = "<command line>", seed: int | None = None) -> ToyScenario:
    """`sandbox run --seed`."""
    data = scenario.model_dump(mode="json")
    if seed is not None:
        data["seed"] = seed
    return parse_kind("toy", data, source)


def describe(scenario: ToyScenario, *, source: str = "<scenario>") -> str:
    return f"{scenario.toy.steps} steps"


def cli_run(scenario: ToyScenario, out: Path | None, *, source: str = "<scenario>") -> Path:
    path = run(scenario, out)
    print(f"toy run: {len(read_csv(path / STEPS))} steps in {path}")
    return path


def cli_resume(path: Path, **options: Any) -> None:
    by_option(options, (), f"{path}, a toy run")
    resume(path)
    print(f"toy run: {len(read_csv(path / STEPS))} steps in {path}")


def dry_run(scenario: ToyScenario) -> Any:
    import pandas as pd

    return pd.DataFrame([], columns=["role", "calls", "cache_hits", "prompt_tokens", "max_answer_tokens"])


def toy_scenario(tmp: Path) -> ToyScenario:
    from sandbox.core.scenario_files import parse_kind

    return parse_kind("toy", {"name": "toy", "seed": 2, "toy": {"steps": 6}})


# The toy kind's conformance case: the conformance test finds it through the kind, as it finds an installed kind's.
CASE = ConformanceCase(scenario=toy_scenario, hooks=lambda tick: lambda _: tick(), tables=("steps.csv",))

TOY = RunKind(
    name="toy",
    block="toy",
    precedence=90,
    title="a toy scenario",
    description="Counts steps; the tests' example of a kind added from outside the sandbox.",
    model="tests.toy_kind:ToyScenario",
    run="tests.toy_kind:run",
    resume="tests.toy_kind:resume",
    overrides="tests.toy_kind:overrides",
    run_options=("seed",),
    describe="tests.toy_kind:describe",
    dry_run="tests.toy_kind:dry_run",
    cli_run="tests.toy_kind:cli_run",
    cli_resume="tests.toy_kind:cli_resume",
    tables={"steps": STEPS},
    example="tests/toy.yaml",
    conformance="tests.toy_kind:CASE",
)
