"""Templates: every one renders, undefined variables are errors, and no prompt text lives in Python."""

from __future__ import annotations

import ast
from pathlib import Path

import jinja2
import pytest

import prompts
from agents.user import example_turns
from sandbox.rules.ultimatum import Split, Stake
from societies.manners import MANNERS
from societies.norms import NORMS

ROOT = Path(__file__).parent.parent


def test_templates_ship_and_render() -> None:
    assert "ultimatum/propose.j2" in prompts.template_names()
    for norm in NORMS.names():
        for manner in MANNERS.names():
            text = prompts.render("ultimatum/user_system.j2", norm=NORMS.get(norm), manner=MANNERS.get(manner))
            assert NORMS.get(norm).text in text
            assert (MANNERS.get(manner).text in text) == (manner != "neutral")
    stake = Stake(52, "apples")
    assert "Split 52 apples" in prompts.render("ultimatum/propose.j2", stake=stake, remark=False)
    respond = prompts.render("ultimatum/respond.j2", proposal="p", split=Split(40, 12), stake=stake, remark=True)
    assert "you get 12 apples (23% of the 52) and the proposer gets 40" in respond and "remark" in respond


def test_undefined_variables_are_errors() -> None:
    with pytest.raises(jinja2.UndefinedError):
        prompts.render("ultimatum/propose.j2", stake=Stake(5, "x"))


def test_templates_are_sandboxed() -> None:
    assert isinstance(prompts.environment(), jinja2.sandbox.SandboxedEnvironment)


def test_few_shot_examples_follow_the_norm() -> None:
    turns = example_turns(NORMS.get("selfish"))
    answers = [t.content for t in turns if t.type == "ai"]
    assert answers and all("the responder will get" in a for a in answers)
    assert "the proposer will get 10, and the responder will get 0" in answers[0]


def test_no_prompt_text_in_python() -> None:
    """Long sentences addressed to a model belong in prompts/*.j2."""
    offenders = []
    for path in (ROOT / "agents").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("You "):
                offenders.append(f"{path.name}:{node.lineno}")
    assert not offenders
