"""A matrix-game population's report: its command-line tables (scripted strategies, LLM members), its figures
(cooperation and the strategies' shares; the LLM members' cooperation and illegal moves) and its runs side by side
(one row per run and generation; cooperation over generations with 95% CIs over seeds)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from rich.markup import escape
from rich.table import Table

from sandbox.population.report.across_runs import game_runs
from sandbox.population.report.cli import console, read_result
from sandbox.population.report.plots import shares_plot

__all__ = [
    "plot_generations",
    "plot_llm_cooperation",
    "print_llm_table",
    "print_scripted_table",
    "runs_table",
]


def print_scripted_table(path: Path, rows: int = 6) -> None:
    """Cooperation and the strategies' shares at a few generations, first and last included."""
    gens, summary = read_result(path)
    shares = [c for c in gens.columns if c.startswith("share ")]
    table = Table(
        title=f"{summary['scenario']}: {summary['agents']} agents, {summary['network']} network "
        f"(mean degree {summary['mean_degree']:.1f}), rule {summary['rule']}"
    )
    for column in ["generation", "cooperation", *[c.removeprefix("share ") for c in shares]]:
        table.add_column(column, justify="right")
    step = max(1, (len(gens) - 1) // max(1, rows - 1))
    picks = sorted(set(range(0, len(gens), step)) | {len(gens) - 1})
    for i in picks:
        row = gens.iloc[i]
        table.add_row(str(int(row["generation"])), f"{row['cooperation']:.1%}", *[f"{row[c]:.1%}" for c in shares])
    console.print(table)
    console.print(f"results in [bold]{escape(str(path))}[/]: population.csv, generations.csv, cooperation.png")


def print_llm_table(path: Path) -> None:
    """The run's table on the command line, and where its results are."""
    gens, summary = read_result(path)
    table = Table(
        title=f"{summary['scenario']}: {summary['agents']} LLM members, {summary['matrix_game']}, rule "
        f"{summary['rule']}"
    )
    for column in ("generation", "cooperation", "mean payoff", "illegal"):
        table.add_column(column, justify="right")
    for _, row in gens.iterrows():
        cooperation = "" if row["cooperation"] != row["cooperation"] else f"{row['cooperation']:.0%}"
        table.add_row(
            str(int(row["generation"])), cooperation, f"{row['mean_payoff']:.2f}", f"{row['illegal_rate']:.1%}"
        )
    console.print(table)
    console.print(
        f"{summary['norm_versions']} principles, {summary['revisions_changed']} revisions changed one; "
        f"{summary['calls']} calls"
    )
    console.print(
        f"results in [bold]{escape(str(path))}[/]: moves.csv, population.csv, norms.csv, revisions.csv, "
        "generations.csv, cooperation.png"
    )


LONG_RUN = 2_000  # generations beyond which the figure draws a rolling mean (said on it)


def plot_generations(generations: pd.DataFrame, title: str = "") -> Figure:
    """Left: the share of C moves per generation; right: each strategy's share of the agents (stacked). A run of
    more than `LONG_RUN` generations is drawn as a rolling mean over a five-hundredth of its generations, and the
    panels say so (a raw line of 20,000 generations is noise)."""
    window = len(generations) // 500 if len(generations) > LONG_RUN else 1
    if window > 1:
        numbers = generations.drop(columns=["generation"]).rolling(window, min_periods=1).mean()
        generations = pd.concat([generations[["generation"]], numbers], axis=1)
    said = f" (rolling mean over {window} generations)" if window > 1 else ""
    fig = Figure(figsize=(11, 4))
    left, right = fig.subplots(1, 2)
    left.plot(generations["generation"], generations["cooperation"], color="#4c72b0")
    left.set_ylim(-0.02, 1.02)
    left.set_xlabel("generation")
    left.set_ylabel("cooperation (share of C moves)")
    left.set_title("Cooperation" + said, fontsize=10)
    shares = [c for c in generations.columns if c.startswith("share ")]
    right.stackplot(
        generations["generation"], *[generations[c] for c in shares], labels=[c.removeprefix("share ") for c in shares]
    )
    right.set_ylim(0, 1)
    right.set_xlabel("generation")
    right.set_ylabel("share of agents")
    right.set_title("Strategies" + said, fontsize=10)
    right.legend(loc="upper right", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def plot_llm_cooperation(generations: pd.DataFrame, title: str = "") -> Figure:
    """A matrix-game population of LLM members: the share of C moves and the illegal moves per generation."""
    return shares_plot(
        generations,
        [
            ("cooperation", "cooperation", {"color": "#4c72b0", "marker": "o"}),
            ("illegal_rate", "illegal moves", {"color": "#c44e52", "marker": ".", "linestyle": "--"}),
        ],
        xlabel="generation",
        ylabel="share of moves",
        title=title or "Matrix game, LLM members",
    )


def runs_table(root: str | Path) -> pd.DataFrame:
    """Every scripted matrix-game run under `root` (a run, a sweep, or a folder of them): one row per run and
    generation, with the run's directory, seed, network, rule and cooperation."""
    from sandbox.base.files import read_csv, read_json, read_yaml

    frames = []
    for run in game_runs(root, "matrix", "scripted"):
        summary, scenario = read_json(run / "summary.json"), read_yaml(run / "scenario.yaml")
        gens = read_csv(run / "generations.csv")
        gens.insert(0, "run", str(run))
        gens.insert(1, "seed", scenario["seed"])
        gens.insert(2, "network", summary["network"])
        gens.insert(3, "rule", summary["rule"])
        frames.append(gens)
    if not frames:
        raise ValueError(f"no finished scripted matrix-game run under {root}")
    return pd.concat(frames, ignore_index=True)
