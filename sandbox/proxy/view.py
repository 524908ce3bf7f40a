"""A labeling run's page in `sandbox view` and `sandbox report`: the judge's accuracy per condition (95% CI),
its calibration, and every label."""

from __future__ import annotations

from pathlib import Path

from sandbox.viewer.sections import Chart, Section, Table


def view(path: Path) -> list[Section]:
    return [
        Chart(
            "accuracy.csv",
            x="condition",
            y="accuracy",
            band=("ci_low", "ci_high"),
            mode="markers",
            title="Labeling accuracy by condition (95% CI)",
            y_title="accuracy",
        ),
        Table("accuracy.csv", title="Accuracy"),
        Table("calibration.csv", title="Calibration"),
        Table("agents.csv", title="Agents trained on the proxy reward"),
        Table("labels.csv", title="Labels"),
    ]
