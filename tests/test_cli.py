"""The command line: exit codes, nothing written on invalid input, schema, validate, models."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from sandbox.cli.runs import app

ROOT = Path(__file__).parent.parent
runner = CliRunner()


def write(path: Path, data: object) -> Path:
    path.write_text(yaml.safe_dump(data))
    return path


GOOD = {"name": "g", "society": {"size": 4, "norms": [{"norm": "fair", "proportion": 1.0}]}}


def test_validate_ok_and_bad(tmp_path: Path) -> None:
    good = write(tmp_path / "good.yaml", GOOD)
    bad = write(tmp_path / "bad.yaml", {**GOOD, "society": {**GOOD["society"], "size": "many"}})
    result = runner.invoke(app, ["validate", str(good)])
    assert result.exit_code == 0 and "ok" in result.output
    result = runner.invoke(app, ["validate", str(good), str(bad)])
    assert result.exit_code == 2
    assert "bad.yaml: invalid scenario" in result.output and "society.size" in result.output


def test_validate_every_shipped_scenario() -> None:
    files = sorted(str(p) for p in (ROOT / "scenarios").rglob("*.yaml"))
    result = runner.invoke(app, ["validate", *files])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if ": ok (" in line]
    assert len(files) > 50 and [line.split(": ok (")[0] for line in lines] == files  # each file, in order, validated
    kinds = {"users", "training", "labeling", "distilling", "dialogue game", "sweep of"}
    assert {k for k in kinds if any(k in line for line in lines)} == kinds  # every kind's files are described


def test_invalid_run_writes_nothing(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.yaml", {**GOOD, "epochs": -1})
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(bad), "--out", str(out)])
    assert result.exit_code == 2
    assert "epochs" in result.output
    assert not out.exists()


def test_bad_override_writes_nothing(tmp_path: Path) -> None:
    good = write(tmp_path / "good.yaml", GOOD)
    out = tmp_path / "out"
    for args in (["--model", "user=nonsense"], ["--model", "chef=embedded"], ["--runs", "0"]):
        result = runner.invoke(app, ["run", str(good), "--out", str(out), *args])
        assert result.exit_code == 2, args
        assert not out.exists()


def test_missing_credentials_write_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    good = write(tmp_path / "good.yaml", GOOD)
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(good), "--out", str(out), "--model", "user=openai:gpt-4o-mini"])
    assert result.exit_code == 2 and "OPENAI_API_KEY" in result.output
    assert not out.exists()


def test_run_into_a_used_directory_is_refused(tmp_path: Path) -> None:
    good = write(tmp_path / "good.yaml", GOOD)
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("keep")
    result = runner.invoke(app, ["run", str(good), "--out", str(tmp_path / "used")])
    assert result.exit_code == 2 and "sandbox resume" in result.output


def test_resume_needs_a_run_directory(tmp_path: Path) -> None:
    result = runner.invoke(app, ["resume", str(tmp_path)])
    assert result.exit_code == 2 and "not a run directory" in result.output


def test_paths_print_as_written_with_no_emoji_and_no_markup(tmp_path: Path) -> None:
    odd = "a[bold]b:x:c"  # Rich reads `:x:` as an emoji (a cross) and `[bold]` as markup
    bad = write(tmp_path / f"{odd}.yaml", {**GOOD, "society": 3})
    for command in (["validate", str(bad)], ["run", str(bad)], ["resume", str(tmp_path / odd)]):
        result = runner.invoke(app, command)
        assert result.exit_code == 2 and str(tmp_path / odd) in result.output, (command, result.output)
        assert "\u274c" not in result.output
    result = runner.invoke(app, ["examples", "copy", "default", str(tmp_path / odd)])
    assert result.exit_code == 0 and f"written under {tmp_path / odd}" in " ".join(result.output.split())


def test_runtime_failure_exits_1_and_stays_resumable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An endpoint that is down: every call fails after the retries, so the run fails at run time.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    good = write(tmp_path / "good.yaml", {**GOOD, "society": {**GOOD["society"], "size": 2}})
    out = tmp_path / "out"
    from sandbox.llm import resolve

    monkeypatch.setattr(resolve.ModelStack, "base_delay_s", 0.01)
    result = runner.invoke(app, ["run", str(good), "--out", str(out), "--model", "all=openai:m"])
    assert result.exit_code == 1, result.output
    assert "resumable" in result.output
    assert json.loads((out / "run.json").read_text())["status"] == "failed"
    assert (out / "scenario.yaml").exists() and not (out / "summary.json").exists()


def test_schema_is_json() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    assert json.loads(result.output)["title"] == "Scenario"


def test_models_lists_backends() -> None:
    result = runner.invoke(app, ["models"])
    assert result.exit_code == 0
    for spec in ("embedded", "openai:MODEL", "hf:PATH", "vllm:MODEL"):
        assert spec in result.output


def test_console_script_is_installed() -> None:
    completed = subprocess.run(
        [str(Path(sys.executable).parent / "sandbox"), "--help"], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0
    for command in ("run", "resume", "validate", "schema", "models", "bench"):
        assert command in completed.stdout
