"""The Python API: run a scenario, resume a run, and read a run directory as a `RunResult`.

Example (in a notebook)::

    from sandbox import load_scenario, run
    result = run(load_scenario("scenarios/default.yaml"))
    result.metrics.groupby("norm")["offered_share"].mean()
    result.plot()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd
from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure

from sandbox import run_dir as layout
from sandbox._sync import run_sync
from sandbox.llm.transcript import read_transcript
from sandbox.runner import ProgressHooks, aresume, arun
from sandbox.scenario import Scenario
from sandbox.scenario_file import load_scenario
from sandbox.files import read_csv, read_json


@dataclass(frozen=True)
class RunResult:
    """A finished run, read from its directory (tables load on first use)."""

    path: Path

    @classmethod
    def load(cls, path: str | Path) -> RunResult:
        """Open a run directory written by `run` or `sandbox run`."""
        path = Path(path)
        if not (path / layout.SUMMARY).is_file():
            raise FileNotFoundError(f"{path} holds no finished run (no {layout.SUMMARY}); resume it first")
        return cls(path)

    @cached_property
    def scenario(self) -> Scenario:
        return load_scenario(self.path / layout.SCENARIO)

    @cached_property
    def summary(self) -> dict[str, Any]:
        return read_json(self.path / layout.SUMMARY)

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
        path = self.path / layout.POLICIES
        if not path.is_file():
            return pd.DataFrame()
        return pd.read_json(path, lines=True)

    @cached_property
    def candidates(self) -> pd.DataFrame:
        """SCAI with `revision: search`: one row per run, version and candidate principle, with its distance to
        the users' behaviour, probability and whether it was kept (empty for the single draw)."""
        rows = [{"run": p["run"], "version": p["version"], "candidate": i,
                 **{k: c.get(k) for k in ("source", "policy", "legal", "duplicate", "distance", "probability", "chosen")}}
                for p in self.policies.to_dict("records") for i, c in enumerate(p.get("candidates") or [])]  # fmt: skip
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
        from sandbox.plots import plot_offered_share

        return plot_offered_share(self.episodes, title=self.scenario.name)

    def __repr__(self) -> str:
        return f"RunResult({str(self.path)!r}, episodes={self.summary.get('episodes')})"


def run(
    scenario: Scenario | str | Path,
    *,
    out: str | Path | None = None,
    models: Mapping[str, BaseChatModel] | None = None,
    hooks: ProgressHooks | None = None,
) -> RunResult:
    """Run a scenario (a `Scenario` or a path to a YAML file) and return its result.

    Works in scripts and in notebooks (a running event loop is left alone).
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    return RunResult.load(run_sync(arun(scenario, out=out, models=models, hooks=hooks)))


def resume(
    path: str | Path, *, models: Mapping[str, BaseChatModel] | None = None, hooks: ProgressHooks | None = None
) -> RunResult:
    """Continue an interrupted run and return its result."""
    return RunResult.load(run_sync(aresume(path, models=models, hooks=hooks)))
