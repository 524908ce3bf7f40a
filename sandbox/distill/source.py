"""The principle to distill: read from a SCAI run directory or given as text, checked before anything is written.

A SCAI run directory holds every policy in `policies.jsonl` (run, version,
text) and each run's final bin in `final_policies.csv`. A run's final policy
is its last version, the one its assistant played in the last epoch.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from sandbox.base.errors import ScenarioError
from sandbox.base.files import read_csv
from sandbox.core import run_dir as layout
from sandbox.core.scenario_files import load_run_scenario

__all__ = ["Principle", "SourceRun", "resolve_principles", "source_run"]


@dataclass(frozen=True)
class Principle:
    """One policy in words, and where it came from."""

    text: str
    origin: str  # "text", or "run R version V"
    run: int | None = None
    version: int | None = None
    bin: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "origin": self.origin, "run": self.run, "version": self.version, "bin": self.bin}


@dataclass(frozen=True)
class SourceRun:
    """What a distillation reads from its source SCAI run besides the policies."""

    path: Path
    scenario: Any  # the source run's society scenario (sandbox.scai.scenario.Scenario)

    def library_norm(self) -> str | None:
        """The society's norm when every user holds one library norm, else None."""
        norms = {share.norm for share in self.scenario.society.norms if share.proportion > 0}
        texts = [share.text for share in self.scenario.society.norms]
        if len(norms) == 1 and not any(texts) and next(iter(norms)) in ("selfish", "fair", "altruistic"):
            return next(iter(norms))
        return None


def _problem(source: str, field: str, message: str) -> ScenarioError:
    return ScenarioError(source, [(f"distill.source.{field}", message)])


def source_run(block: Any, source: str) -> SourceRun | None:
    """The source run directory of `block.source` (None for a text), checked: a finished SCAI run with policies."""
    if block.source.run is None:
        return None

    path = Path(block.source.run).expanduser()
    if not path.is_dir():
        raise _problem(source, "run", f"{path} is not a directory")
    if not (path / layout.SCENARIO).is_file():
        raise _problem(source, "run", f"{path} is not a run directory (no {layout.SCENARIO})")
    try:
        scenario = load_run_scenario(path)
    except ScenarioError as error:
        raise _problem(source, "run", f"{path} holds no society scenario: {error.problems[0][1]}") from None
    if scenario.assistant is None:
        raise _problem(source, "run", f"{path} is not a SCAI run (its scenario has no assistant)")
    if not (path / layout.POLICIES).is_file():
        raise _problem(
            source,
            "run",
            f"{path} has no {layout.POLICIES}: distill needs a finished SCAI run "
            f"(resume it with `sandbox resume {path}`)",
        )
    return SourceRun(path, scenario)


def _final_policies(path: Path, source: str) -> dict[int, dict[str, Any]]:
    final: dict[int, dict[str, Any]] = {}
    try:
        for line in (path / layout.POLICIES).read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                if record["run"] not in final or record["version"] > final[record["run"]]["version"]:
                    final[record["run"]] = record
    except (ValueError, KeyError) as error:
        raise _problem(source, "run", f"{path / layout.POLICIES} is not a policies file: {error}") from None
    if not final:
        raise _problem(source, "run", f"{path / layout.POLICIES} holds no policy")
    return final


def _bins(path: Path) -> dict[int, str]:
    file = path / layout.FINAL_POLICIES
    if not file.is_file():
        return {}
    table = read_csv(file)
    return {int(row["run"]): str(row["bin"]) for _, row in table.iterrows() if "bin" in table and pd.notna(row["bin"])}


def resolve_principles(block: Any, source: str, run: SourceRun | None = None) -> list[Principle]:
    """The principle(s) `block.source` names; `ScenarioError` naming the field when they cannot be read.

    Args:
        block: The scenario's `distill:` block.
        source: The scenario file's name, for error messages.
        run: The source run, when the caller has checked it already (`source_run`).
    """
    if block.source.text is not None:
        return [Principle(block.source.text.strip(), "text")]
    run = run or source_run(block, source)
    assert run is not None
    final = _final_policies(run.path, source)
    bins = _bins(run.path)

    def principle(index: int) -> Principle:
        record = final[index]
        return Principle(
            str(record["policy"]).strip(),
            f"run {index} version {record['version']}",
            index,
            int(record["version"]),
            bins.get(index),
        )

    pick = block.source.pick
    if pick == "final":
        if block.source.run_index not in final:
            raise _problem(
                source,
                "run_index",
                f"run {block.source.run_index} is not in {run.path} (its runs: {', '.join(map(str, sorted(final)))})",
            )
        return [principle(block.source.run_index)]
    if pick == "all":
        return [principle(index) for index in sorted(final)]
    if not bins:
        raise _problem(source, "pick", f"{run.path} has no {layout.FINAL_POLICIES} with the runs' bins")
    wanted = block.source.bin or Counter(bins.values()).most_common(1)[0][0]
    chosen = [principle(index) for index in sorted(final) if bins.get(index) == wanted]
    if not chosen:
        raise _problem(
            source, "bin", f"no run of {run.path} ended in the {wanted} bin (bins: {dict(Counter(bins.values()))})"
        )
    return chosen
