"""Plots of a run: offered share by norm (bars with 95% CIs) and over epochs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from sandbox.results import offered_share_by

# Figures are built with matplotlib's object API (no pyplot): no global state, no GUI
# backend, and a notebook displays the returned Figure as it is.


def errors(frame: pd.DataFrame) -> list[list[float]]:
    low = (frame["mean"] - frame["ci_low"]).fillna(0).clip(lower=0)
    high = (frame["ci_high"] - frame["mean"]).fillna(0).clip(lower=0)
    return [low.tolist(), high.tolist()]


def plot_offered_share(episodes: pd.DataFrame, title: str = "") -> Figure:
    """Mean offered share by the proposer's norm, with 95% CIs; and per epoch when there are several."""
    by_norm = offered_share_by(episodes)
    epochs = episodes["epoch"].nunique()
    fig = Figure(figsize=(11 if epochs > 1 else 6, 4))
    axes = fig.subplots(1, 2 if epochs > 1 else 1, squeeze=False)
    ax = axes[0, 0]
    if not by_norm.empty:
        ax.bar(by_norm["proposer_norm"], by_norm["mean"], yerr=errors(by_norm), capsize=6, color="#4c72b0")
        for x, (mean, n) in enumerate(zip(by_norm["mean"], by_norm["proposals"])):
            ax.annotate(f"{mean:.0%}\nn={n}", (x, mean), textcoords="offset points", xytext=(18, 2), fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("offered share (responder's part / amount)")
    ax.set_xlabel("proposer's norm")
    ci_over = by_norm["ci_over"].iloc[0] if not by_norm.empty else "proposals"
    ax.set_title(f"Offered share by norm (95% CI over {ci_over})", fontsize=10)
    if epochs > 1:
        ax = axes[0, 1]
        per_epoch = offered_share_by(episodes, by_epoch=True)
        for norm, frame in per_epoch.groupby("proposer_norm"):
            ax.errorbar(frame["epoch"], frame["mean"], yerr=errors(frame), marker="o", capsize=4, label=norm)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("epoch")
        ax.set_title("Offered share over epochs", fontsize=10)
        ax.legend(title="norm", fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def save_plots(episodes: pd.DataFrame, out_dir: Path, title: str = "") -> list[Path]:
    """Write the run's plots as PNG files and return their paths."""
    fig = plot_offered_share(episodes, title)
    path = out_dir / "offered_share_by_norm.png"
    fig.savefig(path, dpi=120)
    return [path]
