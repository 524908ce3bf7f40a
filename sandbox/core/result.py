"""`RunResult`: a run directory of any kind, read back: its scenario, summary and tables (as pandas).

`RunResult.load(path)` opens the directory as its kind says (`sandbox.core.kinds`):
a kind may name a subclass with its own views (the society kind's plots and
policy tables, `sandbox.scai.result.SocietyResult`). Tables load on first
use, by the names the kind lists (`RunResult.table(name)`, or as an
attribute: `result.episodes`). A forked run names its parent (`result.parent`,
`result.fork`: the record of the fork) and a run its finished forks (`result.forks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from sandbox.base.errors import SandboxError, UsageError
from sandbox.base.files import read_csv
from sandbox.core import kinds
from sandbox.core import run_dir as layout
from sandbox.core.scenario_files import load_run_scenario
from sandbox.core.steps import forks_of, read_fork
from sandbox.core.summary import read_summary

__all__ = ["RunResult"]


@dataclass(frozen=True)
class RunResult:
    """A finished run of any kind, read from its directory."""

    path: Path

    @classmethod
    def load(cls, path: str | Path) -> RunResult:
        """Open a finished run directory of any kind, as its kind's result class."""
        path = Path(path)
        kind = kinds.kind_of_dir(path)
        if not (path / layout.SUMMARY).is_file():
            raise FileNotFoundError(f"{path} holds no finished run (no {layout.SUMMARY}); resume it first")
        result = kinds.resolve(kind.result) if kind.result else RunResult
        if cls is not RunResult and not issubclass(result, cls):
            raise UsageError(f"{path} is a {kind.name} run, not a {cls.__name__}")
        return result(path)

    @cached_property
    def kind(self) -> str:
        """The name of the run's kind (`society`, `population`, ...)."""
        return self.run_kind.name

    @cached_property
    def run_kind(self) -> kinds.RunKind:
        """The run's kind: its registry record (tables, views, commands)."""
        return kinds.kind_of_dir(self.path)

    @cached_property
    def scenario(self) -> Any:
        """The run's scenario (overrides applied), as its kind's model."""
        return load_run_scenario(self.path)

    @cached_property
    def summary(self) -> dict[str, Any]:
        """The run's `summary.json`."""
        return read_summary(self.path)

    @property
    def fork(self) -> dict[str, Any] | None:
        """The run's fork record (`fork.json`: `parent`, `parent_name`, `at`, `unit`, `changes`, ...); None when the
        run is no fork. It stays readable when the parent's directory is gone."""
        return read_fork(self.path)

    @property
    def parent(self) -> RunResult | None:
        """The finished run this run was forked from; None when it is no fork, or when the parent's directory is gone
        or holds no finished run (`fork["parent"]` still names it)."""
        record = self.fork
        if record is None:
            return None
        try:
            return RunResult.load(record["parent"])
        except (FileNotFoundError, SandboxError):
            return None

    @property
    def forks(self) -> list[RunResult]:
        """The finished forks made of this run, in the order made (a fork still running, or stopped before its end, is
        left out; `sandbox.core.steps.forks_of` lists every fork that exists)."""
        return [RunResult.load(path) for path in forks_of(self.path) if (path / layout.SUMMARY).is_file()]

    def tables(self) -> list[str]:
        """The names of the kind's tables this run directory holds."""
        return [name for name, file in self.run_kind.tables.items() if (self.path / file).is_file()]

    def table(self, name: str, **read_options: Any) -> pd.DataFrame:
        """The table `name` of the run's kind (a CSV or JSONL file of the directory) as a DataFrame; `read_options`
        go to `pandas.read_csv` (`keep_default_na=False` keeps empty text as "", not NaN)."""
        if name not in self.run_kind.tables:
            raise UsageError(f"{self.kind} runs have no table {name!r} (tables: {', '.join(self.run_kind.tables)})")
        path = self.path / self.run_kind.tables[name]
        if path.suffix == ".jsonl":
            if not path.is_file():
                return pd.DataFrame()
            return pd.read_json(path, lines=True)
        return read_csv(path, **read_options)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            tables = kinds.kind_of_dir(self.path).tables
        except Exception:
            raise AttributeError(name) from None
        if name in tables:
            return self.table(name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r} (tables: {', '.join(tables)})")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r}, kind={self.kind!r})"
