"""The run directory: where a run's scenario, store, transcripts, tables and plots live.

Layout:
    scenario.yaml       the resolved scenario (overrides applied); resume reads it
    run.json            status (running, failed, complete), versions, timings
    store.sqlite        LangGraph checkpoints, then the episodes and metrics tables
    cache.sqlite        the LLM response cache of this run
    transcripts.jsonl   one record per LLM call
    agents.csv          the population of each run (agent, norm, manner)
    episodes.csv        one row per episode
    metrics.csv         one row per agent, epoch and run
    summary.json        headline figures with 95% confidence intervals
    policies.jsonl      SCAI: every policy with its run, epoch, evidence and diff (a search's candidates too)
    epochs.csv          SCAI: one row per run, epoch and group (users, assistant)
    epoch_summary.csv   SCAI: per epoch and group, means and 95% CIs across runs
    final_policies.csv  SCAI: each run's final policy and its norm bin
    final_proposals.csv SCAI: the final policy's proposals after the last epoch
    evaluation.csv      SCAI: `sandbox evaluate` proposals under new conditions
    *.png               plots
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sandbox.errors import UsageError
from sandbox.scenario import Scenario
from sandbox.scenario_file import load_scenario

SCENARIO = "scenario.yaml"
STATUS = "run.json"
STORE = "store.sqlite"
CACHE = "cache.sqlite"
TRANSCRIPTS = "transcripts.jsonl"
AGENTS = "agents.csv"
EPISODES = "episodes.csv"
METRICS = "metrics.csv"
SUMMARY = "summary.json"
POLICIES = "policies.jsonl"
EPOCHS = "epochs.csv"
EPOCH_SUMMARY = "epoch_summary.csv"
FINAL_POLICIES = "final_policies.csv"
FINAL_PROPOSALS = "final_proposals.csv"
EVALUATION = "evaluation.csv"


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file, so a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def default_out(scenario: Scenario, root: Path | str = "runs") -> Path:
    """`runs/<scenario>-<timestamp>`."""
    return Path(root) / f"{scenario.name}-{time.strftime('%Y%m%d-%H%M%S')}"


@dataclass(frozen=True)
class RunDirectory:
    """A run directory on disk."""

    path: Path

    def __truediv__(self, name: str) -> Path:
        return self.path / name

    @classmethod
    def check_new(cls, path: Path) -> None:
        """Raise `UsageError` when `path` holds anything: a new run never writes over files."""
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise UsageError(f"{path} already exists and is not empty; resume it with `sandbox resume {path}`")

    @classmethod
    def create(cls, path: Path, scenario: Scenario) -> RunDirectory:
        """Make the directory and write the resolved scenario and a `running` status."""
        cls.check_new(path)
        path.mkdir(parents=True, exist_ok=True)
        run_dir = cls(path)
        atomic_write_text(path / SCENARIO, yaml.safe_dump(scenario.model_dump(mode="json"), sort_keys=False))
        run_dir.write_status("running", created=time.time())
        return run_dir

    @classmethod
    def open(cls, path: Path | str) -> RunDirectory:
        """Open an existing run directory; `UsageError` when it is not one."""
        path = Path(path)
        if not (path / SCENARIO).is_file():
            raise UsageError(f"{path} is not a run directory (no {SCENARIO})")
        return cls(path)

    def scenario(self) -> Scenario:
        return load_scenario(self.path / SCENARIO)

    def status(self) -> dict[str, Any]:
        try:
            return json.loads((self.path / STATUS).read_text())
        except (OSError, json.JSONDecodeError):
            return {}

    def write_status(self, status: str, **fields: Any) -> None:
        from sandbox import __version__

        data = {**self.status(), **fields, "status": status, "version": __version__, "updated": time.time()}
        atomic_write_text(self.path / STATUS, json.dumps(data, indent=2))
