"""The donor game's report: its command-line table, its figure (Vallinder & Hughes' Fig. 6 style) and its runs side
by side (one row per run and generation)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from rich.markup import escape
from rich.table import Table

from sandbox.population.report.across_runs import game_runs
from sandbox.population.report.cli import console, read_result

__all__ = ["donor_table", "plot_donations", "print_table"]


def print_table(path: Path) -> None:
    """The run's table on the command line, and where its results are."""
    gens, summary = read_result(path)
    table = Table(title=f"{summary['scenario']}: {summary['agents']} agents, donor game, {summary['model']}")
    for column in ("generation", "mean donated share", "mean final resources", "survivors - others", "illegal"):
        table.add_column(column, justify="right")
    for _, row in gens.iterrows():
        table.add_row(
            str(int(row["generation"])),
            f"{row['mean_donated_share']:.1%}",
            f"{row['mean_final_resources']:.1f}",
            f"{row['survivor_gap']:+.2f}",
            f"{row['illegal_rate']:.1%}",
        )
    console.print(table)
    slope = summary.get("donation_slope_per_generation")
    console.print(
        f"donation slope: {'n/a' if slope is None else f'{100 * slope:+.2f} points'} per generation; "
        f"{summary['calls']} calls"
    )
    console.print(
        f"results in [bold]{escape(str(path))}[/]: population.csv, donations.csv, norms.csv, generations.csv, "
        "donations.png"
    )


def plot_donations(run: str | Path) -> Figure:
    """A donor-game population (Vallinder & Hughes' Fig. 6 style): left, each agent slot's mean donated share per
    generation, a black mark where a new agent took the slot and a white one where an agent changed its norm;
    right, the mean donated share and the survivors' minus the others' (normalised) per generation."""

    from sandbox.base.files import read_csv

    run = Path(run)
    population = read_csv(run / "population.csv")
    gens = read_csv(run / "generations.csv")
    grid = population.pivot(index="agent", columns="generation", values="mean_donated_share")
    born = population.pivot(index="agent", columns="generation", values="born")
    norm = population.pivot(index="agent", columns="generation", values="norm") if "norm" in population else born
    fig = Figure(figsize=(11, 4.2))
    left, right = fig.subplots(1, 2)
    image = left.imshow(
        grid.to_numpy(dtype=float),
        aspect="auto",
        cmap="viridis",
        vmin=0,
        vmax=1,
        extent=(-0.5, grid.shape[1] - 0.5, grid.shape[0] - 0.5, -0.5),
    )
    for slot in range(born.shape[0]):
        for g in range(1, born.shape[1]):
            if born.iloc[slot, g] == g:
                left.plot([g - 0.5, g - 0.5], [slot - 0.5, slot + 0.5], color="black", linewidth=2)
            elif norm.iloc[slot, g] != norm.iloc[slot, g - 1]:
                left.plot([g - 0.5, g - 0.5], [slot - 0.5, slot + 0.5], color="white", linewidth=2)
    fig.colorbar(image, ax=left, label="mean donated share")
    left.set_xlabel("generation")
    left.set_ylabel("agent slot")
    left.set_title("Donated share (black: a new agent; white: a new norm)", fontsize=10)
    right.plot(gens["generation"], gens["mean_donated_share"], marker="o", label="mean donated share")
    right.plot(
        gens["generation"], gens["survivor_gap"], marker="s", linestyle="--", label="survivors - others (normalised)"
    )
    right.axhline(0, color="grey", linewidth=0.5)
    right.set_xlabel("generation")
    right.set_ylabel("share donated; gap over the mean")
    right.set_xticks(np.arange(len(gens)))
    right.set_title("Donations over generations", fontsize=10)
    right.legend(fontsize=8)
    if (run / "scenario.yaml").is_file():
        from sandbox.population.report.caption import figure_title

        fig.suptitle(figure_title(run), fontsize=10)
    fig.tight_layout()
    return fig


def donor_table(root: str | Path) -> pd.DataFrame:
    """Every finished donor-game run under `root`: one row per run and generation, with the run's directory,
    scenario, seed, rule, network, the mean donated share (`donation`) and the mean final resources."""
    from sandbox.base.files import read_csv, read_yaml

    frames = []
    for run in game_runs(root, "donor"):
        scenario = read_yaml(run / "scenario.yaml")
        gens = read_csv(run / "generations.csv")
        block = scenario["population"]
        frames.append(
            pd.DataFrame(
                {
                    "run": str(run),
                    "scenario": scenario["name"],
                    "seed": scenario.get("seed", 0),
                    "rule": block["revision"]["rule"],
                    "network": block["network"]["kind"],
                    "generation": gens["generation"],
                    "donation": gens["mean_donated_share"],
                    "final_resources": gens["mean_final_resources"],
                }
            )
        )
    if not frames:
        raise ValueError(f"no finished donor-game run under {root}")
    return pd.concat(frames, ignore_index=True)
