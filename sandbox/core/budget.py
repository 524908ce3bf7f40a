"""A run directory's budget: its ledgers (its own cap, from what its transcript says it spent, and a sweep's), a
stop when a cap is reached, and a higher cap written for `sandbox resume --max-calls N`; `stop_run`, what a run
does when anything stops it.

The caps and ledgers themselves are the LLM layer's (`sandbox.llm.budget`);
this module joins them to run directories.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import yaml

from sandbox.base.errors import RunFailedError
from sandbox.base.files import read_yaml
from sandbox.core import run_dir as layout
from sandbox.llm.budget import Budget, BudgetExhaustedError, Ledger, spent_in_transcript

__all__ = ["budget_stop", "raise_budget", "run_ledgers", "set_budget", "stop_run"]


def run_ledgers(run_dir: Any, scenario: Any, ledgers: Sequence[Any] = ()) -> list[Any]:
    """The budget ledgers of a run: its own (`scenario.budget`, starting from what its transcript says it spent,
    so a resumed run counts both sessions), then `ledgers` (a sweep's)."""
    from sandbox.llm.resolve import scenario_prices
    from sandbox.llm.transcript import read_transcript

    own = []
    if scenario.budget.limits():
        # the run's own transcript, and that of a game it solved first (a society's guided members', in guided/)
        paths = [run_dir / layout.TRANSCRIPTS, run_dir / layout.GUIDED / layout.TRANSCRIPTS]
        spent = spent_in_transcript(
            [r for p in paths if p.is_file() for r in read_transcript(p)], scenario_prices(scenario, by="role")
        )
        own.append(Ledger(scenario.budget, spent, name="run"))
    return [*own, *ledgers]


def budget_stop(run_dir: Any, failures: Sequence[BaseException]) -> None:
    """If a budget stopped the run: say so in its status and raise `BudgetExhaustedError` with how to go on."""
    stopped = next((f for f in failures if isinstance(f, BudgetExhaustedError)), None)
    if stopped is None:
        return
    run_dir.write_status("stopped", reason=str(stopped))
    raise BudgetExhaustedError(
        f"{stopped}: the run stopped cleanly. Finish it with a higher cap: "
        f"sandbox resume {run_dir.path} --max-calls N (or --max-tokens, --max-cost)"
    )


def stop_run(run_dir: Any, error: BaseException, what: str) -> NoReturn:
    """Mark a run that `error` stopped, then raise: a budget cap reached is `stopped` (`budget_stop`); an error
    `failed`, raised again as `RunFailedError` saying that `what` failed and how to resume; an interrupt (Ctrl-C, a
    kill, a cancellation) `interrupted`, raised again as it is. Call it from an `except BaseException` block."""
    budget_stop(run_dir, [error])
    failed = isinstance(error, Exception)
    run_dir.write_status("failed" if failed else "interrupted", error=f"{type(error).__name__}: {error}")
    if failed:
        raise RunFailedError(
            f"{what} failed: {type(error).__name__}: {error}\n"
            f"The run directory is resumable: sandbox resume {run_dir.path}"
        ) from error
    raise error


def set_budget(run_dir: Any, budget: Budget) -> None:
    """Write `budget` into a run's `scenario.yaml` (a higher cap, to finish a run a cap stopped): it changes what
    the run may spend, not what it does."""
    data = read_yaml(run_dir / layout.SCENARIO)
    data["budget"] = budget.model_dump()
    layout.atomic_write_text(run_dir / layout.SCENARIO, yaml.safe_dump(data, sort_keys=False))


def raise_budget(
    path: Path | str, *, calls: int | None = None, tokens: int | None = None, usd: float | None = None
) -> Budget | None:
    """The run's `budget:` with the caps given (`sandbox resume --max-calls N ...`) written into its
    `scenario.yaml`; None (nothing written) when none is given."""
    run_dir = layout.RunDirectory.open(path)
    budget = Budget(**(read_yaml(run_dir / layout.SCENARIO).get("budget") or {})).with_caps(
        max_calls=calls, max_tokens=tokens, max_cost=usd
    )
    if budget is not None:
        set_budget(run_dir, budget)
    return budget


CAP_OPTIONS = ("max_calls", "max_tokens", "max_cost")  # `sandbox resume --max-calls N --max-tokens N --max-cost USD`


def resume_options(path: Path | str, options: dict[str, Any], what: str, *, budget: bool = True) -> None:
    """`sandbox resume`'s options for a run of a kind without options of its own: the `--max-*` caps raise the run's
    budget (`raise_budget`; a run without `budget` caps takes none), any other one is exit 2 naming it and `what`."""
    from sandbox.core.kinds import by_option

    by_option({k: v for k, v in options.items() if k not in CAP_OPTIONS or not budget}, (), what)
    if budget:
        raise_budget(
            path, calls=options.get("max_calls"), tokens=options.get("max_tokens"), usd=options.get("max_cost")
        )
