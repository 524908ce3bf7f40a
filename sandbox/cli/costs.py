"""The command line's table of where a run's time and tokens went: its calls by step and role (`costs.csv`,
`sandbox.core.costs`), printed after `sandbox run` and `sandbox resume`."""

from __future__ import annotations

import numbers
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

from sandbox.core.costs import read_costs

__all__ = ["SHOWN_STEPS", "costs_table", "print_costs"]

SHOWN_STEPS = 10  # steps shown at most: the first and the last ones, the rest summed in the total


def _number(value: object, digits: int = 0) -> str:
    """A cell: empty for no value, else a number with thousands separated."""
    if not isinstance(value, numbers.Real) or value != value:  # None, pandas' NA, NaN: no value
        return ""
    return f"{float(value):,.{digits}f}" if digits else f"{round(float(value)):,}"


def costs_table(path: Path) -> Table | None:
    """The run's calls by step and role as a Rich table with a total row; None when it made no call."""
    costs = read_costs(path)
    if costs.empty:
        return None
    costs = costs.assign(step=[None if pd.isna(step) else int(step) for step in costs["step"]])  # NA: no step
    steps = list(dict.fromkeys(costs["step"].tolist()))
    cut = len(steps) > SHOWN_STEPS
    shown = set(steps[: SHOWN_STEPS // 2] + steps[-(SHOWN_STEPS // 2) :]) if cut else set(steps)
    priced = costs["usd"].notna().any()
    table = Table(title="LLM calls by step and role (costs.csv)", title_justify="left")
    for column in ("step", "role", "calls", "cache hits", "tokens in", "tokens out", "p50 s", "p95 s"):
        table.add_column(column, justify="left" if column == "role" else "right")
    if priced:
        table.add_column("US$", justify="right")
    for index, row in costs.iterrows():
        if row["step"] not in shown:
            if cut and index and costs["step"].iloc[index - 1] in shown and row["step"] == steps[SHOWN_STEPS // 2]:
                table.add_row("…", f"{len(steps) - SHOWN_STEPS} steps more (costs.csv)", *[""] * (6 + priced))
            continue
        step = "" if row["step"] is None else str(row["step"])
        cells = [
            step or "(none)",
            str(row["role"]),
            _number(row["calls"]),
            _number(row["cache_hits"]),
            _number(row["input_tokens"]),
            _number(row["output_tokens"]),
            _number(row["latency_p50_s"], 3),
            _number(row["latency_p95_s"], 3),
        ]
        table.add_row(*cells, *([_number(row["usd"], 4)] if priced else []))
    total = [
        "total",
        "",
        _number(costs["calls"].sum()),
        _number(costs["cache_hits"].sum()),
        _number(costs["input_tokens"].sum()),
        _number(costs["output_tokens"].sum()),
        "",
        "",
    ]
    table.add_row(*total, *([_number(costs["usd"].sum(), 4)] if priced else []), style="bold")
    return table


def print_costs(path: Path | None, console: Console | None = None) -> None:
    """Print the run's calls by step and role (nothing for a run that made no call), and the roles a `rules:` model
    answered (not an LLM)."""
    if path is None:
        return
    table = costs_table(Path(path))
    console = console or Console()
    if table is not None:
        console.print(table)
    from sandbox.core.summary import roles_not_an_llm

    for role, spec in roles_not_an_llm(Path(path)).items():
        console.print(
            f"[bold yellow]not an LLM:[/] the {role} role was answered by {spec}, a dry pipeline's function: "
            "these are no results of LLM agents",
            soft_wrap=True,
            markup=True,
        )
