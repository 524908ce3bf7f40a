"""One conformance test run over every registered kind of run (the toy kind from the tests folder included).

For each kind: its example scenario validates; its block is in `sandbox schema`; the dry run prints an
estimate (or says the kind is not estimated); a small run with scripted models finishes, and the same run
interrupted at a random point and resumed ends with identical tables; `summary.json` follows the common schema;
bad inputs (an unknown key, a wrong type, a file that is not UTF-8, a missing file) exit 2 naming the file and
the field, and write nothing. The runs go through the Python API (`sandbox.run`, `sandbox.resume`,
`sandbox.RunResult.load`), which every kind's commands wrap.

A kind's small scenario, scripted models and progress hooks are its own conformance case
(`RunKind.conformance`, a `sandbox.core.conformance.ConformanceCase` in the kind's package), so an installed
third-party kind runs here without an edit to the tests; a shipped kind without one fails.
"""

from __future__ import annotations

import json
import random
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

import sandbox
from sandbox.base.errors import RunFailedError
from sandbox.cli.runs import app
from sandbox.core import kinds
from sandbox.core.conformance import ConformanceCase
from sandbox.core.summary import summary_problems
from tests.toy_kind import TOY

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


class Interrupted(BaseException):
    """Raised from a progress hook: the run stops there, as under Ctrl-C (not an `Exception` a run could absorb)."""


def _shipped() -> set[str]:
    """The kinds this distribution registers (pyproject.toml's entry points)."""
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][kinds.GROUP])


def _case(name: str) -> ConformanceCase:
    """The kind's own conformance case (`RunKind.conformance`); a shipped kind must carry one, another kind's
    absence is a skip that says so."""
    kind = kinds.get(name)
    if kind.conformance is None:
        assert name not in _shipped(), f"the shipped {name} kind carries no conformance case (RunKind.conformance)"
        pytest.skip(f"the {name} kind carries no conformance case (RunKind.conformance)")
    case = kinds.resolve(kind.conformance)
    assert isinstance(case, ConformanceCase), f"{kind.conformance} is not a ConformanceCase"
    return case


@pytest.fixture(autouse=True)
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    kinds.register(TOY)
    monkeypatch.setenv(kinds.ENVIRONMENT, "tests.toy_kind:TOY")  # a sweep's spawned workers register it too
    yield
    kinds.unregister("toy")


def _names() -> list[str]:
    kinds.register(TOY)
    try:
        return list(kinds.kinds())
    finally:
        kinds.unregister("toy")


def _table(path: Path, timing: list[str]) -> pd.DataFrame:
    frame = pd.read_json(path, lines=True) if path.suffix == ".jsonl" else pd.read_csv(path)
    return frame.drop(columns=[c for c in frame.columns if c in timing or c.endswith(".seconds")])


@pytest.mark.parametrize("name", _names())
def test_the_example_validates_and_the_block_is_in_the_schema(name: str) -> None:
    kind = kinds.get(name)
    assert kind.example, f"the {name} kind names no example scenario"
    example = ROOT / kind.example
    result = runner.invoke(app, ["validate", str(example)])
    assert result.exit_code == 0 and ": ok (" in result.output, result.output
    schema = json.loads(runner.invoke(app, ["schema"]).output)
    members = {ref["$ref"].rsplit("/", 1)[-1] for ref in schema["anyOf"]}
    model = kind.scenario_model()
    assert model.__name__ in members
    if kind.block is not None:
        assert kind.block in schema["$defs"][model.__name__]["properties"]


@pytest.mark.parametrize("name", _names())
def test_the_dry_run_prints_an_estimate_and_writes_nothing(name: str, tmp_path: Path) -> None:
    kind = kinds.get(name)
    out = tmp_path / "never"
    result = runner.invoke(app, ["run", str(ROOT / kind.example), "--dry-run", "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "no model called" in text
    if kind.has("dry_run") or kind.has("expand"):  # a sweep estimates the runs it expands to
        assert "not estimated" not in text and "calls" in text
    else:
        assert "1 runs are of kinds without a dry run and are not estimated" in text
    assert not out.exists()


@pytest.mark.parametrize("name", _names())
def test_a_run_through_the_python_api_interrupted_at_a_random_point_resumes_to_identical_tables(
    name: str, tmp_path: Path
) -> None:
    kind, case = kinds.get(name), _case(name)
    steps = 0

    def count() -> None:
        nonlocal steps
        steps += 1

    result = sandbox.run(case.scenario(tmp_path), out=tmp_path / "whole", models=case.models(), hooks=case.hooks(count))
    whole = result.path
    assert (
        result.kind == name
        and result.run_kind.name == name
        and summary_problems(result.summary) == []
        and result.summary["kind"] == name
    )
    assert set(case.tables) <= {kind.tables[t] for t in result.tables()}, f"{name}: RunResult misses a table"
    assert steps >= 2, f"{name}: too few steps of progress ({steps}) to interrupt between"
    stop_at = random.Random(name).randint(1, steps - 1)  # reproducible: the same point on every machine

    def interrupt() -> None:
        nonlocal steps
        steps -= 1
        if steps == 0:
            raise Interrupted

    steps = stop_at
    with pytest.raises((Interrupted, RunFailedError)) as raised:  # a society's runner reports a failed run
        sandbox.run(case.scenario(tmp_path), out=tmp_path / "cut", models=case.models(), hooks=case.hooks(interrupt))
    assert raised.type is Interrupted or "Interrupted" in repr(raised.value), repr(raised.value)
    assert not (tmp_path / "cut" / "summary.json").exists(), f"{name}: interrupted at step {stop_at} yet finished"
    resumed = sandbox.resume(tmp_path / "cut", models=case.models())
    for table in case.tables:
        pd.testing.assert_frame_equal(
            _table(whole / table, case.timing),
            _table(resumed.path / table, case.timing),
            obj=f"{name}: {table} after an interruption at step {stop_at}",
        )
    assert summary_problems(resumed.summary) == [] and type(resumed) is type(result)
    loaded = sandbox.RunResult.load(tmp_path / "cut")
    assert loaded.summary == resumed.summary and loaded.tables() == result.tables()


def _bad_inputs(example: Path, tmp: Path) -> list[tuple[Path, str]]:
    data = yaml.safe_load(example.read_text())
    unknown = tmp / "unknown.yaml"
    unknown.write_text(yaml.safe_dump({**data, "no_such_field": 1}))
    wrong = tmp / "wrong.yaml"
    wrong.write_text(yaml.safe_dump({**data, "name": ["not", "a", "name"]}))
    binary = tmp / "binary.yaml"
    binary.write_bytes(b"name: \xff\xfe\n")
    return [
        (unknown, "no_such_field: unknown field"),
        (wrong, "name:"),
        (binary, "not UTF-8"),
        (tmp / "missing.yaml", "cannot read the file"),
    ]


@pytest.mark.parametrize("name", _names())
def test_bad_input_exits_2_naming_the_file_and_the_field_and_writes_nothing(name: str, tmp_path: Path) -> None:
    kind = kinds.get(name)
    for path, problem in _bad_inputs(ROOT / kind.example, tmp_path):
        out = tmp_path / f"out-{path.stem}"
        result = runner.invoke(app, ["run", str(path), "--out", str(out)])
        text = " ".join(result.output.split())
        assert result.exit_code == 2, (path.name, result.output)
        assert str(path) in text and problem in text, (path.name, result.output)
        assert not out.exists()


def _stepped() -> list[str]:
    """The kinds that checkpoint steps (`RunKind.steps`), a third-party kind's too."""
    kinds.register(TOY)
    try:
        return [name for name, kind in kinds.kinds().items() if kind.steps is not None]
    finally:
        kinds.unregister("toy")


@pytest.mark.parametrize("name", _stepped())
def test_a_fork_without_change_is_identical_to_its_parent_costs_no_call_and_replays(name: str, tmp_path: Path) -> None:
    """For every kind that checkpoints steps (`RunKind.steps`): a fork at a middle step with no change ends with
    every table identical to its parent's and asks no model; the parent and the fork replay offline identically."""
    kind, case = kinds.get(name), _case(name)
    parent = sandbox.run(case.scenario(tmp_path), out=tmp_path / "parent", models=case.models())
    steps = kinds.resolve(kind.steps)
    total = parent.scenario.model_dump()
    for part in steps.count.split("."):
        total = total[part]
    models = case.models()
    fork = sandbox.fork(parent.path, at=total // 2, out=tmp_path / "fork", models=models)
    assert sum(getattr(model, "calls", 0) for model in (models or {}).values()) == 0, f"{name}: the fork asked a model"
    for table in case.tables:
        pd.testing.assert_frame_equal(
            _table(parent.path / table, case.timing), _table(fork.path / table, case.timing), obj=f"{name}: {table}"
        )
    assert fork.summary["lineage"][0]["at"] == total // 2
    for run in (parent.path, fork.path):
        report = sandbox.replay(run, models=case.models())
        assert report.identical and report.model_calls == 0, report.lines()
