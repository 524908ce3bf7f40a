"""The ultimatum population's report: its command-line table and its figure (the offered share by kind of agent,
the acceptance rate)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from rich.markup import escape
from rich.table import Table

from sandbox.population.report.cli import console, read_result
from sandbox.population.report.plots import shares_plot

__all__ = ["plot_ultimatum", "print_table"]


def print_table(path: Path) -> None:
    """The run's table on the command line, and where its results are."""
    gens, summary = read_result(path)
    table = Table(title=f"{summary['scenario']}: {summary['agents']} agents, ultimatum game, rule {summary['rule']}")
    for column in ("generation", "offered share", "members'", "fixed members'", "assistant's", "acceptance", "illegal"):
        table.add_column(column, justify="right")
    share = lambda v: "" if v != v or v == "" else f"{float(v):.0%}"
    for _, row in gens.iterrows():
        table.add_row(
            str(int(row["generation"])),
            share(row["mean_offered_share"]),
            share(row["members_offered_share"]),
            share(row["fixed_offered_share"]),
            share(row["assistant_offered_share"]),
            share(row["acceptance_rate"]),
            f"{row['illegal_rate']:.1%}",
        )
    console.print(table)
    console.print(
        f"{summary['norm_versions']} principles, {summary['revisions_changed']} revisions changed one, "
        f"{summary['illegal_revisions']} illegal; {summary['calls']} calls"
    )
    console.print(
        f"results in [bold]{escape(str(path))}[/]: episodes.csv, population.csv, norms.csv, revisions.csv, "
        "generations.csv, ultimatum.png"
    )


def plot_ultimatum(generations: pd.DataFrame, title: str = "") -> Figure:
    """An ultimatum population's generations: the mean offered share of the stake, by kind of agent (members, fixed
    members, the assistant), and the acceptance rate."""
    dots = {"marker": "."}
    return shares_plot(
        generations,
        [
            ("mean_offered_share", "all agents' offers", {"color": "black", "marker": "o"}),
            ("members_offered_share", "members' offers", {"color": "#4c72b0", **dots}),
            ("fixed_offered_share", "fixed members' offers", {"color": "#c44e52", **dots}),
            ("assistant_offered_share", "the assistant's offers", {"color": "#55a868", **dots}),
            ("acceptance_rate", "acceptance rate", {"color": "grey", "linestyle": "--"}),
        ],
        xlabel="generation",
        ylabel="offered share of the stake",
        title=title or "Ultimatum population",
    )
