"""The naming game's report: its command-line tables (LLM and scripted agents), its figures (one run's generations:
`plot_naming`, `plot_naming_scripted`) and the phase diagram of a sweep over the committed fraction and the
population's size (`naming_phase_table` reads the runs, `naming_phase` and `plot_naming_phase` draw it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from rich.markup import escape
from rich.table import Table

from sandbox.population.report.across_runs import game_runs
from sandbox.population.report.cli import console, read_result
from sandbox.population.report.plots import shares_plot

__all__ = [
    "PAPER_FLIPS",
    "TIPPING_POINT",
    "naming_phase",
    "naming_phase_table",
    "plot_naming",
    "plot_naming_phase",
    "plot_naming_scripted",
    "print_scripted_table",
    "print_table",
]

TIPPING_POINT = 0.0979  # Xie et al. 2011: the binary agreement model's mean-field tipping point
PHASE_COLUMNS = ("agents", "committed_share", "consensus_reached")  # the others read where there


def plot_naming_scripted(generations: pd.DataFrame, words: Sequence[str], title: str = "") -> Figure:
    """A scripted naming game's generations: each word's share of the agents that hold only it, the share that
    holds more than one name (above), and, where the agents invent names (the minimal naming game), the names held
    (below, all inventories together, and distinct). A run whose agents only hold the given words (the binary
    agreement model) has no panel below: its names held barely move and say nothing the shares do not."""
    invented = bool((generations["distinct_names"] > len(words)).any())
    fig = Figure(figsize=(7, 5.5 if invented else 3.6))
    if invented:
        top, bottom = fig.subplots(2, 1, sharex=True)
    else:
        top, bottom = fig.subplots(1, 1), None
    x = generations["generation"] + 1
    for word in words:
        top.plot(x, generations[f"share {word}"], label=f"only {word}")
    top.plot(x, generations["multiple_share"], color="#888888", linestyle="--", label="more than one name")
    top.set_ylim(0, 1.02)
    top.set_ylabel("share of agents")
    top.legend(loc="best", fontsize=8)
    top.set_title(title or "Scripted naming game", fontsize=10)
    if bottom is None:
        top.set_xlabel("generation (N interactions)")
        fig.tight_layout()
        return fig
    bottom.plot(x, generations["total_names"], color="#4c72b0", label="names held (all agents)")
    bottom.plot(x, generations["peak_names"], color="#4c72b0", linestyle=":", label="most held within it")
    bottom.plot(x, generations["distinct_names"], color="#dd8452", label="distinct names")
    bottom.set_yscale("log")
    bottom.set_ylabel("names held (log scale)")
    bottom.set_xlabel("generation (N interactions)")
    bottom.legend(loc="best", fontsize=8)
    fig.tight_layout()
    return fig


def naming_phase(table: pd.DataFrame) -> pd.DataFrame:
    """One row per population size and committed fraction of a sweep's runs (`sweep.csv`, with the summary columns
    `summary.agents`, `summary.committed_share`, `summary.consensus_reached` and, where the runs wrote them,
    `summary.consensus_per_agent`, `summary.final_committed_share`, `summary.consensus_name` and
    `summary.committed_word`; the same names without `summary.` are read too).

    Columns: `runs`; `flipped`, the share of runs that reached consensus on the committed word (a scripted run's
    consensus is always on it, as committed agents never change; an LLM run's counts where its `consensus_name`
    is the `committed_word`; NaN without a committed minority, where a consensus is the one the agents began with);
    `median_time`, the median interactions per agent to that consensus among the runs that reached it (NaN if
    none); `committed_held`, the mean share of the agents holding the committed word at the end, the committed
    included (how far a run that did not flip got; NaN where the runs did not say).
    """
    frame = table.rename(columns=lambda c: c.removeprefix("summary."))
    missing = [c for c in PHASE_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"the table lacks {', '.join(missing)} (a sweep of naming runs has them)")
    if "status" in frame:
        frame = frame[frame["status"] == "complete"]
    reached = frame["consensus_reached"].astype(str).str.lower() == "true"
    if "consensus_name" in frame and "committed_word" in frame:  # an LLM run may agree on its prepared word
        said = frame["consensus_name"].notna() & frame["committed_word"].notna()
        reached &= ~said | (frame["consensus_name"].astype(str) == frame["committed_word"].astype(str))
    frame = frame.assign(committed_share=frame["committed_share"].astype(float).round(4), consensus_reached=reached)
    empty = pd.Series(float("nan"), index=frame.index)
    rows = []
    for (agents, share), group in frame.groupby(["agents", "committed_share"], sort=True):
        time = pd.to_numeric(group.get("consensus_per_agent", empty[group.index]), errors="coerce")
        times = time[group["consensus_reached"]].dropna()
        held = pd.to_numeric(group.get("final_committed_share", empty[group.index]), errors="coerce")
        committed = share > 0  # with none, a consensus is on the name the agents began with: no flip
        rows.append(
            {
                "agents": int(agents),
                "committed_share": float(share),
                "runs": len(group),
                "flipped": float(group["consensus_reached"].mean()) if committed else float("nan"),
                "median_time": float(times.median()) if len(times) and committed else float("nan"),
                "committed_held": float(held.mean()) if held.notna().any() else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=["agents", "committed_share", "runs", "flipped", "median_time", "committed_held"])


# Ashery et al. (2025), Claude at N = 24: the share of 12 runs in which a committed minority of that size flipped the
# convention, read from the repository's data files (not printed in the paper; approximate).
PAPER_FLIPS = {0.125: 3 / 12, 0.1667: 11 / 12, 0.2083: 1.0, 0.25: 1.0}


def plot_naming_phase(
    table: pd.DataFrame, title: str = "", *, llm: pd.DataFrame | None = None, paper: bool = False
) -> Figure:
    """The phase diagram of a sweep of the binary agreement model (`naming_phase(table)`'s columns): against the
    committed fraction, the share of runs that reached consensus on the committed word (left), the mean share of the
    agents holding it at the end (middle, where the runs say it) and the median interactions per agent consensus
    took (right), one line per population size; the mean-field tipping point dashed.
    `llm`: a sweep of LLM naming runs (the same columns), drawn beside it in dashed lines; `paper`: Ashery et al.'s
    flip rates at N = 24 (`PAPER_FLIPS`, Claude) as crosses."""
    phase = naming_phase(table)
    fig = Figure(figsize=(14, 4))
    left, middle, right = fig.subplots(1, 3)
    colours = [f"C{i}" for i in range(10)]
    drawn = [("", phase, "-")] + ([("LLM, ", naming_phase(llm), "--")] if llm is not None else [])
    i = 0
    for prefix, frame, style in drawn:
        for agents, rows in frame.groupby("agents", sort=True):
            colour, label = colours[i % len(colours)], f"{prefix}N = {agents:,}"
            left.plot(rows["committed_share"], rows["flipped"], style, marker="o", color=colour, label=label)
            middle.plot(rows["committed_share"], rows["committed_held"], style, marker="o", color=colour, label=label)
            right.plot(rows["committed_share"], rows["median_time"], style, marker="o", color=colour, label=label)
            i += 1
    if paper:
        left.plot(
            list(PAPER_FLIPS),
            list(PAPER_FLIPS.values()),
            "x",
            color="black",
            markersize=8,
            label="Ashery et al., Claude, N = 24",
        )
    for ax in (left, middle, right):
        ax.axvline(TIPPING_POINT, color="#888888", linestyle="--", linewidth=1)
        ax.set_xlabel("committed fraction p")
    left.set_ylim(-0.02, 1.02)
    left.set_ylabel("share of runs that reached consensus")
    left.legend(loc="lower right", fontsize=8)
    middle.set_ylim(-0.02, 1.02)
    middle.set_ylabel("share holding the committed word at the end")
    right.set_ylabel("median interactions per agent to consensus")
    if np.isfinite(phase["median_time"]).any():
        right.set_yscale("log")
    fig.suptitle(title or f"Binary agreement model: tipping point (mean field p_c = {TIPPING_POINT})", fontsize=10)
    fig.tight_layout()
    return fig


def print_table(path: Path) -> None:
    """The run's table on the command line, and where its results are."""
    gens, summary = read_result(path)
    table = Table(title=f"{summary['scenario']}: {summary['agents']} agents, naming game, {summary['model']}")
    for column in ("generation", "success rate", "dominant name", "its share", "committed name's share", "illegal"):
        table.add_column(column, justify="right")
    for _, row in gens.iterrows():
        committed = "" if row["committed_share"] != row["committed_share"] else f"{row['committed_share']:.0%}"
        table.add_row(
            str(int(row["generation"])),
            f"{row['success_rate']:.0%}",
            str(row["dominant"]),
            f"{row['dominant_share']:.0%}",
            committed,
            f"{row['illegal_rate']:.1%}",
        )
    console.print(table)
    at = summary.get("consensus_at")
    reached = (
        "not reached"
        if at is None
        else f"on {summary['consensus_name']} after {at} interactions ({summary['consensus_per_agent']} per agent)"
    )
    console.print(f"consensus: {reached}; {summary['calls']} calls")
    console.print(
        f"results in [bold]{escape(str(path))}[/]: interactions.csv, population.csv, generations.csv, naming.png"
    )


def print_scripted_table(path: Path, rows: int = 6) -> None:
    """The run's table on the command line, and where its results are."""
    gens, summary = read_result(path)
    table = Table(
        title=f"{summary['scenario']}: {summary['agents']} scripted agents, naming game ({summary['update']})"
    )
    shares = [c for c in gens.columns if c.startswith("share ")]
    for column in ("generation", "interactions", *(f"only {c.removeprefix('share ')}" for c in shares), "several"):
        table.add_column(column, justify="right")
    table.add_column("names held", justify="right")
    step = max(1, (len(gens) - 1) // max(1, rows - 1))
    for i in sorted(set(range(0, len(gens), step)) | {len(gens) - 1}):
        row = gens.iloc[i]
        table.add_row(
            str(int(row["generation"])),
            str(int(row["interactions"])),
            *[f"{row[c]:.1%}" for c in shares],
            f"{row['multiple_share']:.1%}",
            str(int(row["total_names"])),
        )
    console.print(table)
    at = summary.get("consensus_at")
    reached = "not reached" if at is None else f"after {at} interactions ({summary['consensus_per_agent']} per agent)"
    console.print(f"consensus: {reached}; no model calls")
    console.print(f"results in [bold]{escape(str(path))}[/]: generations.csv, population.csv, naming.png")


def plot_naming(generations: pd.DataFrame, title: str = "") -> Figure:
    """A naming game's generations: the success rate, the dominant name's share of the agents and, with a
    committed minority, the committed name's share."""
    return shares_plot(
        generations,
        [
            ("success_rate", "success rate", {"color": "#4c72b0"}),
            ("dominant_share", "dominant name's share", {"color": "#55a868"}),
            ("committed_share", "committed name's share", {"color": "#c44e52", "linestyle": "--"}),
        ],
        xlabel="generation (N interactions)",
        ylabel="share",
        title=title or "Naming game",
        legend="lower right",
    )


def naming_phase_table(root: str | Path, play: str) -> pd.DataFrame:
    """Every finished naming-game run of `play` (llm or scripted) under `root`, one row each, with the columns the
    phase diagram reads (`sandbox.population.games.naming.plots.naming_phase`): run, agents, committed_share,
    consensus_reached, consensus_per_agent, final_committed_share (an LLM run made before its summary said it: the
    last of its committed_share_by_generation), consensus_name and committed_word (None where a run did not say)."""
    from sandbox.base.files import read_json

    columns = ["agents", "committed_share", "consensus_reached", "consensus_per_agent"]
    said = ["final_committed_share", "consensus_name", "committed_word"]
    rows = []
    for run in game_runs(root, "naming", play):
        summary = read_json(run / "summary.json")
        if all(c in summary for c in columns):  # an LLM run made before its summary said them is left out
            shares = summary.get("committed_share_by_generation") or [None]
            summary = {"final_committed_share": shares[-1], **summary}
            rows.append({"run": str(run), **{c: summary[c] for c in columns}, **{c: summary.get(c) for c in said}})
    return pd.DataFrame(rows, columns=["run", *columns, *said])
