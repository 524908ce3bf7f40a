"""`summary.json`, the one writer: every kind's headline figures under one versioned frame.

Every run directory's `summary.json` is written here, and only here, so all
of them share a schema::

    {"schema_version": 1, "kind": "society", "scenario": "default", ...the kind's own figures...}

`kind` is the registered kind that wrote it (`sandbox.core.kinds`), `scenario` the
scenario's name; the rest is the kind's (documented with each kind). A
reader checks `schema_version` before it trusts a field's meaning.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sandbox.base.files import read_json
from sandbox.core.run_dir import SUMMARY, atomic_write_text, run_finished

__all__ = ["FRAME", "SCHEMA_VERSION", "read_summary", "roles_not_an_llm", "summary_problems", "write_summary"]

SCHEMA_VERSION = 1
FRAME = ("schema_version", "kind")  # the fields every summary.json carries beside the kind's own


def write_summary(path: Path | Any, summary: dict[str, Any], *, kind: str) -> dict[str, Any]:
    """Write `summary` as the run directory `path`'s `summary.json` (atomically), framed by `schema_version` and
    `kind`; return what was written. `summary` holds `scenario` (the scenario's name) and the kind's figures."""
    from sandbox.core.costs import write_costs
    from sandbox.core.steps import lineage

    data = {"schema_version": SCHEMA_VERSION, "kind": kind, **{k: v for k, v in summary.items() if k not in FRAME}}
    ancestors = lineage(Path(getattr(path, "path", path)))
    if ancestors:  # a fork: its parent, the step and the changes, then the parent's own, up the chain
        data["lineage"] = [
            {k: record.get(k) for k in ("parent", "at", "unit", "changes", "fresh")} for record in ancestors
        ]
    played = roles_not_an_llm(Path(getattr(path, "path", path)))
    if played:  # the roles a user's function answered (`rules:`): never an LLM's results
        data["not_an_llm"] = played
    problems = summary_problems(data)
    if problems:
        raise ValueError(f"summary.json of a {kind} run: {'; '.join(problems)}")
    atomic_write_text(Path(getattr(path, "path", path)) / SUMMARY, json.dumps(data, indent=2, default=str))
    write_costs(Path(getattr(path, "path", path)))  # the calls by step and role (`sandbox.core.costs`)
    run_finished(Path(getattr(path, "path", path)))  # to MLflow, when the scenario asks (`tracking:`)
    return data


def roles_not_an_llm(path: Path) -> dict[str, str]:
    """The roles of the run's scenario (`scenario.yaml`) that a `rules:` model plays (`sandbox.llm.rules`)."""
    import yaml

    from sandbox.core.run_dir import SCENARIO
    from sandbox.llm.specs import not_an_llm

    try:
        data = yaml.safe_load((path / SCENARIO).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return not_an_llm(data.get("models")) if isinstance(data, dict) else {}


def read_summary(path: Path | Any) -> dict[str, Any]:
    """The run directory `path`'s `summary.json` (exit 2 naming the file when it is missing or not JSON)."""
    return read_json(Path(getattr(path, "path", path)) / SUMMARY)


def summary_problems(data: Any) -> list[str]:
    """What keeps `data` from following the common schema (empty when it does)."""
    if not isinstance(data, dict):
        return ["not a JSON object"]
    problems = []
    if data.get("schema_version") != SCHEMA_VERSION:
        problems.append(f"schema_version is {data.get('schema_version')!r}, not {SCHEMA_VERSION}")
    if not isinstance(data.get("kind"), str) or not data.get("kind"):
        problems.append("kind (the run's kind) is missing")
    if not isinstance(data.get("scenario"), str) or not data.get("scenario"):
        problems.append("scenario (the scenario's name) is missing")
    return problems
