"""One run of a sweep, in whatever process an executor gives it: start it, or resume it, or skip it when done.

`execute_run` takes plain data only (a path, a kind, the scenario as a dict,
the sweep's budget), so a process pool and Ray can both ship it. The run's
directory is held while it runs (`sandbox.core.run_dir.hold`), so a run is never
played by two workers at once, even by two sweeps over one directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["execute_run"]


def _start_or_resume(path: Path, kind: str, scenario: Any, ledgers: list[Any]) -> None:
    from sandbox.core.kinds import get

    run_kind = get(kind)
    counted = ledgers if run_kind.budget else []  # training and distillation runs count no budget
    if (path / "scenario.yaml").is_file():
        run_kind.call("resume", path, ledgers=counted)
    else:
        run_kind.call("run", scenario, path, ledgers=counted)


def execute_run(
    path: str, kind: str, scenario: dict[str, Any], budget: dict[str, Any] | None = None, ledger: str | None = None
) -> dict[str, Any]:
    """Play the run at `path` to its end (skipped when complete); return its id, status and error.

    Args:
        path: The run's directory.
        kind: The scenario's kind (society, training, proxy, dialogue, distill).
        scenario: The run's scenario, as data.
        budget: The sweep's budget (a `Budget` as data), counted in the file `ledger` shared by the sweep's runs
            (society, labeling and solve runs; training and distillation runs are not counted).
    """
    from sandbox.base.errors import SandboxError
    from sandbox.core.run_dir import run_status
    from sandbox.core.scenario_files import parse_kind
    from sandbox.llm.budget import Budget, BudgetExhaustedError, FileLedger

    run_dir = Path(path)
    outcome: dict[str, Any] = {"id": run_dir.name, "status": "complete", "error": None}
    if run_status(run_dir) == "complete":
        outcome["status"] = "skipped"  # finished before: its results stand
        return outcome
    ledgers = [FileLedger(Budget(**budget), ledger)] if budget and ledger and Budget(**budget).limits() else []
    try:
        parsed = parse_kind(kind, scenario, f"{run_dir.name}'s scenario")
        _start_or_resume(run_dir, kind, parsed, ledgers)
    except BudgetExhaustedError as error:
        outcome.update(status="stopped", error=str(error))
    except SandboxError as error:
        outcome.update(status="failed", error=str(error))
    except Exception as error:
        outcome.update(status="failed", error=f"{type(error).__name__}: {error}")
    return outcome
