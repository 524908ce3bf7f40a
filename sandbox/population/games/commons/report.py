"""The commons' report: its command-line table and its figure (the stock by month; each fisher's catch)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from rich.markup import escape
from rich.table import Table

from sandbox.population.report.cli import console, read_result

__all__ = ["plot_commons", "print_table"]


def print_table(path: Path) -> None:
    """The run's table on the command line, and where its results are."""
    gens, summary = read_result(path)
    table = Table(title=f"{summary['scenario']}: {summary['agents']} fishers, GovSim's fishery, {summary['model']}")
    for column in (
        "month",
        "stock",
        "asked",
        "caught",
        "left",
        "sustainable each",
        "over-usage",
        "agreed limit",
        "chat",
        "illegal",
    ):
        table.add_column(column, justify="right")
    for _, row in gens.iterrows():
        limit = "" if row["agreed_limit"] != row["agreed_limit"] else str(int(row["agreed_limit"]))
        table.add_row(
            str(int(row["generation"]) + 1),
            str(int(row["stock"])),
            str(int(row["asked"])),
            str(int(row["caught"])),
            str(int(row["left"])) + (" collapsed" if row["collapsed"] else ""),
            str(int(row["sustainable"])),
            f"{row['over_usage']:.0%}",
            limit,
            str(int(row["talk_steps"])),
            f"{row['illegal_rate']:.0%}",
        )
    console.print(table)
    console.print(
        f"survival {summary['survival_months']} of {summary['months']} months; total gain "
        f"{summary['total_gain']:g} tons, efficiency {summary['efficiency']:.2f}, equality "
        f"{summary['equality']:.2f}, over-usage {summary['over_usage']:.0%}; {summary['calls']} calls"
    )
    console.print(
        f"results in [bold]{escape(str(path))}[/]: population.csv, generations.csv, talk.csv, notes.csv, commons.png"
    )


def plot_commons(
    generations: pd.DataFrame, population: pd.DataFrame, *, capacity: int, collapse_below: int, title: str = ""
) -> Figure:
    """A fishery's months: the stock at each month's start and what the harvest left, with the collapse threshold
    (above), and each fisher's catch against the sustainable catch (below)."""
    fig = Figure(figsize=(7, 6))
    top, bottom = fig.subplots(2, 1, sharex=True)
    months = generations["generation"] + 1
    top.plot(months, generations["stock"], marker="o", color="#4c72b0", label="stock at the month's start")
    top.plot(months, generations["left"], marker="x", color="#dd8452", label="left after the harvest")
    top.axhline(collapse_below, color="#c44e52", linestyle="--", linewidth=1, label="collapse below")
    top.set_ylim(0, capacity * 1.05)
    top.set_ylabel("tons of fish")
    top.legend(loc="lower left", fontsize=8)
    top.set_title(title or "Commons", fontsize=10)
    bottom_base = np.zeros(len(months))
    for name, rows in population.groupby("name", sort=False):
        caught = rows.set_index("generation")["caught"].reindex(generations["generation"]).fillna(0).to_numpy()
        bottom.bar(months, caught, bottom=bottom_base, label=str(name))
        bottom_base = bottom_base + caught
    bottom.step(
        months,
        generations["sustainable"] * population["agent"].nunique(),
        where="mid",
        color="black",
        linewidth=1,
        label="sustainable total",
    )
    bottom.set_xlabel("month")
    bottom.set_ylabel("tons caught")
    bottom.legend(loc="upper right", fontsize=7, ncol=3)
    fig.tight_layout()
    return fig
