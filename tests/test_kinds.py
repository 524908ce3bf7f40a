"""The run-kind registry: the shipped kinds found through entry points, and a toy kind from the tests folder run
through the CLI (run, resume, schema, validate), the Python API, and a SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

import sandbox
from sandbox.base.errors import UsageError
from sandbox.cli.runs import app
from sandbox.core import kinds
from sandbox.core.summary import summary_problems
from tests.toy_kind import TOY

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "tests" / "toy.yaml"
runner = CliRunner()
SHIPPED = {
    "society": None,
    "training": "training",
    "proxy": "proxy",
    "distill": "distill",
    "dialogue": "dialogue",
    "population": "population",
    "sweep": "sweep",
}


@pytest.fixture
def toy() -> Iterator[kinds.RunKind]:
    kinds.register(TOY)
    yield TOY
    kinds.unregister("toy")


def test_the_shipped_kinds_are_found_through_their_entry_points() -> None:
    from importlib import metadata

    entries = {e.name: e.value for e in metadata.entry_points(group=kinds.GROUP)}
    assert set(SHIPPED) <= set(entries)
    found = kinds.kinds()
    assert {name: found[name].block for name in SHIPPED} == SHIPPED
    assert list(found)[-1] == "society"  # the default kind is matched last
    for name in SHIPPED:
        assert found[name].scenario_model().model_config.get("extra") == "forbid"


def test_a_file_is_matched_by_its_first_block_in_precedence_order() -> None:
    assert kinds.kind_of_data({"distill": {}, "training": {}}).name == "distill"  # a distillation trains too
    assert kinds.kind_of_data({"label": {}, "distill": {}}).name == "judge"  # a judge run has a distill: block
    assert kinds.kind_of_data({"chain": {}}).name == "chain"
    assert kinds.kind_of_data({"training": {}, "proxy": {}}).name == "training"  # proxy rewards in a training
    assert kinds.kind_of_data({"proxy": {}}).name == "proxy"
    assert kinds.kind_of_data({"name": "x", "society": {}}).name == "society"
    assert kinds.kind_of_data("not a mapping").name == "society"  # validation then names the problem
    with pytest.raises(UsageError, match="unknown run kind 'nope' .known: sweep, chain, dialogue, judge, distill"):
        kinds.get("nope")


def test_a_kind_is_registered_once(toy: kinds.RunKind) -> None:
    kinds.register(TOY)  # the same object again: nothing happens
    with pytest.raises(ValueError, match="already registered"):
        kinds.register(kinds.RunKind(name="toy", model=TOY.model, run=TOY.run, resume=TOY.resume))


def test_the_toy_kind_through_the_cli(tmp_path: Path, toy: kinds.RunKind) -> None:
    schema = json.loads(runner.invoke(app, ["schema"]).output)
    assert any("toy" in member.get("properties", {}) for member in schema["$defs"].values())
    assert json.loads(runner.invoke(app, ["schema", "toy"]).output)["title"] == "ToyScenario"
    result = runner.invoke(app, ["validate", str(EXAMPLE)])
    assert result.exit_code == 0 and "ok (toy-example: 5 steps)" in result.output, result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: b\ntoy: {steps: many}\n")
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2 and "toy.steps" in result.output

    out = tmp_path / "run"
    result = runner.invoke(app, ["run", str(EXAMPLE), "--out", str(out), "--seed", "4"])
    assert result.exit_code == 0, result.output
    assert "5 steps" in result.output and yaml.safe_load((out / "scenario.yaml").read_text())["seed"] == 4
    summary = json.loads((out / "summary.json").read_text())
    assert summary_problems(summary) == [] and summary["kind"] == "toy" and summary["steps"] == 5
    steps = pd.read_csv(out / "steps.csv")
    result = runner.invoke(app, ["resume", str(out)])  # a finished run: nothing more to count
    assert result.exit_code == 0 and pd.read_csv(out / "steps.csv").equals(steps)

    result = runner.invoke(app, ["run", str(EXAMPLE), "--out", str(tmp_path / "never"), "--runs", "2"])
    assert result.exit_code == 2 and "--runs: not an option for toy runs" in result.output
    assert not (tmp_path / "never").exists()
    result = runner.invoke(app, ["resume", str(out), "--device", "cpu"])
    assert result.exit_code == 2 and "--device: not an option" in result.output


def test_the_toy_kind_through_the_python_api(tmp_path: Path, toy: kinds.RunKind) -> None:
    scenario = sandbox.load_scenario(EXAMPLE)
    assert type(scenario).__name__ == "ToyScenario"
    seen: list[int] = []
    result = sandbox.run(scenario, out=tmp_path / "run", hooks=seen.append)
    assert seen == [0, 1, 2, 3, 4] and result.kind == "toy" and result.tables() == ["steps"]
    assert list(result.steps["step"]) == [0, 1, 2, 3, 4] and result.summary["steps"] == 5
    again = sandbox.run(EXAMPLE, out=tmp_path / "again")  # a path runs the same way
    pd.testing.assert_frame_equal(again.table("steps"), result.table("steps"))
    assert sandbox.resume(tmp_path / "run").summary == result.summary
    with pytest.raises(UsageError, match="no table 'episodes'"):
        result.table("episodes")


def test_a_toy_run_killed_by_sigkill_resumes_to_the_same_table(tmp_path: Path) -> None:
    """`python -m sandbox` finds a kind named by SANDBOX_KINDS, in a fresh process that a SIGKILL ends."""
    scenario = tmp_path / "slow.yaml"
    scenario.write_text(yaml.safe_dump({"name": "slow", "seed": 7, "toy": {"steps": 30, "pause_s": 0.05}}))
    env = {**os.environ, kinds.ENVIRONMENT: "tests.toy_kind:TOY", "PYTHONPATH": str(ROOT)}
    sandbox_cli = [sys.executable, "-m", "sandbox"]
    whole = subprocess.run(
        [*sandbox_cli, "run", str(scenario), "--out", str(tmp_path / "whole")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert whole.returncode == 0, whole.stderr
    process = subprocess.Popen(
        [*sandbox_cli, "run", str(scenario), "--out", str(tmp_path / "cut")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    steps = tmp_path / "cut" / "steps.csv"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not steps.is_file() or len(steps.read_text().splitlines()) < 8):
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert not (tmp_path / "cut" / "summary.json").exists()
    resumed = subprocess.run(
        [*sandbox_cli, "resume", str(tmp_path / "cut")], env=env, capture_output=True, text=True, check=False
    )
    assert resumed.returncode == 0, resumed.stderr
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "whole" / "steps.csv"), pd.read_csv(steps))


def test_a_kind_that_cannot_be_loaded_is_a_clear_error(tmp_path: Path) -> None:
    env = {**os.environ, kinds.ENVIRONMENT: "tests.no_such_module:KIND", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "sandbox", "validate", str(EXAMPLE)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0 and "SANDBOX_KINDS item 'tests.no_such_module:KIND' cannot be loaded" in result.stderr


def test_python_m_sandbox_offers_the_commands_of_the_entry_point() -> None:
    def commands(argv: list[str]) -> set[str]:
        text = subprocess.run([*argv, "--help"], capture_output=True, text=True, check=True).stdout
        return {line.split()[1] for line in text.splitlines() if line.startswith("│ ") and len(line.split()) > 2}

    entry = commands([str(Path(sys.executable).parent / "sandbox")])
    module = commands([sys.executable, "-m", "sandbox"])
    assert entry == module and {"run", "resume", "train", "label", "distill", "solve", "sweep", "compare"} <= module


def test_the_cli_names_the_file_and_the_kinds_that_take_an_option(tmp_path: Path) -> None:
    """A sweep's invalid run and a distillation's missing source name the file given; `sandbox evaluate` names the
    kinds it takes; a sweep's dry run estimates the runs it expands to."""
    sweep = tmp_path / "sx.yaml"
    sweep.write_text(
        yaml.safe_dump(
            {
                "name": "sx",
                "sweep": {
                    "base": {"name": "b", "society": {"size": 4, "norms": [{"norm": "fair", "proportion": 1.0}]}},
                    "grid": {"epochs": [0]},
                },
            }
        )
    )
    for command in (["validate", str(sweep)], ["run", str(sweep), "--out", str(tmp_path / "never")]):
        result = runner.invoke(app, command)
        assert result.exit_code == 2 and f"{sweep} (run-0000: epochs=0" in result.output, result.output
    distill = tmp_path / "dx.yaml"
    data = yaml.safe_load((ROOT / "scenarios" / "distill" / "tiny" / "selfish.yaml").read_text())
    data["distill"]["source"] = {"run": str(tmp_path / "no-such-run")}
    distill.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["run", str(distill), "--out", str(tmp_path / "never")])
    assert result.exit_code == 2 and str(distill) in result.output and "distill.source.run" in result.output
    assert not (tmp_path / "never").exists()
    ok = ROOT / "scenarios" / "sweeps" / "scai_norms.yaml"
    result = runner.invoke(app, ["run", str(ok), "--dry-run"])
    assert result.exit_code == 0 and "not estimated" not in result.output and "meta" in result.output


def test_a_budget_cap_given_on_resume_lands_in_its_own_field(tmp_path: Path) -> None:
    """--max-tokens and --max-cost alone raise those caps, not the calls cap."""
    from sandbox.llm.budget import Budget

    assert Budget(calls=5).with_caps(max_tokens=900) == Budget(calls=5, tokens=900)
    assert Budget().with_caps(max_cost=2.5) == Budget(usd=2.5) and Budget(calls=1).with_caps() is None
