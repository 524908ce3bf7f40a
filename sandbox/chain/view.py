"""A chain's page in `sandbox view` and `sandbox report`: the comparison of users, the assistant with its learned
policy, the student without it and the base model (95% CI); each stage's run is linked below."""

from __future__ import annotations

from pathlib import Path

from sandbox.distill.view import offered_share_chart
from sandbox.viewer.sections import Section, Table


def view(path: Path) -> list[Section]:
    return [
        offered_share_chart("comparison.csv"),
        Table("comparison.csv", title="Comparison"),
    ]
