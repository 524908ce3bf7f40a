"""The sweep kind: a grid of runs of any other kind (a base scenario x overrides x seeds), on a local process
pool or Ray, in one directory.

Registered under the entry-point group `sandbox.kinds`; importing this module
imports nothing else of the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.core.kinds import GivenModels, Ledgers, RunKind, by_option

if TYPE_CHECKING:
    from sandbox.sweep.config import SweepFile


__all__ = ["SWEEP"]


def load(path: Path | str, data: Any = None) -> Any:
    """A sweep file with its base scenario read in (`sandbox.sweep.config.read_sweep`)."""
    from sandbox.sweep.config import read_sweep

    return read_sweep(path, data)


def run(
    scenario: SweepFile,
    out: Path | str | None = None,
    *,
    models: GivenModels = None,
    hooks: Any = None,
    ledgers: Ledgers = (),
) -> Path:
    """Play every run of the sweep (`sandbox.sweep.run.start_sweep`); `hooks`: (on_start, on_run) callbacks."""
    from sandbox.base.errors import UsageError
    from sandbox.sweep.run import start_sweep

    if models or ledgers:
        raise UsageError("a sweep's runs take their models from their scenarios; its budget is sweep.budget")
    on_start, on_run = hooks or (None, None)
    return start_sweep(
        scenario.model_dump(mode="json"), f"<sweep {scenario.name}>", Path("."), out, on_start=on_start, on_run=on_run
    )


def resume(path: Path | str, *, models: GivenModels = None, hooks: Any = None, ledgers: Ledgers = ()) -> Path:
    """Finish the sweep's unfinished runs (`sandbox.sweep.run.run_sweep`)."""
    from sandbox.sweep.run import run_sweep

    on_start, on_run = hooks or (None, None)
    return run_sweep(path, on_start=on_start, on_run=on_run)


def owns_dir(path: Path) -> bool:
    from sandbox.sweep.run import is_sweep

    return is_sweep(path)


def overrides(
    scenario: SweepFile, *, source: str = "<command line>", seed: int | None = None, models: list[str] | None = None
) -> SweepFile:
    """`sandbox run SWEEP --model ROLE=SPEC --seed K` (`sandbox.sweep.config.with_base_options`)."""
    from sandbox.sweep.config import with_base_options

    return with_base_options(scenario, source, seed=seed, models=models)


def describe(scenario: SweepFile, *, source: str = "<scenario>") -> str:
    from sandbox.sweep.config import base_data, expand

    runs = expand(scenario, base_data(scenario, source), source)
    return f"a sweep of {len(runs)} {runs[0].kind} runs"


def runs(scenario: SweepFile, source: str = "<scenario>") -> list[tuple[str, Any]]:
    """The sweep's runs as (kind name, scenario) pairs, validated (for the dry run)."""
    from sandbox.sweep.config import base_data, expand

    return [(run.kind, run.scenario) for run in expand(scenario, base_data(scenario, source), source)]


def cli_run(scenario: SweepFile, out: Path | None, *, source: str = "<scenario>") -> Path:
    """`sandbox run` of a sweep file (as `sandbox sweep`, with the file's executor and workers)."""
    from sandbox.sweep.commands import sweep_with_progress
    from sandbox.sweep.run import start_sweep

    return sweep_with_progress(
        lambda on_start, on_run: start_sweep(
            scenario.model_dump(mode="json"), source, Path("."), out, on_start=on_start, on_run=on_run
        )
    )


def cli_resume(
    path: Path,
    *,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    max_cost: float | None = None,
    executor: str | None = None,
    address: str | None = None,
    workers: int | None = None,
    **others: Any,
) -> None:
    """`sandbox resume` of a sweep: its unfinished runs (`--max-*` raise the sweep's budget; `--executor`,
    `--address`, `--workers` say where they run)."""
    from sandbox.base.errors import UsageError
    from sandbox.sweep.commands import sweep_with_progress
    from sandbox.sweep.config import load_sweep
    from sandbox.sweep.run import run_sweep

    by_option(others, (), f"{path}, a sweep")
    if executor not in (None, "local", "ray"):
        raise UsageError(f"--executor is local or ray, not {executor!r}")
    budget = load_sweep(path / "sweep.yaml")[0].sweep.budget.with_caps(
        max_calls=max_calls, max_tokens=max_tokens, max_cost=max_cost
    )
    sweep_with_progress(
        lambda on_start, on_run: run_sweep(
            path,
            budget=budget,
            executor=executor or ("ray" if address else None),
            workers=workers,
            address=address,
            on_start=on_start,
            on_run=on_run,
        )
    )


SWEEP = RunKind(
    name="sweep",
    block="sweep",
    precedence=0,
    title="a sweep file",
    command="sweep",
    description="A grid of runs of any kind: a base scenario, overrides by field path and seeds, on a local "
    "process pool or Ray; sweep.csv joins each run's overrides with its summary.",
    model="sandbox.sweep.config:SweepFile",
    load="sandbox.sweep.kind:load",
    run="sandbox.sweep.kind:run",
    resume="sandbox.sweep.kind:resume",
    describe="sandbox.sweep.kind:describe",
    overrides="sandbox.sweep.kind:overrides",
    expand="sandbox.sweep.kind:runs",
    owns_dir="sandbox.sweep.kind:owns_dir",
    cli_run="sandbox.sweep.kind:cli_run",
    cli_resume="sandbox.sweep.kind:cli_resume",
    tables={"sweep": "sweep.csv", "seeds": "seeds.csv", "runs": "runs.csv"},
    commands=("sandbox.sweep.commands",),
    benchmarks={"sweep": "sandbox.sweep.bench:bench_sweep"},
    conformance="sandbox.sweep.conformance:CASE",
    example="scenarios/sweeps/scai_norms.yaml",
    view="sandbox.sweep.view:view",
    budget=True,
)
