"""Plots of moral fine-tuning: action types and moral rewards over training (Fig. 2 and 3), regret and
action types at test (Fig. 4 and 5), and either across seeds."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from sandbox.base.stats import CiMethod, mean_ci
from sandbox.moral.regret import KINDS, METRICS, regret_bounds
from sandbox.rewards.intrinsic import ACTION_TYPES, RewardParams

# Figures use matplotlib's object API (no pyplot): no global state, no GUI backend.

ACTION_COLORS = {"C|C": "#55a868", "C|D": "#8172b2", "D|C": "#c44e52", "D|D": "#dd8452", "illegal": "#999999"}
REWARD_COLORS = {
    "game": "#4c72b0",
    "deontological": "#c44e52",
    "utilitarian": "#55a868",
    "game_deontological": "#8172b2",
}


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


def plot_seed_actions(metrics: dict[int, pd.DataFrame], title: str = "", method: CiMethod = "normal") -> Figure:
    """Fig. 2 style over seeds: each action type's rolling share per episode, the mean over seeds with its 95% CI
    band across seeds per episode (`method`: normal, the authors', or t)."""
    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    episodes = next(iter(metrics.values()))["episode"]
    for name in (*ACTION_TYPES, "illegal"):
        smooth = pd.DataFrame({seed: _smooth(frame[name], len(frame)).to_numpy() for seed, frame in metrics.items()})
        bands = [mean_ci(row, bounds=(0.0, 1.0), method=method) for row in smooth.to_numpy()]
        ax.plot(episodes, [b[0] for b in bands], label=name, color=ACTION_COLORS[name])
        ax.fill_between(episodes, [b[1] for b in bands], [b[2] for b in bands], color=ACTION_COLORS[name], alpha=0.2)
    _switches(ax, next(iter(metrics.values())))
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("episode")
    ax.set_ylabel("share of rounds (rolling mean)")
    ax.set_title(f"Action types during training, mean of {len(metrics)} seeds and 95% CI ({method})", fontsize=10)
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


POLICY_STYLE = {"fine-tuned": {"alpha": 1.0, "hatch": None}, "no fine-tuning": {"alpha": 0.45, "hatch": "//"}}


def plot_regret(regret: pd.DataFrame, title: str = "", params: RewardParams = RewardParams()) -> Figure:
    """Fig. 4 style: regret per game with 95% CIs over test games, one bar per policy (fine-tuned, and the base
    model when evaluated). Top row the paper's moral regret (Deontological in reward units, Utilitarian
    normalised by the game's range); bottom row the counterfactual regret against the opponent's actual move."""
    metrics = [m for m in METRICS if m in set(regret["metric"])]
    fig = Figure(figsize=(10, 3.8 * len(metrics)))
    axes = fig.subplots(len(metrics), 2, squeeze=False)
    policies = list(dict.fromkeys(regret["policy"]))
    width = 0.8 / len(policies)
    for row, metric in zip(axes, metrics):
        for ax, kind in zip(row, KINDS):
            frame = regret[(regret["metric"] == metric) & (regret["kind"] == kind)]
            games = list(dict.fromkeys(frame["game"]))
            for p, policy in enumerate(policies):
                bars = frame[frame["policy"] == policy].set_index("game").reindex(games)
                low = (bars["mean"] - bars["ci_low"]).clip(lower=0).fillna(0)
                high = (bars["ci_high"] - bars["mean"]).clip(lower=0).fillna(0)
                ax.bar(
                    [i + (p - (len(policies) - 1) / 2) * width for i in range(len(games))],
                    bars["mean"],
                    width=width,
                    yerr=[low, high],
                    capsize=3,
                    color=REWARD_COLORS[kind],
                    label=policy,
                    edgecolor="#333",
                    linewidth=0.5,
                    **POLICY_STYLE.get(policy, {}),
                )
            ax.set_xticks(range(len(games)), games, rotation=20, ha="right", fontsize=8)
            ax.set_ylim(0, regret_bounds(metric, kind, params)[1] * 1.05)
            units = "reward units" if (metric, kind) == ("moral", "deontological") else "normalised"
            name = "Moral" if metric == "moral" else "Counterfactual"
            ax.set_ylabel(f"regret ({units})")
            ax.set_title(f"{name} regret, {kind.capitalize()} (0 = best)", fontsize=10)
            if len(policies) > 1:
                ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def plot_action_types(actions: pd.DataFrame, title: str = "") -> Figure:
    """Fig. 5 style: the share of each action type per game (and policy) at test, stacked."""
    actions = actions.reset_index(drop=True)
    labels = [
        f"{g}\n{p}" if "policy" in actions and actions["policy"].nunique() > 1 else g
        for g, p in zip(actions["game"], actions.get("policy", actions["game"]))
    ]
    fig = Figure(figsize=(max(8, 0.8 * len(actions)), 4.4))
    ax = fig.subplots()
    bottom = pd.Series(0.0, index=actions.index)
    for name in (*ACTION_TYPES, "illegal"):
        ax.bar(range(len(actions)), actions[name], bottom=bottom, label=name, color=ACTION_COLORS[name])
        bottom = bottom + actions[name]
    ax.set_xticks(range(len(actions)), labels, rotation=20, ha="right", fontsize=7)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("share of rounds")
    ax.set_title("Action types at test (own move | opponent's last move)", fontsize=10)
    ax.legend(fontsize=8, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.3))
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


# Fig. 2a of the paper (Gemma 2B against TFT), read by eye off the figure's copy in the authors' README
# (../shared/reference/moral-fidelity.md): the share of the last episodes' rounds. The paper gives no numbers.
PAPER_FIG2A = {"game": {"D|D": 1.0}, "deontological": {"C|C": 0.56, "D|C": 0.0}, "utilitarian": {"C|C": 0.8}}


def plot_sweep_actions(seeds: pd.DataFrame, title: str = "") -> Figure:
    """A moral sweep over seeds (its `seeds.csv`): each setting's final action types with 95% CIs across seeds,
    beside the paper's Fig. 2a as read by eye (`PAPER_FIG2A`)."""
    from sandbox.society.plots import plot_beside_paper, sweep_seeds

    figures = {name: f"summary.final_action_rates.{name}" for name in ACTION_TYPES} | {
        "illegal": "summary.final_illegal_rate"
    }
    table = sweep_seeds(seeds, figures, bounds=(0.0, 1.0))
    n = int(table["seeds"].min()) if len(table) else 0
    fig = plot_beside_paper(
        table,
        PAPER_FIG2A,
        ylabel="share of the last tenth's rounds",
        colors=ACTION_COLORS,
        ours=f"{title or 'ours'}: 95% CI over {n} seeds",
        theirs="The paper's Fig. 2a (Gemma 2B; by eye)",
    )
    return fig
