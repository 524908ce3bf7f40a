"""The sandbox on a real, paid OpenAI-compatible endpoint: skipped unless SANDBOX_PAID_TESTS=1 and OPENAI_API_KEY
are set (OPENAI_BASE_URL picks another provider; SANDBOX_PAID_MODEL the model, gpt-4o-mini by default)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sandbox.cli.runs import app

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.paid
def test_the_default_society_on_a_paid_model(tmp_path: Path) -> None:
    model = os.environ.get("SANDBOX_PAID_MODEL", "gpt-4o-mini")
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(ROOT / "scenarios" / "default.yaml"),
            "--out",
            str(tmp_path / "run"),
            "--model",
            f"all=openai:{model}",
            "--max-calls",
            "200",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["episodes"] > 0 and summary["llm_usage"]["user"]["calls"] > 0
    assert summary["illegal_answer_rate"] is not None and summary["illegal_answer_rate"] < 0.5
