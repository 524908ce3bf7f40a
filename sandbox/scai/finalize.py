"""The SCAI tables and plots a finished run writes: policies, epochs, their summary, the final policies."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pandas as pd

from sandbox.base.files import read_csv
from sandbox.core import run_dir as layout
from sandbox.core.run_dir import RunDirectory, atomic_write_text
from sandbox.engine.store import store_tables
from sandbox.scai.metrics import epoch_summary, final_policy_bins, group_epochs, scai_summary
from sandbox.scai.plots import save_scai_plots

if TYPE_CHECKING:
    from sandbox.scai.assistant_block import ScaiScenario

POLICY_COLUMNS = [
    "run",
    "version",
    "epoch",
    "policy",
    "source",
    "legal",
    "evidence",
    "diff",
    "answer",
    "illegal_answers",
    "copy_reasks",
    "kept",
    "candidates",
]
FINAL_COLUMNS = [
    "run",
    "proposal_index",
    "policy_version",
    "amount",
    "currency",
    "proposal",
    "proposal_legal",
    "offered_share",
]


def realised_norms(run_dir: RunDirectory) -> dict[str, float] | None:
    """Each norm's share of the users, averaged over runs, from `agents.csv` (None without it)."""
    path = run_dir / layout.AGENTS
    if not path.is_file():
        return None
    agents = read_csv(path)
    users = agents[agents["agent"].astype(str).str.startswith("user-")]
    shares = users.groupby("run")["norm"].value_counts(normalize=True).unstack(fill_value=0.0)
    return {str(norm): float(share) for norm, share in shares.mean().items()}


def finalize_scai(
    run_dir: RunDirectory,
    scenario: ScaiScenario,
    episodes: pd.DataFrame,
    records: list[dict[str, Any]],
    finals: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Write the SCAI tables and plots; return the summary's `scai` section."""
    records = sorted(records, key=lambda r: (r["run"], r["version"]))
    atomic_write_text(run_dir / layout.POLICIES, "".join(json.dumps(r) + "\n" for r in records))
    policies = pd.DataFrame(records, columns=POLICY_COLUMNS)
    groups = group_epochs(episodes)
    population = {share.norm: share.proportion for share in scenario.society.norms}
    final_rows = pd.DataFrame(
        sorted(finals or [], key=lambda r: (r["run"], r["proposal_index"])), columns=FINAL_COLUMNS
    )
    if not final_rows.empty:
        atomic_write_text(run_dir / layout.FINAL_PROPOSALS, final_rows.to_csv(index=False))
    per_run, bins = final_policy_bins(groups, population, final_rows, realised_norms(run_dir))
    final = policies.groupby("run").tail(1)[["run", "version", "policy"]]
    per_run = final.merge(per_run, on="run", how="left")
    atomic_write_text(run_dir / layout.EPOCHS, groups.to_csv(index=False))
    atomic_write_text(run_dir / layout.EPOCH_SUMMARY, epoch_summary(groups).to_csv(index=False))
    atomic_write_text(run_dir / layout.FINAL_POLICIES, per_run.to_csv(index=False))
    with store_tables(run_dir.path) as db:
        policies.assign(
            evidence=policies["evidence"].map(json.dumps), candidates=policies["candidates"].map(json.dumps)
        ).to_sql("policies", db, if_exists="replace", index=False)
        groups.to_sql("epochs", db, if_exists="replace", index=False)
    save_scai_plots(groups, bins, run_dir.path, title=scenario.name, mixed=len(population) > 1)
    return scai_summary(groups, policies, bins)
