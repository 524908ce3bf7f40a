"""Plots of population runs: cooperation and the strategies' shares over generations, cooperation over seeds
with 95% CIs, and the network coloured by strategy."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

__all__ = ["donor_runs", "plot_cooperation_over_seeds", "plot_donations", "plot_generations", "plot_network", "runs_table"]


def plot_generations(generations: pd.DataFrame, title: str = "") -> Figure:
    """Left: the share of C moves per generation; right: each strategy's share of the agents (stacked)."""
    fig = Figure(figsize=(11, 4))
    left, right = fig.subplots(1, 2)
    left.plot(generations["generation"], generations["cooperation"], color="#4c72b0")
    left.set_ylim(-0.02, 1.02)
    left.set_xlabel("generation")
    left.set_ylabel("cooperation (share of C moves)")
    left.set_title("Cooperation", fontsize=10)
    shares = [c for c in generations.columns if c.startswith("share ")]
    right.stackplot(generations["generation"], *[generations[c] for c in shares],
                    labels=[c.removeprefix("share ") for c in shares])  # fmt: skip
    right.set_ylim(0, 1)
    right.set_xlabel("generation")
    right.set_ylabel("share of agents")
    right.set_title("Strategies", fontsize=10)
    right.legend(loc="upper right", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def donor_runs(root: str | Path) -> list[Path]:
    """The finished donor-game population runs under `root`."""
    from sandbox.files import read_json

    return [p.parent for p in sorted(Path(root).glob("**/summary.json"))
            if read_json(p).get("kind") == "population" and read_json(p).get("game") == "donor"]  # fmt: skip


def runs_table(root: str | Path) -> pd.DataFrame:
    """Every scripted population run under `root` (a run, a sweep, or a folder of them): one row per run and generation,
    with the run's directory, seed, network, rule and cooperation."""
    from sandbox.files import read_csv, read_json, read_yaml

    frames = []
    for summary_path in sorted(Path(root).glob("**/summary.json")):
        summary = read_json(summary_path)
        if summary.get("kind") != "population" or summary.get("game") == "donor":
            continue  # donor-game runs have their own figures (plot_donations)
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


def plot_cooperation_over_seeds(runs: pd.DataFrame, by: str = "network", title: str = "") -> Figure:
    """Cooperation per generation: for each value of `by`, the mean over seeds with its 95% CI (Student's t)
    as a band, and one thin curve per seed."""
    from sandbox.stats import mean_ci

    fig = Figure(figsize=(8, 4.5))
    ax = fig.subplots()
    colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"]
    for i, (group, frame) in enumerate(runs.groupby(by, sort=False)):
        colour = colours[i % len(colours)]
        for _, seed_frame in frame.groupby("run"):
            ax.plot(seed_frame["generation"], seed_frame["cooperation"], color=colour, alpha=0.3, linewidth=0.8)
        stats = frame.groupby("generation")["cooperation"].apply(lambda v: mean_ci(v, bounds=(0.0, 1.0)))
        generations = stats.index.to_numpy()
        mean = [s[0] for s in stats]
        ax.plot(generations, mean, color=colour, linewidth=2,
                label=f"{group} ({frame['run'].nunique()} seeds)")  # fmt: skip
        low, high = [s[1] for s in stats], [s[2] for s in stats]
        ax.fill_between(generations, low, high, color=colour, alpha=0.15)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("generation")
    ax.set_ylabel("cooperation (share of C moves)")
    ax.set_title(title or "Cooperation over generations: mean and 95% CI over seeds, one thin curve per seed",
                 fontsize=10)  # fmt: skip
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_network(run: str | Path, generations: list[int] | None = None, max_nodes: int = 2500) -> Figure:
    """The run's network with each agent coloured by its strategy, at a few generations (first, middle, last by
    default); a grid is drawn as a grid, any other graph with a seeded spring layout."""
    import networkx as nx

    from sandbox.files import read_csv, read_yaml

    run = Path(run)
    population = read_csv(run / "population.csv")
    edges = read_csv(run / "edges.csv")
    scenario = read_yaml(run / "scenario.yaml")
    agents = int(scenario["population"]["agents"])
    if agents > max_nodes:
        raise ValueError(f"{agents} agents are too many to draw (max_nodes={max_nodes})")
    last = int(population["generation"].max())
    generations = generations or sorted({0, last // 2, last})
    graph = nx.Graph()
    graph.add_nodes_from(range(agents))
    graph.add_edges_from(edges[["a", "b"]].itertuples(index=False, name=None))
    if scenario["population"]["network"]["kind"] == "grid":
        side = int(round(agents**0.5))
        positions = {n: (n % side, -(n // side)) for n in graph.nodes}
    else:
        positions = nx.spring_layout(graph, seed=0) if len(edges) else nx.circular_layout(graph)
    names = sorted(population["strategy"].unique())
    palette = dict(zip(names, ["#4c72b0", "#c44e52", "#55a868", "#dd8452", "#8172b3", "#937860"] * 10))
    fig = Figure(figsize=(4.2 * len(generations), 4.4))
    axes = fig.subplots(1, len(generations), squeeze=False)[0]
    small = agents > 400
    mean_degree = max(1.0, 2 * len(edges) / agents)
    for ax, g in zip(axes, generations):
        rows = population[population["generation"] == g].sort_values("agent")
        colours = [palette[s] for s in rows["strategy"]]
        if len(edges) and not small:
            nx.draw_networkx_edges(graph, positions, ax=ax, alpha=0.15, width=0.5)
        base = 8 if small else 25
        sizes = [base * max(1.0, d / mean_degree) for _, d in graph.degree()]  # hubs drawn larger
        nx.draw_networkx_nodes(graph, positions, ax=ax, node_color=colours, node_size=sizes, linewidths=0)
        ax.set_title(f"generation {g}: agents' mean cooperation {rows['cooperation'].mean():.0%}", fontsize=9)
        ax.set_axis_off()
    handles = [Line2D([], [], marker="o", linestyle="", color=palette[n], label=n) for n in names]
    fig.legend(handles=handles, loc="lower center", ncol=len(names), fontsize=8)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def plot_donations(run: str | Path) -> Figure:
    """A donor-game population (Vallinder & Hughes' Fig. 6 style): left, each agent slot's mean donated share per
    generation, a black mark where a new agent took the slot; right, the mean donated share and the survivors'
    minus the others' (normalised) per generation."""
    import numpy as np

    from sandbox.files import read_csv

    run = Path(run)
    population = read_csv(run / "population.csv")
    gens = read_csv(run / "generations.csv")
    grid = population.pivot(index="agent", columns="generation", values="mean_donated_share")
    born = population.pivot(index="agent", columns="generation", values="born")
    fig = Figure(figsize=(11, 4.2))
    left, right = fig.subplots(1, 2)
    image = left.imshow(grid.to_numpy(dtype=float), aspect="auto", cmap="viridis", vmin=0, vmax=1,
                        extent=(-0.5, grid.shape[1] - 0.5, grid.shape[0] - 0.5, -0.5))  # fmt: skip
    for slot in range(born.shape[0]):
        for g in range(1, born.shape[1]):
            if born.iloc[slot, g] == g:
                left.plot([g - 0.5, g - 0.5], [slot - 0.5, slot + 0.5], color="black", linewidth=2)
    fig.colorbar(image, ax=left, label="mean donated share")
    left.set_xlabel("generation")
    left.set_ylabel("agent slot")
    left.set_title("Donated share (black: a new agent)", fontsize=10)
    right.plot(gens["generation"], gens["mean_donated_share"], marker="o", label="mean donated share")
    right.plot(gens["generation"], gens["survivor_gap"], marker="s", linestyle="--",
               label="survivors - others (normalised)")  # fmt: skip
    right.axhline(0, color="grey", linewidth=0.5)
    right.set_xlabel("generation")
    right.set_xticks(np.arange(len(gens)))
    right.set_title("Donations over generations", fontsize=10)
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig
