"""A distillation run's page and a judge run's page in `sandbox view` and `sandbox report`: the student's
learning curve under the judged reward (with the true norm's reward beside it), the comparison of student,
policy-prompted assistant, users and base model, and the judge's table."""

from __future__ import annotations

from pathlib import Path

from sandbox.viewer.sections import Chart, Section, Table


def offered_share_chart(file: str, group: str | None = None) -> Chart:
    """The offered share of each subject (student, assistant, users, base model) with its 95% CI, as points: a
    distillation's comparison and a chain's."""
    return Chart(
        file,
        x="subject",
        y="offered_share",
        group=group,
        band=("offered_share_ci_low", "offered_share_ci_high"),
        mode="markers",
        title="Offered share by subject (95% CI)",
        y_title="offered share",
    )


def view(path: Path) -> list[Section]:
    return [
        Chart(
            "metrics.csv",
            x="episode",
            y=("reward", "reward_proxy:judge", "reward_truth:norm"),
            title="Learning curve: judged and true rewards by episode",
            y_title="reward",
        ),
        Chart(
            "metrics.csv",
            x="episode",
            y=("offered_share", "acceptance", "illegal"),
            title="Offered share, acceptance and illegal answers by episode",
        ),
        offered_share_chart("distillation.csv", group="condition"),
        Table("distillation.csv", title="Student, assistant, users and base model"),
        Table("judge_table.csv", title="The judge's labels"),
        Table("evaluation.csv", title="Evaluation proposals"),
        Table("metrics.csv", title="Metrics by episode"),
    ]


def judge_view(path: Path) -> list[Section]:
    return [
        Chart(
            "judge_table.csv",
            x="offered_share",
            y="reward",
            group="role",
            mode="markers",
            title="The judge's reward by offered share",
            y_title="reward",
        ),
        Table("judge_table.csv", title="The judge's labels"),
    ]
