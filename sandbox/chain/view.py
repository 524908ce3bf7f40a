"""A chain's page in `sandbox view` and `sandbox report`: the comparison of users, the assistant with its learned
policy, the student without it and the base model (95% CI); each stage's run is linked below."""

from __future__ import annotations

from pathlib import Path

from sandbox.viewer.page import Chart, Section, Table


def view(path: Path) -> list[Section]:
    return [
        Chart(
            "comparison.csv",
            x="subject",
            y="offered_share",
            band=("offered_share_ci_low", "offered_share_ci_high"),
            mode="markers",
            title="Offered share by subject (95% CI)",
            y_title="offered share",
        ),
        Table("comparison.csv", title="Comparison"),
    ]
