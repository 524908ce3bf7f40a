"""SCAI metrics on a hand-computed example: group metrics per run and epoch, CIs across runs, the gap, the bins."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from sandbox.scai.metrics import (
    epoch_summary,
    final_policy_bins,
    gaps,
    group_epochs,
    policy_table,
)


def episode(run: int, proposer: str, responder: str, responder_part: int, decision: str | None) -> dict:
    amount = 10
    accepted = decision == "accept"
    return {
        "run": run,
        "epoch": 0,
        "proposer": proposer,
        "responder": responder,
        "amount": amount,
        "proposal_legal": True,
        "offered_share": responder_part / amount,
        "decision": decision,
        "proposer_payoff": (amount - responder_part) if accepted else 0,
        "responder_payoff": responder_part if accepted else 0,
    }


EPISODES = pd.DataFrame(
    [
        episode(0, "user-0", "user-1", 2, "accept"),  # users offer 20%
        episode(0, "assistant", "user-2", 4, "reject"),  # the assistant offers 40%, rejected
        episode(1, "user-3", "user-4", 3, "accept"),  # users offer 30%
        episode(1, "assistant", "user-5", 5, "accept"),  # the assistant offers 50%
    ]
)


def test_group_metrics_per_run_and_epoch() -> None:
    groups = group_epochs(EPISODES).set_index(["run", "group"])
    assert groups.loc[(0, "users"), "offered_share"] == pytest.approx(0.2)
    assert groups.loc[(0, "assistant"), "offered_share"] == pytest.approx(0.4)
    # users answered two proposals in run 0: one accepted, one rejected
    assert groups.loc[(0, "users"), "acceptance_rate"] == pytest.approx(0.5)
    assert groups.loc[(1, "users"), "acceptance_rate"] == pytest.approx(1.0)
    # utility: payoff over the amount per interaction played: (8 + 2 + 0) / 10 / 3
    assert groups.loc[(0, "users"), "utility"] == pytest.approx(1 / 3)
    assert groups.loc[(0, "assistant"), "utility"] == 0.0
    assert groups.loc[(1, "assistant"), "utility"] == pytest.approx(0.5)
    assert groups.loc[(0, "users"), "interactions"] == 3 and groups.loc[(0, "assistant"), "responses"] == 0
    assert list(gaps(group_epochs(EPISODES))["gap"]) == pytest.approx([0.2, 0.2])


def test_confidence_intervals_across_runs() -> None:
    summary = epoch_summary(group_epochs(EPISODES)).set_index(["group", "metric"])
    users = summary.loc[("users", "offered_share")]
    # mean 0.25; t(0.975, 1) = 12.706, sd 0.0707, half-width 12.706 * 0.0707 / sqrt(2) = 0.635
    assert users["mean"] == pytest.approx(0.25) and users["n"] == 2
    assert users["ci_low"] == 0.0  # clipped: a share is never negative
    assert users["ci_high"] == pytest.approx(0.25 + 12.7062 * math.sqrt(0.005) / math.sqrt(2), abs=1e-3)
    gap = summary.loc[("gap", "offered_share")]
    assert (
        gap["mean"] == pytest.approx(0.2)
        and gap["ci_low"] == pytest.approx(0.2)
        and gap["ci_high"] == pytest.approx(0.2)
    )


def test_final_policy_bins_against_the_population() -> None:
    per_run, bins = final_policy_bins(group_epochs(EPISODES), {"selfish": 0.8, "altruistic": 0.2})
    assert list(per_run["bin"]) == ["fair", "fair"]  # 40% and 50% offered
    table = bins.set_index("bin")
    assert table.loc["fair", "runs"] == 2 and table.loc["fair", "share_of_runs"] == 1.0
    assert table.loc["selfish", "population_share"] == 0.8 and table.loc["fair", "population_share"] == 0.0


def test_policy_table_is_epoch_by_run() -> None:
    policies = pd.DataFrame({"run": [0, 0, 1, 1], "epoch": [0, 1, 0, 1], "policy": ["a", "b", "c", "d"]})
    table = policy_table(policies)
    assert list(table.columns) == ["run 0", "run 1"] and table.loc[1, "run 1"] == "d"
