"""The public goods game's report: its tables' rows (`MemberPeriod`, `PunishmentRow`, `PeriodRow`, whose fields
are the tables' headers), its command-line table, its figure (the mean contribution by period, overall and by
member, and with punishment the points given per agent), and runs set beside the experiments' figures.

`FG2010_CONTRIBUTION` is Fischbacher & Gächter's (2010) C-experiment: the mean contribution of its 140 subjects in
each of 10 periods (stranger matching, no punishment), computed from the authors' replication data
(`figae_beliefs&contributions.dta` of their AER web appendix). `FG2000_PUNISHMENT_SHARE` is Fehr & Gächter's (2000)
mean contribution with punishment and stranger matching as a share of the endowment (their Result 1, p. 984, as a
secondary source cites it); their per-period table could not be read here. Draw them with
`python -m sandbox.population.games.public_goods.report OUT.png LABEL=RUN_DIR ...`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
from matplotlib.figure import Figure
from rich.markup import escape
from rich.table import Table
from typing_extensions import TypedDict

from sandbox.population.report.cli import console, read_result

if TYPE_CHECKING:
    from sandbox.population.games.public_goods.spec import PublicGoodsSpec

__all__ = [
    "FG2000_PUNISHMENT_SHARE",
    "FG2010_BELIEF",
    "FG2010_CONTRIBUTION",
    "MemberPeriod",
    "PeriodRow",
    "PunishmentRow",
    "generations_columns",
    "plot_against_papers",
    "plot_contributions",
    "print_table",
]

# Fischbacher & Gächter 2010, C-experiment, periods 1-10: the mean contribution (of 20 tokens) and the mean belief
# about the others' contribution, n = 140 (the authors' replication data; the paper's time-path figure)
FG2010_CONTRIBUTION = (7.89, 7.74, 6.26, 5.34, 4.80, 4.05, 3.81, 3.42, 2.75, 2.24)
FG2010_BELIEF = (9.80, 9.41, 8.76, 7.41, 6.71, 5.94, 5.14, 4.46, 4.15, 3.32)
# Fehr & Gächter 2000, stranger matching with punishment: the mean contribution over the periods, as a share of the
# endowment (Result 1, p. 984, as cited by a secondary source; not read from the paper here)
FG2000_PUNISHMENT_SHARE = 0.58


class MemberPeriod(TypedDict):
    """A row of population.csv: the period, the member, its kind, its norm's id and its group, a scripted type's
    belief ("" for none), its contribution, whether it was legal and the attempts, the points it assigned and
    received, whether its points were legal, its payoffs before and after punishment."""

    generation: int
    agent: int
    name: str
    kind: str
    norm: int | str
    group: int
    belief: float | str
    contribution: int
    valid: bool
    attempts: int
    assigned: int
    received: int
    punish_valid: bool
    first_payoff: float
    payoff: float


class PunishmentRow(TypedDict):
    """A row of punishments.csv: the period, the group, who gave the points, to whom, how many."""

    generation: int
    group: int
    punisher: str
    target: str
    points: int


class PeriodRow(TypedDict):
    """A row of generations.csv, but for the mean contribution of each scenario member (`contribution LABEL`, after
    the overall mean): the mean contribution, the mean payoffs before and after punishment, the points given per
    agent, the share of agents punished, the share of the LLM members' answers that were illegal, the seconds so
    far."""

    generation: int
    mean_contribution: float
    mean_first_payoff: float
    mean_payoff: float
    points_per_agent: float
    punished_share: float
    illegal_rate: float
    seconds: float


def generations_columns(labels: Sequence[str]) -> tuple[str, ...]:
    """generations.csv's header: a period row's, with the contribution of each member (by label) after the mean."""
    columns = tuple(PeriodRow.__annotations__)
    at = columns.index("mean_contribution") + 1
    return (*columns[:at], *(f"contribution {label}" for label in labels), *columns[at:])


def print_table(path: Path) -> None:
    """The run's table on the command line, and where its results are."""
    gens, summary = read_result(path)
    by_member = [c for c in gens.columns if c.startswith("contribution ")]
    stage = "with punishment" if summary["punishment"] else "without punishment"
    table = Table(
        title=f"{summary['scenario']}: {summary['agents']} agents in {summary['matching']} groups of "
        f"{summary['group_size']}, {stage}"
    )
    for column in ("period", "mean contribution", *(c.removeprefix("contribution ") for c in by_member)):
        table.add_column(column, justify="right")
    for column in ("mean payoff", "points per agent", "illegal"):
        table.add_column(column, justify="right")
    number = lambda v: "" if v != v or v == "" else f"{float(v):.1f}"
    for _, row in gens.iterrows():
        table.add_row(
            str(int(row["generation"]) + 1),
            number(row["mean_contribution"]),
            *[number(row[c]) for c in by_member],
            number(row["mean_payoff"]),
            f"{row['points_per_agent']:.2f}",
            f"{row['illegal_rate']:.1%}",
        )
    console.print(table)
    console.print(
        f"mean contribution {summary['mean_contribution']:g} of {summary['endowment']} tokens, "
        f"{summary['final_contribution']:g} in the last period; model: {summary['model']}"
    )
    console.print(
        f"results in [bold]{escape(str(path))}[/]: population.csv, punishments.csv, generations.csv, contributions.png"
    )


def plot_contributions(generations: pd.DataFrame, spec: PublicGoodsSpec, title: str = "") -> Figure:
    """Above: the mean contribution by period, overall (black) and by member; below, with punishment: the points
    given per agent by period."""
    punishment = bool(spec.punishment)
    fig = Figure(figsize=(7, 6 if punishment else 4))
    axes = fig.subplots(2, 1, sharex=True) if punishment else [fig.subplots()]
    top = axes[0]
    periods = generations["generation"] + 1
    top.plot(periods, generations["mean_contribution"], color="black", marker="o", label="all members")
    for column in (c for c in generations.columns if c.startswith("contribution ")):
        values = pd.to_numeric(generations[column], errors="coerce")
        if values.notna().any():
            top.plot(periods, values, marker=".", linestyle="--", label=column.removeprefix("contribution "))
    top.set_ylim(-0.5, spec.endowment + 0.5)
    top.set_ylabel(f"mean contribution (of {spec.endowment})")
    top.legend(loc="best", fontsize=8)
    top.set_title(title or "Public goods game", fontsize=10)
    if punishment:
        axes[1].plot(periods, generations["points_per_agent"], color="#c44e52", marker="o")
        axes[1].set_ylabel("punishment points per agent")
    axes[-1].set_xlabel("period")
    fig.tight_layout()
    return fig


def plot_against_papers(runs: dict[str, Path], endowment: int = 20) -> Figure:
    """The mean contribution by period of each run (`runs`: label -> run directory), beside Fischbacher & Gächter's
    C-experiment (no punishment) and Fehr & Gächter's mean with punishment, all as shares of the endowment."""
    from sandbox.base.files import read_csv, read_json

    fig = Figure(figsize=(8, 4.8))
    ax = fig.subplots()
    periods = range(1, len(FG2010_CONTRIBUTION) + 1)
    ax.plot(
        periods,
        [c / 20 for c in FG2010_CONTRIBUTION],
        color="black",
        linewidth=2.5,
        label="Fischbacher & Gächter 2010, no punishment (stranger; data)",
    )
    ax.axhline(
        FG2000_PUNISHMENT_SHARE,
        color="black",
        linestyle=":",
        linewidth=1.5,
        label="Fehr & Gächter 2000, with punishment (stranger; mean over periods, as cited)",
    )
    for label, run in runs.items():
        gens = read_csv(Path(run) / "generations.csv")
        punished = bool(read_json(Path(run) / "summary.json")["punishment"])
        ax.plot(
            gens["generation"] + 1,
            gens["mean_contribution"] / endowment,
            marker="o" if punished else "s",
            linestyle="-" if punished else "--",
            label=label,
        )
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("period")
    ax.set_ylabel("mean contribution (share of the endowment)")
    ax.set_title("The public goods game: the experiments, the scripted types and the embedded model", fontsize=10)
    ax.legend(loc="upper right", fontsize=7)
    fig.tight_layout()
    return fig


if __name__ == "__main__":  # OUT.png LABEL=RUN_DIR ...
    import sys

    out, *pairs = sys.argv[1:]
    plot_against_papers({label: Path(run) for label, run in (p.split("=", 1) for p in pairs)}).savefig(out, dpi=120)
