"""Population runs side by side: the finished runs of a game under a folder (a sweep's, or any), their generations
as one table (one row per run and generation), and cooperation over generations with 95% CIs over seeds."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

__all__ = [
    "donor_table",
    "game_runs",
    "naming_phase_table",
    "plot_cooperation_over_seeds",
    "runs_table",
]


def game_runs(root: str | Path, game: str = "donor", play: str | None = None) -> list[Path]:
    """The finished population runs of `game` (donor, naming, commons, ultimatum or matrix_llm) under `root`;
    `play`: only those whose summary says that play (the naming game's llm or scripted; llm where it says none)."""
    from sandbox.base.files import read_json

    found = []
    for path in sorted(Path(root).glob("**/summary.json")):
        summary = read_json(path)
        if summary.get("kind") == "population" and summary.get("game") == game:
            if play is None or summary.get("play", "llm") == play:
                found.append(path.parent)
    return found


def naming_phase_table(root: str | Path, play: str) -> pd.DataFrame:
    """Every finished naming-game run of `play` (llm or scripted) under `root`, one row each, with the columns the
    phase diagram reads (`sandbox.population.naming_plots.naming_phase`): run, agents, committed_share,
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


def donor_table(root: str | Path) -> pd.DataFrame:
    """Every finished donor-game run under `root`: one row per run and generation, with the run's directory,
    scenario, seed, rule, network, the mean donated share (`donation`) and the mean final resources."""
    from sandbox.base.files import read_csv, read_yaml

    frames = []
    for run in game_runs(root):
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


def runs_table(root: str | Path) -> pd.DataFrame:
    """Every scripted population run under `root` (a run, a sweep, or a folder of them): one row per run and generation,
    with the run's directory, seed, network, rule and cooperation."""
    from sandbox.base.files import read_csv, read_json, read_yaml

    frames = []
    for summary_path in sorted(Path(root).glob("**/summary.json")):
        summary = read_json(summary_path)
        if summary.get("kind") != "population" or summary.get("game") in (
            "donor",
            "naming",
            "commons",
            "ultimatum",
            "matrix_llm",
        ):
            continue  # LLM games have their own figures (plot_donations, plot_naming, ...)
        scenario = read_yaml(summary_path.parent / "scenario.yaml")
        gens = read_csv(summary_path.parent / "generations.csv")
        gens.insert(0, "run", str(summary_path.parent))
        gens.insert(1, "seed", scenario["seed"])
        gens.insert(2, "network", summary["network"])
        gens.insert(3, "rule", summary["rule"])
        frames.append(gens)
    if not frames:
        raise ValueError(f"no finished population run under {root}")
    return pd.concat(frames, ignore_index=True)


def plot_cooperation_over_seeds(
    runs: pd.DataFrame, by: str = "network", title: str = "", value: str = "cooperation"
) -> Figure:
    """Cooperation (or another share in [0, 1]: `value`, such as a donor table's `donation`) per generation: for
    each value of `by`, the mean over seeds with its 95% CI (Student's t) as a band, and one thin curve per seed."""
    from sandbox.base.stats import mean_ci

    fig = Figure(figsize=(8, 4.5))
    ax = fig.subplots()
    colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"]
    for i, (group, frame) in enumerate(runs.groupby(by, sort=False)):
        colour = colours[i % len(colours)]
        for _, seed_frame in frame.groupby("run"):
            ax.plot(seed_frame["generation"], seed_frame[value], color=colour, alpha=0.3, linewidth=0.8)
        stats = frame.groupby("generation")[value].apply(lambda v: mean_ci(v, bounds=(0.0, 1.0)))
        generations = stats.index.to_numpy()
        mean = [s[0] for s in stats]
        ax.plot(generations, mean, color=colour, linewidth=2, label=f"{group} ({frame['run'].nunique()} seeds)")
        low, high = [s[1] for s in stats], [s[2] for s in stats]
        ax.fill_between(generations, low, high, color=colour, alpha=0.15)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("generation")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # generations are whole
    ax.set_ylabel("cooperation (share of C moves)" if value == "cooperation" else f"{value} (mean share)")
    ax.set_title(
        title or f"{value.capitalize()} over generations: mean and 95% CI over seeds, one thin curve per seed",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
