"""A model a user names for a dry pipeline (`rules:FILE.py:FUNCTION`, `sandbox.llm.rules`): a population runs on it
from the command line, its answers are parsed like a model's (nonsense is a recorded illegal move), and the summary,
the command's output and the viewer's catalog say it is not an LLM; a wrong file or function exits 2 naming it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml
from typer.testing import CliRunner

from sandbox.cli.runs import app

RULES = """
def answer(messages):
    text = messages[-1]["content"]
    if "action1" in text and "Always defect" in messages[0]["content"]:  # the defectors' moves are nonsense
        return "I would rather not say."
    if "action1" in text:
        return "action1"
    return "My strategy will be to cooperate."
"""


def _scenario(tmp_path: Path, spec: str) -> Path:
    data = yaml.safe_load(Path("scenarios/population/pd_llm_small.yaml").read_text())
    data["population"]["generations"] = 1
    data["models"]["user"] = {"spec": spec}
    file = tmp_path / "dry.yaml"
    file.write_text(yaml.safe_dump(data))
    return file


def test_a_rules_model_runs_a_population_and_says_it_is_not_an_llm(tmp_path: Path) -> None:
    from sandbox.viewer.catalog import Catalog

    (tmp_path / "my_rules.py").write_text(RULES)
    spec = f"rules:{tmp_path / 'my_rules.py'}:answer"
    out = tmp_path / "runs" / "dry"
    result = CliRunner().invoke(
        app, ["run", str(_scenario(tmp_path, "embedded")), "--model", f"user={spec}", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "not an LLM" in result.output and spec in result.output
    summary = yaml.safe_load((out / "summary.json").read_text())
    assert summary["not_an_llm"] == {"user": spec}
    moves = pd.read_csv(out / "moves.csv", keep_default_na=False)
    answers = pd.concat([moves["answer_a"], moves["answer_b"]])
    illegal = pd.concat([moves["move_a"], moves["move_b"]]) == ""  # a nonsense answer: an illegal move, text kept
    assert 0 < illegal.mean() < 1 and set(answers[illegal]) == {"I would rather not say."}
    assert pd.read_csv(out / "generations.csv")["illegal_rate"].iloc[0] > 0
    row = Catalog(tmp_path / "runs").row(out.resolve())
    assert row["not_an_llm"] == {"user": spec}


def test_a_rules_model_that_is_not_there_exits_2_naming_it(tmp_path: Path) -> None:
    (tmp_path / "my_rules.py").write_text(RULES)
    for spec, named in (
        (f"rules:{tmp_path / 'missing.py'}:answer", "no such file"),
        (f"rules:{tmp_path / 'my_rules.py'}:reply", "has no function 'reply'"),
        ("rules:my_rules", "write rules:FILE.py:FUNCTION"),
    ):
        out = tmp_path / "runs" / "bad"
        result = CliRunner().invoke(app, ["run", str(_scenario(tmp_path, spec)), "--out", str(out)])
        assert result.exit_code == 2, result.output
        assert named in result.output and "dry.yaml" in result.output
        assert not out.exists()  # nothing half-written
