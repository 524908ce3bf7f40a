"""Plots of a solved dialogue game: the solver's policy per player, and the payoffs of the paper's Table 1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd


def plot_policy(policy: pd.DataFrame, tree: Any, path: Path) -> None:
    """Per player and depth of the dialogue, the mean probability the solver puts on each instruction."""
    players = tree.game.num_players
    fig, axes = plt.subplots(1, players, figsize=(4.5 * players, 3.4), squeeze=False)
    for p in range(players):
        ax = axes[0][p]
        mine = policy[policy["player"] == p]
        if len(mine):
            table = mine.pivot_table(index="depth", columns="instruction", values="probability", aggfunc="mean")
            table = table[[i for i in tree.game.instructions[p] if i in table.columns]]
            table.plot.bar(ax=ax, rot=0)
        ax.set_title(f"{tree.game.setups[0].players[p]} (player {p})")
        ax.set_xlabel("messages before the decision")
        ax.set_ylabel("solver's probability (mean over infostates)")
        ax.set_ylim(0, 1)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_payoffs(summary: dict[str, Any], path: Path) -> None:
    """Expected payoff per player: all on "any", the player alone on the solver's policy, all on the solver's."""
    players = summary["players"]
    frame = pd.DataFrame(
        {
            "any vs any": summary["any_vs_any"],
            "solver vs any": summary["solver_vs_any"],
            "solver vs solver": summary["values"],
        },
        index=players,
    )
    ax = frame.plot.bar(rot=0, figsize=(5.5, 3.4))
    ax.set_ylabel("expected payoff")
    ax.set_title(f"{summary['scenario']}: NashConv {summary['nash_conv']:.3g}, CFR Gain {summary['cfr_gain_mean']:.3g}")
    ax.figure.tight_layout()
    ax.figure.savefig(path, dpi=120)
    plt.close(ax.figure)


def plot_psro(meta: pd.DataFrame, summary: dict[str, Any], path: Path) -> None:
    """The meta-strategy over PSRO iterations, per player (the paper's Fig. 3): stacked probability of each
    instruction, new instructions appearing as they join the set."""
    players = sorted(meta["player"].unique())
    fig, axes = plt.subplots(1, len(players), figsize=(5 * len(players), 3.4), squeeze=False)
    for ax, p in zip(axes[0], players):
        table = (
            meta[meta["player"] == p]
            .pivot_table(index="iteration", columns="instruction", values="probability", aggfunc="sum")
            .fillna(0.0)
        )
        order = list(dict.fromkeys(meta[meta["player"] == p]["instruction"]))
        table = table[order]
        ax.stackplot(table.index, table.T.values, labels=table.columns)
        ax.set_xlabel("PSRO iteration")
        ax.set_ylabel("meta-strategy")
        ax.set_ylim(0, 1)
        ax.set_title(f"{summary['players'][p]} ({summary['psro']['meta_solver']})")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# The paper's Table 1 (PaLM 2; payoffs as the paper scaled them): domain -> (NashConv, CFR Gain)
PAPER_TABLE1 = {"debate": (0.024, 0.106), "meeting": (0.010, 0.037), "fruit": (0.009, 0.038)}


def seeds_table(sweeps: dict[str, Path | str]) -> pd.DataFrame:
    """One row per setting of dialogue sweeps over seeds (label -> a sweep directory; a sweep with several
    settings gives one row each, labelled with their overrides): seeds, NashConv and the mean CFR Gain with
    their 95% t-intervals across seeds (the sweep's `seeds.csv`), and `separated`: CFR Gain above NashConv with
    intervals that do not overlap (the paper's ordering, as issue 29 asks it)."""
    from sandbox.society.plots import sweep_seeds

    figures = {"nash_conv": "summary.nash_conv", "cfr_gain": "summary.cfr_gain_mean"}
    rows = []
    for label, path in sweeps.items():
        long = sweep_seeds(pd.read_csv(Path(path) / "seeds.csv"), figures)
        for setting, group in long.groupby("setting", sort=False):
            out: dict[str, Any] = {
                "setting": label if setting == "all" else f"{label}, {setting}",
                "seeds": int(group["seeds"].iloc[0]),
            }
            for _, row in group.iterrows():
                name = row["figure"]
                out.update({name: row["mean"], f"{name}_low": row["ci_low"], f"{name}_high": row["ci_high"]})
            out["separated"] = bool(out["cfr_gain_low"] > out["nash_conv_high"])
            rows.append(out)
    return pd.DataFrame(rows)


def plot_seeds(table: pd.DataFrame, path: Path) -> None:
    """NashConv and CFR Gain per setting with 95% CIs across seeds (`seeds_table`), beside the paper's Table 1."""
    from sandbox.society.plots import plot_beside_paper

    names = {"nash_conv": "NashConv", "cfr_gain": "CFR Gain"}
    long = pd.DataFrame(
        [
            {
                "setting": row["setting"],
                "figure": label,
                "mean": row[name],
                "ci_low": row[f"{name}_low"],
                "ci_high": row[f"{name}_high"],
            }
            for _, row in table.iterrows()
            for name, label in names.items()
        ]
    )
    paper = {domain: dict(zip(names.values(), values)) for domain, values in PAPER_TABLE1.items()}
    seeds = int(table["seeds"].min()) if len(table) else 0
    fig = plot_beside_paper(
        long,
        paper,
        ylabel="game units (mean of the players)",
        ours=f"Embedded 1.5B model, 95% CI over {seeds} seeds",
        theirs="The paper's Table 1 (PaLM 2)",
        colors={"NashConv": "#8c8c8c", "CFR Gain": "#4c72b0"},
        same_axis=False,
    )
    fig.savefig(path, dpi=120)
