"""Plots of moral fine-tuning: action types and moral rewards over training (Fig. 2 and 3), regret and
action types at test (Fig. 4 and 5)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from sandbox.moral.training import ACTION_TYPES

# Figures use matplotlib's object API (no pyplot): no global state, no GUI backend.

ACTION_COLORS = {"C|C": "#55a868", "C|D": "#8172b2", "D|C": "#c44e52", "D|D": "#dd8452", "illegal": "#999999"}
REWARD_COLORS = {"game": "#4c72b0", "deontological": "#c44e52", "utilitarian": "#55a868",
                 "game_deontological": "#8172b2"}  # fmt: skip


def _smooth(series: pd.Series, episodes: int) -> pd.Series:
    return series.rolling(max(1, episodes // 20), min_periods=1).mean()


def _switches(ax: object, metrics: pd.DataFrame) -> None:
    """Dashed lines where the reward schedule switches (the unlearning runs)."""
    kinds = metrics["reward_kind"]
    for episode in metrics["episode"][kinds.ne(kinds.shift()) & (metrics.index > 0)]:
        ax.axvline(episode, color="#333", lw=0.8, ls="--")  # type: ignore[attr-defined]


def plot_training_actions(metrics: pd.DataFrame, title: str = "") -> Figure:
    """Fig. 2 style: the share of each action type (own move | opponent's last) per episode."""
    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    for name in (*ACTION_TYPES, "illegal"):
        ax.plot(metrics["episode"], _smooth(metrics[name], len(metrics)), label=name, color=ACTION_COLORS[name])
    _switches(ax, metrics)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("episode")
    ax.set_ylabel("share of rounds (rolling mean)")
    ax.set_title("Action types during training (own move | opponent's last move)", fontsize=10)
    ax.legend(fontsize=8, ncol=5, loc="upper center")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_training_rewards(metrics: pd.DataFrame, title: str = "") -> Figure:
    """Fig. 3 style: the moral rewards per round the learner earned, by kind, whichever was trained on."""
    kinds = [k for k in ("game", "deontological", "utilitarian") if f"reward_{k}" in metrics]
    fig = Figure(figsize=(4 * len(kinds), 3.6))
    axes = fig.subplots(1, len(kinds), squeeze=False)[0]
    for ax, kind in zip(axes, kinds):
        ax.plot(metrics["episode"], _smooth(metrics[f"reward_{kind}"], len(metrics)), color=REWARD_COLORS[kind])
        _switches(ax, metrics)
        ax.set_xlabel("episode")
        ax.set_title(f"{kind.capitalize()} reward per round", fontsize=10)
    axes[0].set_ylabel("mean reward (rolling)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_regret(regret: pd.DataFrame, title: str = "") -> Figure:
    """Fig. 4 style: normalised Deontological and Utilitarian regret per game, with 95% CIs over test games."""
    fig = Figure(figsize=(10, 4))
    axes = fig.subplots(1, 2)
    for ax, kind in zip(axes, ("deontological", "utilitarian")):
        frame = regret[regret["kind"] == kind]
        low = (frame["mean"] - frame["ci_low"]).clip(lower=0).fillna(0)
        high = (frame["ci_high"] - frame["mean"]).clip(lower=0).fillna(0)
        ax.bar(range(len(frame)), frame["mean"], yerr=[low, high], capsize=5, color=REWARD_COLORS[kind])
        ax.set_xticks(range(len(frame)), frame["game"], rotation=20, ha="right", fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("normalised regret")
        ax.set_title(f"{kind.capitalize()} regret (0 = best possible)", fontsize=10)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_action_types(actions: pd.DataFrame, title: str = "") -> Figure:
    """Fig. 5 style: the share of each action type per game at test, stacked."""
    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    bottom = pd.Series(0.0, index=actions.index)
    for name in (*ACTION_TYPES, "illegal"):
        ax.bar(range(len(actions)), actions[name], bottom=bottom, label=name, color=ACTION_COLORS[name])
        bottom = bottom + actions[name]
    ax.set_xticks(range(len(actions)), actions["game"], rotation=20, ha="right", fontsize=8)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("share of rounds")
    ax.set_title("Action types at test (own move | opponent's last move)", fontsize=10)
    ax.legend(fontsize=8, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
