"""Stage (e): users, the assistant with its learned policy, the students and the base model, side by side.

Each subject's figures come from its own society run: the users' from the
society stage (their interactions with one another), the others' from the
evaluation stage, where each is the society's assistant and nothing learns.
A subject's offered share is the mean offered share of its legal proposals,
its acceptance the share of its legal answers that accept. The 95% CI
(Student's t) is over replicates: the society's runs (each its own seed) for
the users, the assistant and the base model, and the training seeds for the
student (each seed's mean over its runs).

Written: `comparison.csv`, `comparison.png` and the chain's `summary.json`
(with the policy, the judge's figures and each stage's wall time).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from sandbox.base.files import read_csv, read_json
from sandbox.base.stats import json_number, json_records, mean_ci

__all__ = ["COMPARISON", "compare", "plot_comparison", "subject_figures"]

COMPARISON = "comparison.csv"
SUBJECT_ORDER = ("users", "assistant", "student", "base")
COLORS = {"users": "#777777", "assistant": "#1f77b4", "student": "#d62728", "base": "#bbbbbb"}


def _per_run(episodes: pd.DataFrame, proposer: str, responder: str, users: bool = False) -> pd.DataFrame:
    """Per run: the mean offered share of the legal proposals of `proposer`-side episodes, the acceptance of the
    legal answers of `responder`-side ones, the illegal rate of the proposals, and the counts (`users`: only the
    moves of users of fixed norms, not of solver-guided members)."""
    rows = []
    for run, group in episodes.groupby("run"):
        proposals = group[group["interaction"] == proposer]
        answers = group[group["interaction"] == responder]
        if users:
            proposals = proposals[proposals["proposer"].astype(str).str.startswith("user-")]
            answers = answers[answers["responder"].astype(str).str.startswith("user-")]
        legal = proposals[proposals["proposal_legal"].astype(str) == "True"]
        decided = answers[answers["decision"].isin(["accept", "reject"])]
        rows.append(
            {
                "run": run,
                "offered_share": legal["offered_share"].astype(float).mean() if len(legal) else math.nan,
                "acceptance": (decided["decision"] == "accept").mean() if len(decided) else math.nan,
                "illegal": 1 - len(legal) / len(proposals) if len(proposals) else math.nan,
                "proposals": len(proposals),
                "answers": len(answers),
            }
        )
    return pd.DataFrame(rows)


def subject_figures(path: Path, scenario: Any) -> pd.DataFrame:
    """One row per subject: offered share and acceptance, mean and 95% CI over replicates, illegal rate, counts."""
    from sandbox.chain.layout import stage_runs

    replicates: dict[str, tuple[str, pd.DataFrame]] = {
        "users": ("runs", _per_run(read_csv(path / "society" / "episodes.csv"), "user-user", "user-user", users=True))
    }
    seeds = []
    for directory in stage_runs(scenario)["evaluate"]:
        runs = _per_run(read_csv(path / directory / "episodes.csv"), "assistant-proposer", "assistant-responder")
        subject = directory.removeprefix("evaluate/")
        if subject.startswith("student-seed-"):
            seeds.append(
                {
                    "seed": int(subject.removeprefix("student-seed-")),
                    **runs.mean(numeric_only=True).to_dict(),
                    "proposals": runs["proposals"].sum(),
                    "answers": runs["answers"].sum(),
                }
            )
        else:
            replicates[subject] = ("runs", runs)
    if seeds:
        replicates["student"] = ("seeds", pd.DataFrame(seeds))
    rows = []
    for subject in [s for s in SUBJECT_ORDER if s in replicates]:
        unit, frame = replicates[subject]
        row: dict[str, Any] = {"subject": subject, "replicates": unit, "n": len(frame)}
        for metric in ("offered_share", "acceptance"):
            mean, low, high, _ = mean_ci(frame[metric].tolist(), bounds=(0.0, 1.0))
            row.update({metric: mean, f"{metric}_ci_low": low, f"{metric}_ci_high": high})
        row.update(
            illegal=frame["illegal"].mean(),
            proposals=int(frame["proposals"].sum()),
            answers=int(frame["answers"].sum()),
        )
        rows.append(row)
    return pd.DataFrame(rows)


def plot_comparison(table: pd.DataFrame, title: str = "") -> Figure:
    """Offered share and acceptance per subject, with 95% CIs."""
    from sandbox.society.plots import errors

    fig = Figure(figsize=(8, 3.6))
    for ax, metric, label in zip(fig.subplots(1, 2), ("offered_share", "acceptance"), ("offered share", "acceptance")):
        frame = table.rename(columns={metric: "mean", f"{metric}_ci_low": "ci_low", f"{metric}_ci_high": "ci_high"})
        ax.bar(
            frame["subject"],
            frame["mean"],
            yerr=errors(frame),
            capsize=4,
            color=[COLORS.get(s, "#999999") for s in frame["subject"]],
        )
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(label)
        ax.set_title(label, fontsize=10)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def compare(path: Path, scenario: Any) -> dict[str, Any]:
    """Write `comparison.csv`, `comparison.png` and the chain's `summary.json`; return the summary."""
    from sandbox.chain.layout import MANIFEST, stage_runs
    from sandbox.core.run_dir import atomic_write_text
    from sandbox.core.summary import write_summary

    table = subject_figures(path, scenario)
    atomic_write_text(path / COMPARISON, table.to_csv(index=False))
    plot_comparison(table, f"{scenario.name}: the norm along the chain").savefig(path / "comparison.png", dpi=120)
    judge = read_json(path / "judge" / "summary.json")
    students = {d: read_json(path / d / "summary.json") for d in stage_runs(scenario)["distill"]}
    manifest = read_json(path / MANIFEST)
    summary = {
        "scenario": scenario.name,
        "policy": judge["principles"][0],
        "truth": judge.get("truth"),
        "student": scenario.chain.models.student,
        "form": scenario.form(),
        "judge": {"mode": judge["judge_mode"], "model": judge["judge_model"], **judge["judge"]},
        "students": {
            d: {
                "final": s["final"],
                "judge_calls": s["judge"]["calls"],
                "moves_played": s["judge"]["moves_played"],
                "seconds_per_episode": s["seconds_per_episode"],
            }
            for d, s in students.items()
        },
        "comparison": json_records(table),
        "stage_seconds": {
            stage: json_number(info.get("seconds")) for stage, info in manifest["stages"].items() if "seconds" in info
        },
    }
    write_summary(path, summary, kind="chain")
    return summary
