"""SCAI's plots: offered share over epochs (Fig. 3), the final policies' bins (Fig. 3a middle), generalisation (Fig. 3b)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from sandbox.base.errors import UsageError
from sandbox.scai.metrics import epoch_summary
from sandbox.society.plots import errors

_GROUP_STYLE = {
    "users": ("users", "#4c72b0", "o"),
    "assistant": ("assistant", "#dd8452", "s"),
    "guided": ("guided members", "#8172b2", "^"),
}


def plot_scai(groups: pd.DataFrame, title: str = "") -> Figure:
    """Fig. 3 style: offered share over epochs for users and the assistant, 95% CI across runs; and the gap."""
    fig = Figure(figsize=(11, 4))
    left, right = fig.subplots(1, 2)
    runs = int(groups["run"].nunique()) if not groups.empty else 0
    _draw_scai(left, right, groups, f"Offered share (mean, 95% CI over {runs} runs)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def _draw_scai(left: Axes, right: Axes, groups: pd.DataFrame, heading: str) -> None:
    summary = epoch_summary(groups)
    shares = summary[summary["metric"] == "offered_share"]
    for group, (label, color, marker) in _GROUP_STYLE.items():
        frame = shares[shares["group"] == group]
        if not frame.empty:
            left.errorbar(
                frame["epoch"] + 1,
                frame["mean"],
                yerr=errors(frame),
                marker=marker,
                capsize=4,
                color=color,
                label=label,
            )
    left.set_ylim(-0.02, 1.05)
    left.set_xlabel("epoch")
    left.set_ylabel("offered share")
    left.set_title(heading, fontsize=10)
    left.legend(fontsize=8)
    gap = summary[summary["group"] == "gap"]
    if not gap.empty:
        right.axhline(0, color="#888", lw=0.8)
        right.errorbar(gap["epoch"] + 1, gap["mean"], yerr=errors(gap), marker="o", capsize=4, color="#55a868")
    right.set_ylim(-1.05, 1.05)
    right.set_xlabel("epoch")
    right.set_ylabel("assistant - users")
    right.set_title("Gap in offered share", fontsize=10)
    for ax in (left, right):
        ax.xaxis.get_major_locator().set_params(integer=True)


def sweep_epochs(sweep: Path | str, by: str = "society.norms") -> dict[str, pd.DataFrame]:
    """The per-epoch groups (`epochs.csv`) of a society sweep's finished runs, one frame per setting: the value
    of the override `by` (a list of norms reads as its norms' names) and of any other override but the seed.
    A sweep run that played several runs counts as one sample, the mean of its runs, so that each seed is one
    run of the frame (its `run` is the seed)."""
    sweep = Path(sweep)
    if not (sweep / "runs.csv").is_file():
        raise UsageError(f"{sweep}: not a sweep directory (no runs.csv)")
    runs = pd.read_csv(sweep / "runs.csv", keep_default_na=False, dtype=str)
    if by not in runs.columns:
        raise UsageError(f"{sweep}: the sweep has no override {by!r} (it has {', '.join(runs.columns[1:])})")
    others = [c for c in runs.columns if c not in ("run", "seed", by)]
    frames: dict[str, list[pd.DataFrame]] = {}
    for row in runs.to_dict("records"):
        path = sweep / "runs" / row["run"] / "epochs.csv"
        if not path.is_file():
            continue
        label = _setting(row[by])
        varying = [f"{c}={row[c]}" for c in others if runs[c].nunique() > 1]
        label = ", ".join([label, *varying])
        groups = pd.read_csv(path)
        means = groups.drop(columns="run").groupby(["epoch", "group"], as_index=False).mean(numeric_only=True)
        frames.setdefault(label, []).append(means.assign(run=int(row["seed"])))
    return {label: pd.concat(parts, ignore_index=True) for label, parts in frames.items()}


def _setting(value: str) -> str:
    """An override's value as a label: a list of norms as their names, a JSON string without its quotes."""
    try:
        data = json.loads(value)
    except ValueError:
        return value
    if isinstance(data, list) and all(isinstance(item, dict) and "norm" in item for item in data):
        return "+".join(str(item["norm"]) for item in data)
    return data if isinstance(data, str) else value


# The paper's Fig. 3a (left): one group of users, the mean offered share per epoch of users and assistant, from the
# authors' figure data (`solar_final/**/all_{fixed,flex}_data.csv`; ../shared/reference/scai-fidelity.md, 2b).
PAPER_FIG3A = {
    "selfish": {"users": (0.035, 0.025, 0.021, 0.029, 0.020), "assistant": (0.361, 0.025, 0.068, 0.053, 0.020)},
    "fair": {"users": (0.500, 0.496, 0.498, 0.501, 0.495), "assistant": (0.456, 0.499, 0.493, 0.496, 0.493)},
    "altruistic": {"users": (0.987, 0.984, 0.991, 0.993, 0.986), "assistant": (0.361, 0.983, 0.962, 0.960, 0.964)},
}


def _draw_paper(ax: Axes, label: str) -> None:
    """The paper's users and assistant for a one-group setting named `label` (dashed), where Fig. 3a has it."""
    paper = PAPER_FIG3A.get(label)
    if paper is None:
        return
    for group, style in (("users", ":"), ("assistant", "--")):
        ax.plot(
            range(1, len(paper[group]) + 1),
            paper[group],
            style,
            color=_GROUP_STYLE[group][1],
            alpha=0.6,
            label=f"paper (GPT-4): {group}",
        )
    ax.legend(fontsize=7)


def plot_seeds(sweep: Path | str, by: str = "society.norms", title: str = "") -> Figure:
    """One row per setting of a society sweep (e.g. selfish, fair, altruistic users): offered share over epochs
    and the gap, mean and 95% CI across seeds, with the paper's Fig. 3a (dashed) for a one-group setting."""
    settings = sweep_epochs(sweep, by)
    if not settings:
        raise UsageError(f"{sweep}: no finished run with epochs.csv to plot")
    fig = Figure(figsize=(11, 3.4 * len(settings)))
    axes = fig.subplots(len(settings), 2, squeeze=False)
    for (label, groups), (left, right) in zip(settings.items(), axes):
        _draw_scai(left, right, groups, f"{label} users: offered share ({groups['run'].nunique()} seeds, 95% CI)")
        _draw_paper(left, label)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_final_bins(bins: pd.DataFrame, title: str = "") -> Figure:
    """Fig. 3a (middle) style: the runs' final policies by norm bin, against the population's mix."""
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    x = list(range(len(bins)))
    ax.bar([i - 0.2 for i in x], bins["share_of_runs"], width=0.4, color="#dd8452", label="assistant's final policies")
    ax.bar([i + 0.2 for i in x], bins["population_share"], width=0.4, color="#4c72b0", label="users' norms")
    for i, runs in zip(x, bins["runs"]):
        ax.annotate(f"{runs} runs", (i - 0.2, 0), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=8)
    ax.set_xticks(x, bins["bin"])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share")
    ax.set_title("Final policies by the assistant's offered share", fontsize=10)
    ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def save_scai_plots(
    groups: pd.DataFrame, bins: pd.DataFrame, out_dir: Path, title: str = "", mixed: bool = False
) -> list[Path]:
    """Write the SCAI plots: offered share over epochs, and (mixed societies) the final-policy histogram."""
    paths = [out_dir / "offered_share_over_epochs.png"]
    plot_scai(groups, title).savefig(paths[0], dpi=120)
    if mixed:
        paths.append(out_dir / "final_policy_bins.png")
        plot_final_bins(bins, title).savefig(paths[1], dpi=120)
    return paths


def plot_generalisation(evaluation: dict[str, dict[str, object]], title: str = "") -> Figure:
    """Fig. 3b style: the final policies' offered share per evaluation condition (95% CI across runs)."""
    names = list(evaluation)
    rows = [evaluation[name]["offered_share"] for name in names]
    frame = pd.DataFrame([{**row, "condition": name} for name, row in zip(names, rows)])  # type: ignore[dict-item]
    frame[["mean", "ci_low", "ci_high"]] = frame[["mean", "ci_low", "ci_high"]].astype(float)
    fig = Figure(figsize=(max(5, 1.4 * len(names)), 4))
    ax = fig.subplots()
    colors = ["#888888" if name.startswith("training") else "#dd8452" for name in names]
    ax.bar(range(len(names)), frame["mean"].fillna(0), yerr=errors(frame), capsize=6, color=colors)
    ax.set_xticks(range(len(names)), names, rotation=20, ha="right", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("assistant's offered share")
    ax.set_title("Final policies under new conditions (95% CI over runs)", fontsize=10)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
