"""A society run read back (`sandbox.RunResult.load` on a society run directory): its tables and SCAI's views."""

from __future__ import annotations

from functools import cached_property
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from sandbox.base.files import read_csv
from sandbox.core import run_dir as layout
from sandbox.core.result import RunResult
from sandbox.llm.transcript import read_transcript

__all__ = ["SocietyResult"]


class SocietyResult(RunResult):
    """A finished society run (with SCAI's tables when it had an assistant)."""

    @cached_property
    def metrics(self) -> pd.DataFrame:
        """One row per agent, epoch and run."""
        return read_csv(self.path / layout.METRICS)

    @cached_property
    def episodes(self) -> pd.DataFrame:
        """One row per episode."""
        return read_csv(self.path / layout.EPISODES)

    @cached_property
    def transcripts(self) -> pd.DataFrame:
        """One row per LLM call (messages as lists of dicts)."""
        return pd.DataFrame(read_transcript(self.path / layout.TRANSCRIPTS))

    @cached_property
    def policies(self) -> pd.DataFrame:
        """SCAI: every policy, one row per run and version (empty without an assistant)."""
        return self.table("policies")

    @cached_property
    def candidates(self) -> pd.DataFrame:
        """SCAI with `revision: search`: one row per run, version and candidate principle, with its distance to
        the users' behaviour, probability and whether it was kept (empty for the single draw)."""
        rows = [
            {
                "run": p["run"],
                "version": p["version"],
                "candidate": i,
                **{
                    k: c.get(k) for k in ("source", "policy", "legal", "duplicate", "distance", "probability", "chosen")
                },
            }
            for p in self.policies.to_dict("records")
            for i, c in enumerate(p.get("candidates") or [])
        ]
        return pd.DataFrame(rows)

    @cached_property
    def epochs(self) -> pd.DataFrame:
        """SCAI: one row per run, epoch and group (users, assistant)."""
        return read_csv(self.path / layout.EPOCHS)

    def policy_table(self) -> pd.DataFrame:
        """SCAI: the policy-evolution table, epoch by run, each cell the policy played."""
        from sandbox.scai.metrics import policy_table

        return policy_table(self.policies)

    def show_policies(self) -> Any:
        """The policy-evolution table styled for a notebook (wrapped, left-aligned text)."""
        return self.policy_table().style.set_properties(
            **{"white-space": "pre-wrap", "text-align": "left", "vertical-align": "top", "min-width": "14em"}
        )

    def plot_alignment(self) -> Figure:
        """SCAI, Fig. 3 style: users' and assistant's offered share over epochs with 95% CIs, and the gap."""
        from sandbox.scai.plots import plot_scai

        return plot_scai(self.epochs, title=self.scenario.name)

    def plot(self) -> Figure:
        """Offered share by norm with 95% CIs (and over epochs)."""
        from sandbox.society.plots import plot_offered_share

        return plot_offered_share(self.episodes, title=self.scenario.name)

    def __repr__(self) -> str:
        return f"RunResult({str(self.path)!r}, episodes={self.summary.get('episodes')})"
