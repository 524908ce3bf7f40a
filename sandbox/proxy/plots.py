"""Plots of labeling experiments: accuracy per condition with 95% intervals, in the style of Kwon et al.'s Fig. 5."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

__all__ = ["CONDITION_COLORS", "CONDITION_NAMES", "plot_accuracy"]

# Figures use matplotlib's object API (no pyplot): no global state, no GUI backend.
CONDITION_NAMES = {"llm": "LLM (ours)", "no_objective": "No objective", "supervised": "SL", "random": "Random"}
CONDITION_COLORS = {"llm": "#4c72b0", "no_objective": "#dd8452", "supervised": "#55a868", "random": "#999999"}


def plot_accuracy(accuracy: pd.DataFrame, title: str = "", group: str | None = None) -> Figure:
    """Bars of labeling accuracy per condition (and per `group`, e.g. the objective, when given), with 95% CIs."""
    groups = list(dict.fromkeys(accuracy[group])) if group else [None]
    conditions = [c for c in CONDITION_NAMES if c in set(accuracy["condition"])]
    fig = Figure(figsize=(max(5.0, 1.6 * len(groups) * len(conditions) / 2 + 2), 4))
    ax = fig.subplots()
    width = 0.8 / len(conditions)
    for offset, condition in enumerate(conditions):
        rows = accuracy[accuracy["condition"] == condition]
        values, lows, highs = [], [], []
        for name in groups:
            row = rows if name is None else rows[rows[group] == name]
            mean = float(row["accuracy"].iloc[0]) if len(row) else float("nan")
            values.append(mean)
            lows.append(
                max(0.0, mean - float(row["ci_low"].iloc[0])) if len(row) and row["ci_low"].notna().iloc[0] else 0.0
            )
            highs.append(
                max(0.0, float(row["ci_high"].iloc[0]) - mean) if len(row) and row["ci_high"].notna().iloc[0] else 0.0
            )
        positions = [i + (offset - (len(conditions) - 1) / 2) * width for i in range(len(groups))]
        ax.bar(
            positions,
            values,
            width,
            yerr=[lows, highs],
            capsize=4,
            color=CONDITION_COLORS[condition],
            label=CONDITION_NAMES[condition],
        )
    ax.set_xticks(range(len(groups)), [str(g) if g is not None else "" for g in groups], rotation=15, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("labeling accuracy")
    ax.legend(fontsize=8, loc="upper right")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


# Kwon et al.'s ultimatum labeling accuracy with 10 examples (GPT-3 and the supervised baseline), recomputed from the
# authors' stored outputs (../shared/reference/proxy-rewards.md, "Per-objective labeling accuracy"); objective ->
# figure -> value. The paper prints no No-Objective figure for the ultimatum game.
PAPER_ULTIMATUM = {
    "reject < 30%": {"LLM": 0.94, "SL": 0.86},
    "reject < 60%": {"LLM": 0.96, "SL": 1.00},
    "reject < $10": {"LLM": 0.94, "SL": 0.76},
    "reject < $100": {"LLM": 0.94, "SL": 0.98},
}
SEED_FIGURES = {
    "LLM": "summary.accuracy.llm.accuracy",
    "No-Objective": "summary.accuracy.no_objective.accuracy",
    "SL": "summary.accuracy.supervised.accuracy",
    "agent on LLM labels": "summary.agent_accuracy.llm.mean",
}


def objective_label(objective: str) -> str:
    """A sweep's `proxy.objective` cell (JSON) as the paper names it: "reject < 30%", "reject < $10".

    >>> objective_label('{"name": "reject_below_share", "threshold": 0.3}'), objective_label('{"name": "reject_below_amount", "threshold": 10}')
    ('reject < 30%', 'reject < $10')
    """
    import json

    try:
        data = json.loads(objective)
    except (TypeError, ValueError):
        return str(objective)
    threshold = data.get("threshold")
    if data.get("name") == "reject_below_share" and threshold is not None:
        return f"reject < {threshold:.0%}"
    if data.get("name") == "reject_below_amount" and threshold is not None:
        return f"reject < ${threshold:g}"
    return str(data.get("name", objective))


def plot_sweep_accuracy(seeds: pd.DataFrame, title: str = "") -> Figure:
    """A labeling sweep over seeds (its `seeds.csv`): labeling accuracy of the judge, the No-Objective judge and the
    supervised baseline, and the RL agent's accuracy on the judge's labels, with 95% CIs across seeds, beside the
    paper's ultimatum figures (`PAPER_ULTIMATUM`)."""
    from sandbox.society.plots import plot_beside_paper, sweep_seeds

    if "proxy.objective" in seeds:
        seeds = seeds.assign(**{"proxy.objective": seeds["proxy.objective"].map(objective_label)})
    table = sweep_seeds(seeds, SEED_FIGURES, bounds=(0.0, 1.0))
    n = int(table["seeds"].min()) if len(table) else 0
    colors = {
        "LLM": CONDITION_COLORS["llm"],
        "No-Objective": CONDITION_COLORS["no_objective"],
        "SL": CONDITION_COLORS["supervised"],
        "agent on LLM labels": "#8172b2",
    }
    fig = plot_beside_paper(
        table,
        PAPER_ULTIMATUM,
        ylabel="accuracy on the true labels",
        colors=colors,
        ours=f"{title or 'ours'}: 95% CI over {n} seeds",
        theirs="The paper (GPT-3, 10 examples)",
    )
    for ax in fig.axes:
        ax.axhline(0.5, color="#999", linewidth=0.8, linestyle=":")  # a random labeler
    return fig
