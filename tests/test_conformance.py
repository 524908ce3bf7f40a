"""One conformance test run over every registered kind of run (the toy kind from the tests folder included).

For each kind: its example scenario validates; its block is in `sandbox schema`; the dry run prints an
estimate (or says the kind is not estimated); a small run with scripted models finishes, and the same run
interrupted at a random point and resumed ends with identical tables; `summary.json` follows the common schema;
bad inputs (an unknown key, a wrong type, a file that is not UTF-8, a missing file) exit 2 naming the file and
the field, and write nothing. The runs go through the Python API (`sandbox.run`, `sandbox.resume`,
`sandbox.RunResult.load`), which every kind's commands wrap.

A kind's small scenario, scripted models and progress hooks are the `CASES` below: a new kind adds its case (the
test fails for a registered kind without one).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

import sandbox
from sandbox.cli.runs import app
from sandbox.core import kinds
from sandbox.core.scenario_files import parse_kind
from sandbox.core.summary import summary_problems
from tests.toy_kind import TOY

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


class Interrupted(BaseException):
    """Raised from a progress hook: the run stops there, as under Ctrl-C (not an `Exception` a run could absorb)."""


@dataclass
class Case:
    """A kind's small run: its scenario, its scripted models, its progress hooks, and the tables to compare."""

    scenario: Callable[[Path], Any]
    hooks: Callable[[Callable[[], None]], Any]  # the kind's hooks, calling `tick()` at each step of progress
    tables: list[str]
    models: Callable[[], dict[str, Any] | None] = lambda: None
    timing: list[str] = field(default_factory=lambda: ["seconds"])  # columns that vary from session to session


def _society(tmp: Path) -> Any:
    from tests.conftest import scai_scenario

    return scai_scenario(runs=2, epochs=2)


def _society_hooks(tick: Callable[[], None]) -> Any:
    from sandbox.society.runner import ProgressHooks

    return ProgressHooks(on_episode=lambda _: tick())


def _society_models() -> dict[str, Any]:
    from tests.conftest import scai_models

    return scai_models()


def _training(tmp: Path) -> Any:
    from tests.test_moral_run import TINY

    return parse_kind("training", {**TINY, "training": {**TINY["training"], "episodes": 4}})


def _train_hooks(tick: Callable[[], None]) -> Any:
    from sandbox.training.hooks import TrainHooks

    return TrainHooks(on_episode=lambda _: tick())


def _proxy(tmp: Path) -> Any:
    from tests.test_proxy_label import scenario

    return scenario(test_items=8)


def _proxy_hooks(tick: Callable[[], None]) -> Any:
    from sandbox.proxy.label_steps import LabelHooks

    return LabelHooks(on_item=tick)


def _proxy_models() -> dict[str, Any]:
    from sandbox.llm.scripted import scripted
    from tests.test_proxy_label import rule_judge

    return {"judge": scripted([(r"Ultimatum", rule_judge)])}


def _dialogue(tmp: Path) -> Any:
    from tests.test_dialogue import dialogue_scenario

    return dialogue_scenario()


def _dialogue_hooks(tick: Callable[[], None]) -> Any:
    from sandbox.dialogue.run import SolveHooks

    return SolveHooks(on_advance=lambda n: tick())


def _dialogue_models() -> dict[str, Any]:
    from tests.dialogue_helpers import ultimatum_model

    model = ultimatum_model()
    return {"players": model, "judge": model}


def _distill(tmp: Path) -> Any:
    from tests.test_distill import scenario

    return scenario(trials=2)


def _distill_models() -> dict[str, Any]:
    from tests.conftest import scai_models
    from tests.test_distill import generous_judge

    models = scai_models()
    return {"judge": generous_judge(), "assistant": models["assistant"], "users": models["user"]}


def _judge(tmp: Path) -> Any:
    return parse_kind(
        "judge",
        {
            "name": "judge",
            "seed": 2,
            "concurrency": 2,
            "models": {"judge": "embedded"},
            "distill": {
                "source": {"text": "Give the other player everything."},
                "truth": "altruistic",
                "scoring": "binary",
            },
            "label": {"roles": ["proposer", "responder"]},
        },
    )


def _judge_models() -> dict[str, Any]:
    from tests.test_distill import generous_judge

    return {"judge": generous_judge()}


def _chain(tmp: Path) -> Any:
    from tests.test_chain import chain

    return chain()


def _chain_hooks(tick: Callable[[], None]) -> Any:
    from sandbox.chain.run import ChainHooks

    return ChainHooks(on_step=tick)


def _chain_models() -> dict[str, Any]:
    from tests.test_chain import models

    return models()


def _sweep(tmp: Path) -> Any:
    """A sweep of toy runs (its spawned workers find the toy kind through SANDBOX_KINDS)."""
    data = {
        "name": "toy-sweep",
        "sweep": {
            "base": {"name": "t", "seed": 1, "toy": {"steps": 3}},
            "grid": {"toy.steps": [2, 3]},
            "seeds": 2,
            "workers": 1,
        },
    }
    return parse_kind("sweep", data)


def _population(tmp: Path) -> Any:
    from tests.test_population import scenario

    return scenario(64, 6, network={"kind": "small_world", "k": 4, "p": 0.2}, revision={"mutation": 0.05})


def _toy(tmp: Path) -> Any:
    return parse_kind("toy", {"name": "toy", "seed": 2, "toy": {"steps": 6}})


CASES: dict[str, Case] = {
    "society": Case(
        _society, _society_hooks, ["episodes.csv", "metrics.csv", "epochs.csv", "policies.jsonl"], _society_models
    ),
    "training": Case(_training, _train_hooks, ["metrics.csv"]),
    "proxy": Case(_proxy, _proxy_hooks, ["labels.csv", "accuracy.csv"], _proxy_models),
    "dialogue": Case(_dialogue, _dialogue_hooks, ["dialogues.csv", "policy.csv"], _dialogue_models),
    "distill": Case(_distill, _train_hooks, ["metrics.csv", "judge_table.csv", "evaluation.csv"], _distill_models),
    "judge": Case(_judge, lambda tick: tick, ["judge_table.csv"], _judge_models),
    "chain": Case(
        _chain,
        _chain_hooks,
        ["comparison.csv", "judge/judge_table.csv", "society/episodes.csv", "evaluate/base/episodes.csv"],
        _chain_models,
    ),
    "population": Case(_population, lambda tick: lambda _: tick(), ["population.csv", "generations.csv", "edges.csv"]),
    "sweep": Case(_sweep, lambda tick: (None, lambda _: tick()), ["sweep.csv", "runs.csv"]),
    "toy": Case(_toy, lambda tick: lambda _: tick(), ["steps.csv"]),
}


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
    kind, case = kinds.get(name), CASES.get(name)
    assert case is not None, f"the {name} kind has no conformance case in tests/test_conformance.py"
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
    with pytest.raises(BaseException) as raised:
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
