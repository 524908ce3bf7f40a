"""A society run's page in `sandbox view` and `sandbox report`: offered share and acceptance by epoch (mean and
95% CI across runs, users against the assistant), the policy versions as word diffs with their evidence and the
MetaLM's answer, then the final policies, the epochs and the episodes."""

from __future__ import annotations

from pathlib import Path

from sandbox.viewer.sections import Chart, Policies, Section, Table


def view(path: Path) -> list[Section]:
    by_epoch = {"file": "epoch_summary.csv", "x": "epoch", "y": "mean", "group": "group", "band": ("ci_low", "ci_high")}
    return [
        Chart(
            **by_epoch,
            where={"metric": "offered_share"},
            title="Offered share by epoch (mean, 95% CI over runs)",
            y_title="offered share",
        ),
        Chart(
            **by_epoch,
            where={"metric": "acceptance_rate"},
            title="Acceptance by epoch (mean, 95% CI over runs)",
            y_title="acceptance rate",
        ),
        Chart(
            "episodes.csv",
            x="epoch",
            y="offered_share",
            group="proposer_norm",
            where={"interaction": "user-user"},
            title="Offered share among users by epoch, by the proposer's norm (mean)",
            y_title="offered share",
        ),
        Policies(),
        Table("final_policies.csv", title="Final policies"),
        Table("evaluation.csv", title="Evaluation under new conditions"),
        Table("epochs.csv", title="Epochs"),
        Table("episodes.csv", title="Episodes"),
    ]
