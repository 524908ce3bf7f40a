"""`sandbox bench fork`: what a fork saves and what a replay costs, on the embedded model at a small size.

For a SCAI society, a donor-game population and a naming-game population (each cut to a size that 2 cores play in
minutes), one measurement each, every figure against a baseline from the same run:

* the parent: n steps, its model calls and wall time;
* a fork at k = n/2 without change: whether every table is identical to the parent's, and the model calls it made
  after the fork step (0 is the target: the parent's cache answers them);
* a fork at k with a change, against a fresh run of the changed scenario: the calls each made, their ratio against
  the expected (n - k) / n, and the time saved;
* a replay of the parent offline: identical or not, its time against the parent's.

A model call is a transcript record the response cache did not answer. `SANDBOX_BENCH_FORK=society,naming` picks
some of the three; `--model`-like endpoints: `SANDBOX_BENCH_MODEL=openai:MODEL` runs every role there.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["Case", "measure", "run"]


@dataclass(frozen=True)
class Case:
    """One kind's measurement: its scenario (a dumped mapping), the step count's path, and a change."""

    name: str
    kind: str
    data: Mapping[str, Any]
    change: Mapping[str, Any]  # {field: value}: a scenario field, so that a fresh run of the changed scenario exists
    tables: tuple[str, ...]
    models: Callable[[], Mapping[str, Any] | None] = field(default=lambda: None)


def _load(path: str, **changes: Any) -> dict[str, Any]:
    from sandbox.base.files import read_yaml
    from sandbox.core.steps import set_path

    root = Path(__file__).resolve().parents[2]
    data = read_yaml(root / path)
    for name, value in changes.items():
        data = set_path(data, name.replace("__", "."), value)
    return data


def embedded_cases() -> list[Case]:
    """The three small runs on the embedded model (or `SANDBOX_BENCH_MODEL`)."""
    spec = os.environ.get("SANDBOX_BENCH_MODEL")
    society = _load(
        "scenarios/scai/small_model/wrong_start_selfish.yaml", runs=1, epochs=4, society__size=8, concurrency=4
    )
    society["assistant"]["revision"] = {"strategy": "single"}
    society["assistant"]["interactions"] = {"user_user": 4, "assistant_proposer": 1, "assistant_responder": 1}
    donor = _load("scenarios/population/donor_small.yaml", population__agents=4, population__generations=3)
    donor["models"]["user"]["sampling"]["max_tokens"] = 150
    naming = _load("scenarios/population/naming_small.yaml", population__agents=6, population__generations=4)
    naming["population"]["game"]["stop_at_consensus"] = False
    cases = [
        Case("society", "society", society, {"society.norms.0.norm": "fair"}, ("episodes.csv", "epochs.csv")),
        Case("donor", "population", donor, {"models.user.sampling.temperature": 0.6}, ("generations.csv",)),
        Case("naming", "population", naming, {"models.user.sampling.temperature": 0.9}, ("generations.csv",)),
    ]
    if spec:
        for case in cases:
            for role in case.data["models"]:
                case.data["models"][role]["spec"] = spec
    chosen = [n for n in os.environ.get("SANDBOX_BENCH_FORK", "").split(",") if n]
    return [c for c in cases if not chosen or c.name in chosen]


def _model_calls(path: Path, at: int = 0) -> int:
    calls = set()
    with (path / "transcripts.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if not record.get("cache_hit") and not record.get("error") and (record.get("epoch") or 0) >= at:
                calls.add(record["call_id"])
    return len(calls)


def _same(a: Path, b: Path, tables: tuple[str, ...]) -> bool:
    for table in tables:
        x, y = pd.read_csv(a / table), pd.read_csv(b / table)
        if not x.drop(columns=["seconds"], errors="ignore").equals(y.drop(columns=["seconds"], errors="ignore")):
            return False
    return True


def measure(case: Case, root: Path) -> dict[str, Any]:
    """One case's figures (see the module's text)."""
    import sandbox
    from sandbox.core.scenario_files import parse_kind
    from sandbox.core.steps import set_path
    from sandbox.engine.fork_plan import steps_of

    scenario = parse_kind(case.kind, dict(case.data), f"<bench fork: {case.name}>")
    started = time.perf_counter()
    parent = sandbox.run(scenario, out=root / f"{case.name}-parent", models=case.models()).path
    parent_s = time.perf_counter() - started
    unit = steps_of(sandbox.RunResult.load(parent).run_kind)
    n = len(pd.read_csv(parent / "generations.csv")) if case.kind == "population" else int(case.data["epochs"])
    k = n // 2
    started = time.perf_counter()
    same = sandbox.fork(parent, at=k, out=root / f"{case.name}-same", models=case.models()).path
    same_s = time.perf_counter() - started
    started = time.perf_counter()
    changed = sandbox.fork(
        parent, at=k, changes=dict(case.change), out=root / f"{case.name}-changed", models=case.models()
    )
    changed_s = time.perf_counter() - started
    fresh_data = dict(case.data)
    for name, value in case.change.items():
        fresh_data = set_path(fresh_data, name, value)
    started = time.perf_counter()
    fresh = sandbox.run(parse_kind(case.kind, fresh_data), out=root / f"{case.name}-fresh", models=case.models()).path
    fresh_s = time.perf_counter() - started
    report = sandbox.replay(parent, models=case.models())
    fork_calls, fresh_calls = _model_calls(changed.path, k), _model_calls(fresh)
    return {
        "case": case.name,
        "unit": unit.unit,
        "steps": n,
        "at": k,
        "parent_calls": _model_calls(parent),
        "parent_s": round(parent_s, 1),
        "same_identical": _same(parent, same, case.tables),
        "same_calls_after": _model_calls(same, k),
        "same_s": round(same_s, 1),
        "change": ", ".join(f"{k}={v}" for k, v in case.change.items()),
        "fork_calls": fork_calls,
        "fresh_calls": fresh_calls,
        "call_ratio": round(fork_calls / fresh_calls, 3) if fresh_calls else None,
        "expected_ratio": round((n - k) / n, 3),
        "fork_s": round(changed_s, 1),
        "fresh_s": round(fresh_s, 1),
        "time_saved": round(1 - changed_s / fresh_s, 3) if fresh_s else None,
        "replay_identical": report.identical,
        "replay_model_calls": report.model_calls,
        "replay_s": round(report.seconds, 1),
        "replay_ratio": round(report.seconds / parent_s, 3) if parent_s else None,
    }


def run(cases: list[Case] | None = None) -> dict[str, Any]:
    """Measure each case and print one table; the figures by case."""
    from rich.console import Console
    from rich.table import Table

    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="sandbox-bench-fork-") as tmp:
        for case in cases if cases is not None else embedded_cases():
            try:
                figures[case.name] = measure(case, Path(tmp))
            except Exception as error:  # one case that fails leaves the others' figures standing, and says why
                print(f"{case.name}: failed: {type(error).__name__}: {error}", flush=True)
                continue
            print(f"{case.name}: {json.dumps(figures[case.name])}", flush=True)
    table = Table(title="sandbox fork and sandbox replay (model calls: those the response cache did not answer)")
    table.add_column("measure")
    for name in figures:
        table.add_column(name, justify="right")
    rows: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        (
            "parent: steps, model calls, wall time",
            lambda f: f"{f['steps']} {f['unit']}s, {f['parent_calls']}, {f['parent_s']} s",
        ),
        (
            "fork at k = n/2 without change",
            lambda f: f"at {f['at']}: {'identical' if f['same_identical'] else 'DIFFERS'}",
        ),
        ("  its model calls after k, wall time", lambda f: f"{f['same_calls_after']}, {f['same_s']} s"),
        ("fork at k with a change", lambda f: f["change"]),
        ("  its model calls, wall time", lambda f: f"{f['fork_calls']}, {f['fork_s']} s"),
        ("fresh run of the changed scenario", lambda f: f"{f['fresh_calls']}, {f['fresh_s']} s"),
        ("calls: fork / fresh (expected (n-k)/n)", lambda f: f"{f['call_ratio']} ({f['expected_ratio']})"),
        ("time saved: 1 - fork / fresh", lambda f: f"{f['time_saved']}"),
        (
            "replay offline",
            lambda f: f"{'identical' if f['replay_identical'] else 'DIFFERS'}, {f['replay_model_calls']} model calls",
        ),
        ("  its wall time (against the parent's)", lambda f: f"{f['replay_s']} s ({f['replay_ratio']}x)"),
    ]
    for label, cell in rows:
        table.add_row(label, *(cell(f) for f in figures.values()))
    Console(emoji=False, markup=False).print(table)
    return figures
