"""Tidy results of a run: the episodes table, per-agent metrics, the summary.

`metrics.csv` has one row per agent, epoch and run. Offered share is the
responder's part over the amount, for the agent's legal proposals. The
summary's confidence intervals are taken across independent runs (the mean of
each run first) when there are several, else across proposals; it says which.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sandbox.base.stats import json_number, mean_ci

EPISODE_COLUMNS = [
    "run",
    "epoch",
    "episode",
    "index",
    "interaction",
    "policy_version",
    "proposer",
    "responder",
    "proposer_norm",
    "proposer_manner",
    "responder_norm",
    "responder_manner",
    "amount",
    "currency",
    "proposal",
    "proposal_legal",
    "proposal_illegal_answers",
    "proposer_part",
    "responder_part",
    "offered_share",
    "response",
    "decision",
    "decision_legal",
    "response_illegal_answers",
    "proposer_payoff",
    "responder_payoff",
    "proposer_instruction",
    "responder_instruction",
]

METRIC_COLUMNS = [
    "run",
    "epoch",
    "agent",
    "norm",
    "manner",
    "proposals",
    "offered_share",
    "responses",
    "acceptance_rate",
    "payoff",
    "illegal_answers",
]


def episodes_frame(records: list[dict[str, Any]], profiles: dict[int, dict[str, dict[str, str]]]) -> pd.DataFrame:
    """One row per episode, with each side's norm and manner.

    Args:
        records: Episode records from the graph state.
        profiles: Per run, agent id -> {"norm": ..., "manner": ...}.
    """
    rows = []
    for record in records:
        who = profiles[record["run"]]
        proposer, responder = who.get(record["proposer"], {}), who.get(record["responder"], {})
        rows.append(  # as the episode was played (stamped since forks), else the run's profiles
            {
                "proposer_norm": proposer.get("norm"),
                "proposer_manner": proposer.get("manner"),
                "responder_norm": responder.get("norm"),
                "responder_manner": responder.get("manner"),
                **record,
            }
        )
    frame = pd.DataFrame(rows, columns=EPISODE_COLUMNS)
    return frame.sort_values(["run", "epoch", "index"], kind="stable").reset_index(drop=True)


def metrics_frame(episodes: pd.DataFrame) -> pd.DataFrame:
    """One row per agent, epoch and run (agents that played in that epoch)."""
    if episodes.empty:
        return pd.DataFrame(columns=METRIC_COLUMNS)
    as_proposer = episodes.assign(
        agent=episodes["proposer"],
        norm=episodes["proposer_norm"],
        manner=episodes["proposer_manner"],
        proposed=1,
        responded=0,
        accepted=np.nan,
        payoff=episodes["proposer_payoff"],
        illegal=episodes["proposal_illegal_answers"],
    )
    responded = episodes["decision"].notna()
    as_responder = episodes.assign(
        agent=episodes["responder"],
        norm=episodes["responder_norm"],
        manner=episodes["responder_manner"],
        proposed=0,
        responded=responded.astype(int),
        accepted=np.where(responded, (episodes["decision"] == "accept").astype(float), np.nan),
        offered_share=np.nan,
        payoff=episodes["responder_payoff"],
        illegal=episodes["response_illegal_answers"],
    )
    both = pd.concat([as_proposer, as_responder], ignore_index=True)
    both["offered_share"] = pd.to_numeric(both["offered_share"], errors="coerce")
    both["payoff"] = pd.to_numeric(both["payoff"], errors="coerce")
    grouped = both.groupby(["run", "epoch", "agent", "norm", "manner"], sort=True, dropna=False)
    metrics = grouped.agg(
        proposals=("proposed", "sum"),
        offered_share=("offered_share", "mean"),
        responses=("responded", "sum"),
        acceptance_rate=("accepted", "mean"),
        payoff=("payoff", "sum"),
        illegal_answers=("illegal", "sum"),
    ).reset_index()
    return metrics[METRIC_COLUMNS]


PAYOFF_COLUMNS = [
    "member",
    "norm",
    "role",
    "episodes",
    "illegal_moves",
    "payoff",
    "utility",
    "ci_low",
    "ci_high",
    "n",
    "ci_over",
]


def member_kind(agent: Any) -> str:
    """The kind of society member an agent id names: assistant, guided (solver-guided) or user.

    Examples:
        >>> [member_kind(a) for a in ("user-3", "guided-8", "assistant-1")]
        ['user', 'guided', 'assistant']
    """
    agent = str(agent)
    return "assistant" if agent.startswith("assistant") else "guided" if agent.startswith("guided-") else "user"


def member_payoffs(episodes: pd.DataFrame) -> pd.DataFrame:
    """Each member kind's payoff per role: one row per member kind, norm (users') and role (proposer, responder,
    both).

    `payoff` is the mean payoff per episode played in the role, `utility` the mean payoff over the amount, with
    its 95% CI across runs (each run's mean one value) when there are several, else across episodes. An episode
    that ended on an illegal move pays nothing, so it counts as 0; `illegal_moves` counts the member's own.
    """
    if episodes.empty:
        return pd.DataFrame(columns=PAYOFF_COLUMNS)
    amount = episodes["amount"].astype(float)
    sides = []
    for role in ("proposer", "responder"):
        payoff = pd.to_numeric(episodes[f"{role}_payoff"], errors="coerce").fillna(0.0)
        illegal = (
            ~episodes["proposal_legal"].astype(bool)
            if role == "proposer"
            else (episodes["proposal_legal"].astype(bool) & (episodes["decision_legal"] != True))  # noqa: E712 (NaN too)
        )
        sides.append(
            pd.DataFrame(
                {
                    "run": episodes["run"],
                    "member": episodes[role].map(member_kind),
                    "norm": episodes[f"{role}_norm"],
                    "role": role,
                    "payoff": payoff,
                    "utility": payoff / amount,
                    "illegal": illegal.astype(int),
                }
            )
        )
    both = pd.concat(sides, ignore_index=True)
    both = pd.concat([both, both.assign(role="both")], ignore_index=True)
    multi_run = both["run"].nunique() > 1
    rows = []
    for (member, norm, role), frame in both.groupby(["member", "norm", "role"], sort=True, dropna=False):
        values = frame.groupby("run")["utility"].mean().tolist() if multi_run else frame["utility"].tolist()
        record = _ci_record(values, "runs" if multi_run else "episodes")
        rows.append(
            {
                "member": member,
                "norm": norm,
                "role": role,
                "episodes": len(frame),
                "illegal_moves": int(frame["illegal"].sum()),
                "payoff": json_number(frame["payoff"].mean()),
                "utility": record["mean"],
                "ci_low": record["ci_low"],
                "ci_high": record["ci_high"],
                "n": record["n"],
                "ci_over": record["ci_over"],
            }
        )
    order = {"proposer": 0, "responder": 1, "both": 2}
    frame = pd.DataFrame(rows, columns=PAYOFF_COLUMNS)
    return frame.sort_values(
        ["member", "norm", "role"], key=lambda c: c.map(order) if c.name == "role" else c, kind="stable"
    ).reset_index(drop=True)


def _ci_record(values: list[float], over: str) -> dict[str, Any]:
    mean, low, high, n = mean_ci(values, bounds=(0.0, 1.0))  # shares lie in [0, 1]
    return {
        "mean": json_number(mean),
        "ci_low": json_number(low),
        "ci_high": json_number(high),
        "n": n,
        "ci_over": over,
    }


def offered_share_by(episodes: pd.DataFrame, key: str = "proposer_norm", by_epoch: bool = False) -> pd.DataFrame:
    """Mean offered share with a 95% CI per `key` (and per epoch if asked).

    Across runs when there are several (each run's mean is one value), else
    across proposals.
    """
    legal = episodes[episodes["proposal_legal"].astype(bool)].copy()
    legal["offered_share"] = legal["offered_share"].astype(float)
    groups = [key, "epoch"] if by_epoch else [key]
    multi_run = episodes["run"].nunique() > 1
    rows = []
    for values, frame in legal.groupby(groups, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        if multi_run:
            record = _ci_record(frame.groupby("run")["offered_share"].mean().tolist(), "runs")
        else:
            record = _ci_record(frame["offered_share"].tolist(), "proposals")
        rows.append({**dict(zip(groups, values)), **record, "proposals": len(frame)})
    return pd.DataFrame(rows, columns=[*groups, "mean", "ci_low", "ci_high", "n", "ci_over", "proposals"])


def summarize(episodes: pd.DataFrame, *, scenario: dict[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
    """The run's summary.json."""
    proposals = len(episodes)
    answers_illegal = int(episodes["proposal_illegal_answers"].sum() + episodes["response_illegal_answers"].sum())
    answers_legal = int(episodes["proposal_legal"].astype(bool).sum() + (episodes["decision_legal"] == True).sum())  # noqa: E712
    answers = answers_legal + answers_illegal
    decided = episodes["decision"].dropna()
    by_norm = offered_share_by(episodes)
    return {
        "scenario": scenario["name"],
        "seed": scenario["seed"],
        "runs": int(scenario["runs"]),
        "epochs": int(scenario["epochs"]),
        "episodes": proposals,
        "illegal_proposals": int((~episodes["proposal_legal"].astype(bool)).sum()),
        "illegal_answer_rate": answers_illegal / answers if answers else None,
        "acceptance_rate": float((decided == "accept").mean()) if len(decided) else None,
        "acceptance_rate_by_responder_norm": {
            norm: float((frame["decision"] == "accept").mean())
            for norm, frame in episodes[episodes["decision"].notna()].groupby("responder_norm")
        },
        "offered_share_by_norm": {
            row["proposer_norm"]: {k: row[k] for k in ("mean", "ci_low", "ci_high", "n", "ci_over", "proposals")}
            for row in by_norm.to_dict("records")
        },
        "payoff_by_member": [
            {k: row[k] for k in ("member", "norm", "role", "episodes", "payoff", "utility", "ci_low", "ci_high")}
            for row in member_payoffs(episodes).to_dict("records")
        ],
        "llm_usage": usage,
    }
