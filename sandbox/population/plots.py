"""Plots of a population run: cooperation and the strategies' shares over generations."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

__all__ = ["plot_generations"]


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
