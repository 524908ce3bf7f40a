"""The scripted naming game's figures: one run's generations (`plot_naming_scripted`), and the phase diagram of a
sweep over the committed fraction and the population's size (`naming_phase`, `plot_naming_phase`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

__all__ = ["PAPER_FLIPS", "TIPPING_POINT", "naming_phase", "plot_naming_phase", "plot_naming_scripted"]

TIPPING_POINT = 0.0979  # Xie et al. 2011: the binary agreement model's mean-field tipping point
PHASE_COLUMNS = ("agents", "committed_share", "consensus_reached")  # the others read where there


def plot_naming_scripted(generations: pd.DataFrame, words: Sequence[str], title: str = "") -> Figure:
    """A scripted naming game's generations: each word's share of the agents that hold only it, the share that
    holds more than one name (above), and the names held (below, all inventories together, and distinct)."""
    fig = Figure(figsize=(7, 5.5))
    top, bottom = fig.subplots(2, 1, sharex=True)
    x = generations["generation"] + 1
    for word in words:
        top.plot(x, generations[f"share {word}"], label=f"only {word}")
    top.plot(x, generations["multiple_share"], color="#888888", linestyle="--", label="more than one name")
    top.set_ylim(0, 1.02)
    top.set_ylabel("share of agents")
    top.legend(loc="best", fontsize=8)
    top.set_title(title or "Scripted naming game", fontsize=10)
    bottom.plot(x, generations["total_names"], color="#4c72b0", label="names held (all agents)")
    bottom.plot(x, generations["peak_names"], color="#4c72b0", linestyle=":", label="most held within it")
    bottom.plot(x, generations["distinct_names"], color="#dd8452", label="distinct names")
    bottom.set_yscale("log")
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
