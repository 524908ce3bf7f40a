"""Plots of a run: offered share by norm (bars with 95% CIs) and over epochs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from sandbox.base.errors import UsageError
from sandbox.society.results import offered_share_by

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


def sweep_seeds(
    seeds: pd.DataFrame, figures: dict[str, str], bounds: tuple[float, float] | None = None
) -> pd.DataFrame:
    """A sweep's `seeds.csv` as one row per setting and figure: `setting` (the overrides that vary across
    settings, or "all"), `figure` (the names of `figures`, which maps a name to a summary field such as
    `summary.final_action_rates.C|C`), its `mean`, `ci_low` and `ci_high` across seeds (clipped to `bounds`, for
    shares, where a t-interval may pass 0 or 1), and `seeds`."""
    keys = [c for c in seeds.columns if c != "seeds" and not c.startswith("summary.")]
    varying = [k for k in keys if seeds[k].nunique(dropna=False) > 1]
    rows = []
    for _, row in seeds.iterrows():
        setting = ", ".join(f"{k.split('.')[-1]} {row[k]}" for k in varying) or "all"
        for name, field in figures.items():
            rows.append(
                {
                    "setting": setting,
                    "figure": name,
                    "mean": row.get(f"{field}.mean"),
                    "ci_low": row.get(f"{field}.ci_low"),
                    "ci_high": row.get(f"{field}.ci_high"),
                    "seeds": int(row["seeds"]),
                }
            )
    table = pd.DataFrame(rows)
    if bounds is not None and not table.empty:
        table[["ci_low", "ci_high"]] = table[["ci_low", "ci_high"]].clip(*bounds)
    return table


def plot_beside_paper(
    table: pd.DataFrame,
    paper: dict[str, dict[str, float]],
    *,
    ylabel: str,
    ours: str,
    theirs: str,
    colors: dict[str, str] | None = None,
    same_axis: bool = True,
) -> Figure:
    """Grouped bars: our figures per setting with their 95% CIs (`sweep_seeds`' columns) on the left, the paper's
    (setting -> figure -> value; a figure the paper does not give is left out) on the right, on the same y axis
    unless `same_axis` is False (where the paper's scale differs from ours)."""
    if table.empty:
        raise UsageError("no finished setting to plot: the sweep's seeds.csv has no rows yet")
    names = list(dict.fromkeys(table["figure"]))
    settings = list(dict.fromkeys(table["setting"]))
    fig = Figure(figsize=(5 + 1.1 * len(settings) + 0.9 * len(paper), 4))
    left, right = fig.subplots(
        1, 2, sharey=same_axis, gridspec_kw={"width_ratios": [max(len(settings), 1), max(len(paper), 1)]}
    )
    width = 0.8 / max(len(names), 1)
    for k, name in enumerate(names):
        offset = (k - (len(names) - 1) / 2) * width
        colour = (colors or {}).get(name)
        mine = table[table["figure"] == name].set_index("setting").reindex(settings)
        left.bar(
            [i + offset for i in range(len(settings))],
            mine["mean"],
            width=width,
            yerr=errors(mine),
            capsize=3,
            color=colour,
            label=name,
        )
        given = [(i, paper[s][name]) for i, s in enumerate(paper) if name in paper[s]]
        right.bar([i + offset for i, _ in given], [v for _, v in given], width=width, color=colour)
    for ax in (left, right):
        ax.axhline(0, color="black", linewidth=0.6)
    left.set_xticks(range(len(settings)), [s.replace(", ", "\n") for s in settings], fontsize=8)
    right.set_xticks(range(len(paper)), list(paper), fontsize=8)
    left.set_xlim(-0.5, len(settings) - 0.5)
    right.set_xlim(-0.5, len(paper) - 0.5)
    left.set_ylabel(ylabel)
    left.set_title(ours, fontsize=10)
    right.set_title(theirs, fontsize=10)
    low, high = left.get_ylim()
    left.set_ylim(low, high + 0.22 * (high - low))  # room for the legend above the bars
    if not same_axis:
        right.set_ylim(*right.get_ylim())
    left.legend(fontsize=7, ncol=min(len(names), 3), loc="upper center")
    fig.tight_layout()
    return fig
