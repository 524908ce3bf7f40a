"""`sandbox agreement`: the agreement rate against dialogue length, on scripted players and judges."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from sandbox.cli.runs import app
from sandbox.core.scenario_files import load_scenario
from sandbox.dialogue.agreement import AGREEMENT, TABLE, is_agreement_run, measure_agreement, resume_agreement
from sandbox.dialogue.domains.meeting import DAYS
from sandbox.llm import scripted

MEETING = Path(__file__).parent.parent / "scenarios/dialogue/meeting.yaml"


def _conversation(messages: list[Any]) -> str:
    text = str(messages[-1].content)
    return text.split("The conversation so far:", 1)[1] if "The conversation so far:" in text else ""


def player(messages: list[Any], kwargs: dict[str, Any]) -> str:
    """Proposes Friday; agrees once Friday was proposed; then confirms."""
    said = _conversation(messages)
    if "works for me" in said:
        return "See you on Friday then."
    return "Yes, Friday works for me." if "Friday" in said else "Could we meet on Friday?"


def judge(messages: list[Any], kwargs: dict[str, Any]) -> str:
    text = str(messages[-1].content)
    asked = re.search(r"agree to meet on (\w+)\? Answer yes or no", text)
    if asked:
        return "yes" if asked.group(1) == "Friday" and "works for me" in text else "no"
    return "3"  # the value judge: every payoff is 3


def models() -> dict[str, Any]:
    return {"players": scripted([(r"scheduling a meeting", player)]), "judge": scripted([(r".", judge)])}


def test_agreement_rises_with_length_and_pays_the_private_values(tmp_path: Path) -> None:
    scenario = load_scenario(MEETING, kind="dialogue")
    path = measure_agreement(scenario, tmp_path / "a", lengths=(3, 1, 2), dialogues=4, models=models())
    assert is_agreement_run(path)
    table = pd.read_csv(path / TABLE).set_index("length")
    assert list(table.index) == [1, 2, 3]
    assert list(table["agreement_rate"]) == [0.0, 1.0, 1.0] and list(table["agreements"]) == [0, 4, 4]
    assert table.loc[1, "ci_high"] < 0.6 and table.loc[2, "ci_low"] > 0.4
    assert (table["value_payoff_0"] == 3).all() and (table["value_payoff_1"] == 3).all()
    rows = pd.read_csv(path / AGREEMENT, keep_default_na=False)
    agreed = rows[(rows["mode"] == "outcome") & (rows["length"] == 2)]
    assert set(agreed["agreed"]) == {"Friday"}
    # the outcome mode's payoffs are the players' own values of Friday (0 where a player cannot meet then)
    from sandbox.base.seeding import Branch, generator
    from sandbox.dialogue.domains import MeetingConfig

    _, setups = MeetingConfig(**scenario.dialogue.domain.model_dump()).build(
        scenario.dialogue.players, 4, generator(scenario.seed, Branch.DIALOGUE, 10)
    )
    for _, row in agreed.iterrows():
        values = setups[row["dialogue"]].data["values"]
        assert (row["payoff_0"], row["payoff_1"]) == (values[0].get("Friday", 0), values[1].get("Friday", 0))
    assert (path / "agreement.png").is_file() and (path / "agreement_dialogues.csv").is_file()
    assert set(DAYS) >= set(agreed["agreed"])


class Interrupt(Exception):
    pass


def test_an_interrupted_measurement_resumes_to_the_same_tables(tmp_path: Path) -> None:
    scenario = load_scenario(MEETING, kind="dialogue")
    whole = measure_agreement(scenario, tmp_path / "whole", lengths=(1, 2), dialogues=3, models=models())
    calls = {"n": 0}

    def failing(messages: list[Any], kwargs: dict[str, Any]) -> str:
        calls["n"] += 1
        if calls["n"] > 4:
            raise Interrupt
        return judge(messages, kwargs)

    with pytest.raises(Interrupt):
        measure_agreement(
            scenario,
            tmp_path / "cut",
            lengths=(1, 2),
            dialogues=3,
            models={"players": models()["players"], "judge": scripted([(r".", failing)])},
        )
    assert not (tmp_path / "cut" / TABLE).exists()
    resume_agreement(tmp_path / "cut", models=models())
    for name in (AGREEMENT, TABLE):
        pd.testing.assert_frame_equal(pd.read_csv(whole / name), pd.read_csv(tmp_path / "cut" / name))


def test_agreement_read_by_the_players_own_selection_beside_the_judge(tmp_path: Path) -> None:
    """`--mode outcome,selection`: each player says what was agreed; once Friday "works for" one of them both say
    Friday, before that Alice says Friday and Bob none, which is no agreement."""

    def select(messages: list[Any], kwargs: dict[str, Any]) -> str:
        text = "\n".join(str(m.content) for m in messages)
        return "Friday" if "works for me" in text or "You are Alice" in text else "none"

    both = {**models(), "players": scripted([(r"both agree to meet", select), (r"scheduling a meeting", player)])}
    scenario = load_scenario(MEETING, kind="dialogue")
    path = measure_agreement(
        scenario, tmp_path / "a", lengths=(1, 2), dialogues=3, modes=("outcome", "selection"), models=both
    )
    table = pd.read_csv(path / TABLE).set_index("length")
    assert list(table["read_by"]) == ["outcome", "outcome"]
    assert list(table["agreements"]) == [0, 3] and list(table["selection_agreements"]) == [0, 3]
    assert list(table["selection_agreement_rate"]) == [0.0, 1.0] and "selection_payoff_0" in table
    result = CliRunner().invoke(app, ["resume", str(path)])
    assert result.exit_code == 0 and "selection" in result.output and "3: 100%" in result.output
    alone = measure_agreement(
        scenario, tmp_path / "alone", lengths=(1, 2), dialogues=2, modes=("selection",), models=both
    )
    assert list(pd.read_csv(alone / TABLE)["read_by"]) == ["selection", "selection"]
    result = CliRunner().invoke(app, ["resume", str(alone)])
    assert result.exit_code == 0 and "selection" in result.output and "2: 100%" in result.output
    value = measure_agreement(scenario, tmp_path / "value", lengths=(1,), dialogues=2, modes=("value",), models=both)
    assert "agreements" not in pd.read_csv(value / TABLE)
    assert CliRunner().invoke(app, ["resume", str(value)]).exit_code == 0
    out = tmp_path / "bad"
    result = CliRunner().invoke(app, ["agreement", str(MEETING), "--mode", "outcome,vote", "--out", str(out)])
    assert result.exit_code == 2 and "--mode" in result.output and not out.exists()


def test_agreement_refuses_a_domain_without_agreements_and_bad_lengths(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "out"
    result = runner.invoke(app, ["agreement", "scenarios/dialogue/debate.yaml", "--out", str(out)])
    assert result.exit_code == 2 and "dialogue.domain.kind" in result.output and not out.exists()
    result = runner.invoke(app, ["agreement", str(MEETING), "--lengths", "2,x", "--out", str(out)])
    assert result.exit_code == 2 and "--lengths" in result.output and not out.exists()
    result = runner.invoke(app, ["agreement", str(MEETING), "--lengths", "0,2", "--out", str(out)])
    assert result.exit_code == 2 and "--lengths" in result.output and not out.exists()


def test_sandbox_resume_prints_a_finished_measurement(tmp_path: Path) -> None:
    scenario = load_scenario(MEETING, kind="dialogue")
    path = measure_agreement(scenario, tmp_path / "a", lengths=(1, 2), dialogues=2, models=models())
    result = CliRunner().invoke(app, ["resume", str(path)])
    assert result.exit_code == 0, result.output
    assert "agreement_by_length.csv" in " ".join(result.output.split()) and "100%" in result.output  # 2 messages
