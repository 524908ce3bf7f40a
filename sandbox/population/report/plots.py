"""Plots of one population run that every game shares: the network coloured by strategy or norm cluster, the norm
map (cluster shares stacked, diversity and drift) with the lineage of a norm, and shares by generation on one
axis (`shares_plot`, which the games' figures draw with), and a figure over runs: a share over generations with 95%
CIs over seeds (`plot_cooperation_over_seeds`). Each game's own figures are in its report
(`sandbox.population.games.<game>.report`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

__all__ = ["plot_cooperation_over_seeds", "plot_lineage", "plot_network", "plot_norm_map", "shares_plot"]


def shares_plot(
    generations: pd.DataFrame,
    lines: list[tuple[str, str, dict[str, Any]]],  # matplotlib's line properties
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    legend: Literal["best", "upper right", "upper left", "lower left", "lower right"] = "best",
) -> Figure:
    """Shares (0 to 1) by generation on one axis: each of `lines` is (column, label, matplotlib style); a column
    without a value is left out."""
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    drawn = [
        ax.plot(generations["generation"], generations[column], label=label, **style)
        for column, label, style in lines
        if generations[column].notna().any()
    ]
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if drawn:
        ax.legend(loc=legend, fontsize=8)
    else:  # every move illegal, say
        ax.text(0.5, 0.5, "no value to draw", transform=ax.transAxes, ha="center", color="grey")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def plot_network(
    run: object,
    generations: list[int] | None = None,
    max_nodes: int = 10_000,
    colour_by: Literal["cluster", "strategy"] = "cluster",
) -> Figure:
    """The run's network (a run directory, its path, or a `RunResult`) with each agent coloured by what it holds,
    as the network view colours it (`sandbox.population.report.network`: a strategy, a name, an LLM norm's norm
    map cluster named by its central text; `colour_by="strategy"`: each norm text its own colour), at a few
    generations (the start, the middle and the last by default), each panel titled with the largest colour's share,
    the figure with what made the run. Fixed (committed) agents are drawn larger, with a dark edge."""
    from matplotlib.collections import LineCollection

    from sandbox.population.report.network import network_data

    path = Path(getattr(run, "path", run))  # type: ignore[arg-type]
    data = network_data(path, by="cluster" if colour_by == "cluster" else "text")
    if data is None:
        raise ValueError(f"{path}: no population run with what its agents hold (held.csv or population.csv)")
    agents = data.codes.shape[1]
    if agents > max_nodes:
        raise ValueError(f"{agents} agents are too many to draw (max_nodes={max_nodes}); sandbox view draws them")
    steps = list(data.steps)
    wanted = generations if generations is not None else sorted({steps[0], steps[len(steps) // 2], steps[-1]})
    missing = [g for g in wanted if g not in steps]
    if missing:
        raise ValueError(f"generations {missing} are not recorded (recorded: {steps[0]} to {steps[-1]})")
    groups = np.asarray(data.group_of)
    colours = np.asarray(data.colours, dtype=object)
    fig = Figure(figsize=(4.2 * len(wanted), 4.8))
    axes = fig.subplots(1, len(wanted), squeeze=False)[0]
    dot = max(4.0, min(40.0, 4000 / agents))
    edges = data.edges
    for ax, g in zip(axes, wanted):
        held = groups[data.codes[steps.index(g)]]
        if edges is not None and len(edges) <= 20_000:
            segments = np.stack(
                [
                    np.column_stack([data.x[edges[:, 0]], data.y[edges[:, 0]]]),
                    np.column_stack([data.x[edges[:, 1]], data.y[edges[:, 1]]]),
                ],
                axis=1,
            )
            ax.add_collection(LineCollection(list(segments), colors="#c8ccd2", linewidths=0.4, zorder=0))
        plain = np.ones(agents, dtype=bool) if data.marked is None else ~data.marked
        ax.scatter(data.x[plain], data.y[plain], c=list(colours[held[plain]]), s=dot, linewidths=0, zorder=1)
        if data.marked is not None:
            ax.scatter(
                data.x[data.marked],
                data.y[data.marked],
                c=list(colours[held[data.marked]]),
                s=dot * 3,
                edgecolors="#222222",
                linewidths=0.6,
                zorder=2,
            )
        counts = np.bincount(held, minlength=len(data.groups))
        top = int(counts.argmax())
        when = "start" if g < 0 else f"{data.unit} {g}"
        ax.set_title(f"{when}: {_short(data.groups[top], 28)} {counts[top] / agents:.0%}", fontsize=9)
        ax.set_aspect("equal")
        ax.set_axis_off()
    handles = [
        Line2D([], [], marker="o", linestyle="", color=c, label=_short(name, 60))
        for name, c in zip(data.groups, data.colours)
    ]
    if data.marked is not None:
        handles.append(
            Line2D(
                [],
                [],
                marker="o",
                linestyle="",
                color="white",
                markeredgecolor="#222222",
                label=f"{data.marked_name} (larger)",
            )
        )
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 3), fontsize=8)
    fig.suptitle(data.caption, fontsize=9)
    rows = -(-len(handles) // 3)
    fig.tight_layout(rect=(0, 0.05 * rows, 1, 0.95))
    return fig


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


class MapTables(Protocol):
    """What the norm map's figure reads of a norm map (`sandbox.population.norm_map.NormMap`)."""

    @property
    def clusters(self) -> pd.DataFrame: ...

    @property
    def shares(self) -> pd.DataFrame: ...

    @property
    def diversity(self) -> pd.DataFrame: ...


def plot_norm_map(result: MapTables) -> Figure:
    """A norm map (`sandbox.population.norm_map.NormMap`): left, each cluster's share of the agents per generation
    stacked (0 to 1), labelled by its central text; right, diversity (entropy in bits, mean pairwise distance) and
    drift from the first generation."""
    import textwrap

    shares, diversity, clusters = result.shares, result.diversity, result.clusters
    fig = Figure(figsize=(12, 4.6))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.6, 1]})
    columns = [c for c in shares.columns if c != "generation"]
    x = shares["generation"].to_numpy()
    if len(x) > 1:
        left.stackplot(
            x,
            *(shares[c].to_numpy() for c in columns),
            labels=[textwrap.shorten(n, 60) for n in clusters["name"]],
        )
    else:  # one generation: one stacked bar
        heights = shares[columns].to_numpy()[0]
        bottoms = np.concatenate([[0.0], np.cumsum(heights)[:-1]])
        for height, bottom, name in zip(heights, bottoms, clusters["name"]):
            left.bar(x, height, bottom=bottom, label=textwrap.shorten(name, 60))
    left.set_xlabel("generation")
    left.xaxis.set_major_locator(MaxNLocator(integer=True))
    left.set_ylim(0, 1)
    left.set_ylabel("share of the agents")
    left.set_title("Norm clusters: share of the agents (stacked)", fontsize=10)
    left.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0, -0.12), ncol=1)
    right.plot(diversity["generation"], diversity["entropy_bits"], marker="o", label="entropy of clusters (bits)")
    twin = right.twinx()
    twin.plot(
        diversity["generation"],
        diversity["mean_pairwise_distance"],
        marker="s",
        color="C1",
        label="mean pairwise distance",
    )
    twin.plot(diversity["generation"], diversity["drift"], marker="^", color="C2", label="drift from generation 0")
    twin.set_ylabel("cosine distance")
    right.set_ylabel("bits")
    right.set_xlabel("generation")
    right.xaxis.set_major_locator(MaxNLocator(integer=True))
    right.set_title("Diversity and drift", fontsize=10)
    lines = right.get_legend_handles_labels()
    more = twin.get_legend_handles_labels()
    right.legend(lines[0] + more[0], lines[1] + more[1], fontsize=7)
    fig.tight_layout()
    return fig


def plot_lineage(run: str | Path, norm: int | None = None) -> Figure:
    """The lineage of a norm (by default the one most agents hold in the last generation, the newest of a tie): it
    and its ancestors,
    by the generation each was first played in, an arrow from each parent; each labelled with its id and rule."""
    import textwrap

    import networkx as nx

    from sandbox.base.files import read_csv

    run = Path(run)
    norms = read_csv(run / "norms.csv", dtype={"parents": str}).set_index("norm")
    if norm is None:
        population = read_csv(run / "population.csv")
        last = population[population["generation"] == population["generation"].max()]
        norm = int(last["norm"].mode().max())
    graph = nx.DiGraph()
    for n, row in norms.iterrows():
        graph.add_node(int(n))
        for parent in str(row["parents"] or "").split(";"):
            if parent.strip() and parent.strip() != "nan":
                graph.add_edge(int(float(parent)), int(n))
    tree = graph.subgraph(nx.ancestors(graph, norm) | {norm})
    by_generation: dict[int, list[int]] = {}
    for n in sorted(tree.nodes):
        by_generation.setdefault(int(norms.loc[n, "generation"]), []).append(n)
    positions = {n: (g, i - (len(ns) - 1) / 2) for g, ns in by_generation.items() for i, n in enumerate(ns)}
    fig = Figure(figsize=(3.2 * max(2, len(by_generation)), 1.2 * max(3, max(len(v) for v in by_generation.values()))))
    ax = fig.subplots()
    nx.draw_networkx_edges(
        tree, positions, ax=ax, arrows=True, alpha=0.5, connectionstyle="arc3,rad=0.25"
    )  # curved: an edge over several generations stays visible
    nx.draw_networkx_nodes(
        tree, positions, ax=ax, node_size=60, node_color=["#c44e52" if n == norm else "#4c72b0" for n in tree.nodes]
    )
    for n, (x, y) in positions.items():
        text = textwrap.shorten(str(norms.loc[n, "strategy"]), 70)
        ax.annotate(
            f"#{n} {norms.loc[n, 'rule']}: " + "\n".join(textwrap.wrap(text, 28)),
            (x, y),
            fontsize=6,
            xytext=(4, 4),
            textcoords="offset points",
        )
    ax.set_xticks(sorted(by_generation))
    ax.tick_params(bottom=True, labelbottom=True)
    ax.set_xlabel("generation first played")
    ax.set_title(f"The lineage of norm #{norm}", fontsize=10)
    ax.tick_params(left=False, labelleft=False)
    ax.margins(x=0.25, y=0.2)
    return fig


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
