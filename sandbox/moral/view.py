"""A training run's page in `sandbox view` and `sandbox report`: the learning curves (rewards by episode, and the
joint actions and illegal answers by episode), then the action types, moral regret and evaluation tables."""

from __future__ import annotations

from pathlib import Path

from sandbox.viewer.sections import Chart, Section, Table

REWARDS = ("reward", "reward_game", "reward_deontological", "reward_utilitarian", "reward_game_deontological")
ACTIONS = ("C|C", "C|D", "D|C", "D|D", "illegal")


def view(path: Path) -> list[Section]:
    return [
        Chart("metrics.csv", x="episode", y=REWARDS, title="Learning curve: rewards by episode", y_title="reward"),
        Chart(
            "metrics.csv",
            x="episode",
            y=ACTIONS,
            title="Joint actions by episode (shares of rounds)",
            y_title="share of rounds",
        ),
        Chart("metrics.csv", x="episode", y="kl", title="KL from the reference model by episode", y_title="KL"),
        Table("action_types.csv", title="Action types per state"),
        Table("moral_regret.csv", title="Moral regret"),
        Table("test_action_types.csv", title="Action types, new tokens"),
        Table("seeds.csv", title="Seeds"),
        Table("metrics.csv", title="Metrics by episode"),
    ]
