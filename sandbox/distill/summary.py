"""The end of a distillation run: `summary.json` (behaviour, the judge's accuracy and cost) and the training plot.

The judge's accuracy is measured on its own table: each distinct move it was
asked about with the principle, its label against the true norm's (a
proposal in the norm's SCAI bin, an answer by the norm's rule). With it a
reader can tell a weak judge from a weak student. The offered share the
judge rewards most (`judge_target_share`) is the target the student moves to.
"""

from __future__ import annotations

import time
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from sandbox.base.errors import UsageError
from sandbox.base.files import read_csv
from sandbox.base.rounding import best
from sandbox.base.stats import json_number
from sandbox.core.run_dir import RunDirectory
from sandbox.core.summary import write_summary
from sandbox.distill.judge_table import JudgeTable

__all__ = ["finish", "judge_figures", "plot_training_shares"]


def judge_figures(table: JudgeTable) -> dict[str, Any]:
    """The judge's table in figures: entries, unparsed verdicts, accuracy and AUC against the true norm, and the
    offered share its reward is highest at (mean over principles)."""
    from sandbox.base.stats import auc

    rows = pd.DataFrame(table.table())
    out: dict[str, Any] = {"table_entries": len(rows), "unparsed": table.unparsed()}
    if rows.empty:
        return out
    rows["reward"] = rows["reward"].astype(float)
    rows["offered_share"] = rows["offered_share"].astype(float)
    mine = rows[rows["variant"] == "principle"]
    known = mine[mine["truth_label"].astype(str).isin(["True", "False"])]
    if not known.empty:
        truth = known["truth_label"].astype(str) == "True"
        said = known["label"].astype(str) == "yes"
        out["accuracy_vs_truth"] = float((said == truth).mean())
        out["auc_vs_truth"] = json_number(auc(known["reward"].tolist(), truth.tolist()))
        out["judged_moves_with_truth"] = len(known)
    proposals = mine[mine["role"] == "proposer"].groupby("offered_share")["reward"].mean()
    if not proposals.empty:
        out["judge_target_share"] = float(proposals.index[best(proposals.tolist())])  # tied: the lowest share
        out["judge_reward_by_share"] = {f"{share:.2f}": round(float(r), 4) for share, r in proposals.items()}
    return out


def plot_training_shares(metrics: pd.DataFrame, title: str = "") -> Figure:
    """The student's offered share, its illegal rate and its rewards over training episodes (rolling means)."""
    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    window = max(1, len(metrics) // 20)
    columns = ["offered_share", "acceptance", "illegal"] + [
        c for c in metrics if c.startswith("reward_") and c != "reward_kind"
    ]
    for column in columns:
        if column in metrics and metrics[column].notna().any():
            ax.plot(metrics["episode"], metrics[column].rolling(window, min_periods=1).mean(), label=column)
    ax.set_xlabel("episode")
    ax.set_ylabel("rolling mean")
    ax.set_title("The student during training (no policy in its prompt)", fontsize=10)
    ax.legend(fontsize=8, ncol=3, loc="best")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def finish(run_dir: RunDirectory, scenario: Any, plan: Any, table: JudgeTable) -> dict[str, Any]:
    """Write `summary.json` and `training_shares.png` from `metrics.csv` (and `play.csv`); mark the run complete."""
    from sandbox.distill.layout import assistant_spec
    from sandbox.llm.accounting import TokenLedger
    from sandbox.llm.transcript import read_transcript

    metrics = read_csv(run_dir / "metrics.csv")
    training = scenario.training
    if len(metrics) != training.episodes:
        raise UsageError(
            f"{run_dir.path}: {len(metrics)} of {training.episodes} episodes in metrics.csv; "
            f"resume it with `sandbox resume {run_dir.path}`"
        )
    play = run_dir / "play.csv"
    tail = read_csv(play) if play.is_file() else metrics.tail(max(1, len(metrics) // 10))
    path = run_dir / "transcripts.jsonl"
    usage = TokenLedger.from_transcript(read_transcript(path) if path.is_file() else []).totals().get("judge", {})
    moves = training.episodes * training.parallel * training.rounds
    summary = {
        "scenario": scenario.name,
        "student": scenario.models.student,
        "judge_model": scenario.models.judge,
        "algorithm": training.algorithm,
        "reward": scenario.distill.reward,
        "judge_mode": scenario.distill.judge,
        "scoring": scenario.distill.scoring,
        "form": scenario.form(),
        "principles": [p.text for p in plan.principles],
        "principle_origins": [p.origin for p in plan.principles],
        "source": plan.source,
        "truth": plan.truth,
        "episodes": len(metrics),
        "moves_per_episode": training.parallel * training.rounds,
        "final": {name: json_number(tail[name].mean()) for name in ("offered_share", "acceptance", "illegal")},
        "final_from": "play after training (play.csv)" if play.is_file() else "last tenth of training",
        "final_rewards": {
            c.removeprefix("reward_"): json_number(tail[c].mean())
            for c in tail
            if c.startswith("reward_") and c != "reward_kind"
        },
        "judge": {
            **judge_figures(table),
            "calls": int(usage.get("calls", 0)),
            "cache_hits": int(usage.get("cache_hits", 0)),
            "moves_played": moves,
        },
        "seconds_per_episode": json_number(metrics["seconds"].mean()) if "seconds" in metrics else None,
        "adapter": "adapter",
        "assistant_spec": assistant_spec(run_dir, scenario),
    }
    write_summary(run_dir, summary, kind="distill")
    title = f"{scenario.name}: {scenario.distill.reward} reward"
    plot_training_shares(metrics, title).savefig(run_dir / "training_shares.png", dpi=120)
    run_dir.write_status("complete", finished=time.time())
    return summary
