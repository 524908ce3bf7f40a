"""Labelled sets of real dialogues: written by `sandbox agreement`, read by `sandbox reward-model --labelled`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from sandbox.base.seeding import Branch, generator
from sandbox.cli.runs import app
from sandbox.core.scenario_files import load_scenario
from sandbox.dialogue.agreement import PREFIXES, measure_agreement
from sandbox.dialogue.labelled import load_labelled, write_labelled
from sandbox.dialogue.reward_error import CASES, READING, TABLE, labelled_cases, measure_reward_model
from sandbox.llm import scripted
from tests.test_dialogue_agreement import MEETING, models

ROOT = Path(__file__).parent.parent


def _labelled_set(tmp_path: Path) -> Path:
    """An agreement run's prefixes, labelled by the scripted players' rule: Friday is agreed from the second
    message on ("Yes, Friday works for me"), nothing after the first ("Could we meet on Friday?")."""
    scenario = load_scenario(MEETING, kind="dialogue")
    run = measure_agreement(
        scenario, tmp_path / "agreement", lengths=(1, 2, 3), dialogues=4, modes=("outcome",), models=models()
    )
    items = load_labelled(run / PREFIXES, domain="meeting")
    assert len(items) == 12 and all(item.agreed is None for item in items)
    assert [item.length for item in items[:3]] == [1, 2, 3] and [len(i.messages) for i in items[:3]] == [1, 2, 3]
    _, setups = scenario.dialogue.domain.build(
        scenario.dialogue.players, 4, generator(scenario.seed, Branch.DIALOGUE, 10)
    )
    assert [items[3 * i].game_setup() for i in range(4)] == list(setups)  # the setups round-trip
    for item in items:
        item.agreed = "Friday" if "works for me" in " ".join(m.text for m in item.messages) else None
    path = tmp_path / "labelled.jsonl"
    write_labelled(items, path)
    return path


def credulous(messages: list[Any], kwargs: dict[str, Any]) -> str:
    """Says yes to any day the dialogue names: reads a proposal as an agreement."""
    return "yes" if re.search(r"agree to meet on (\w+)\? Answer yes or no", str(messages[-1].content)) else "3"


def test_a_judge_is_measured_against_the_labels_of_real_dialogues(tmp_path: Path) -> None:
    labelled = _labelled_set(tmp_path)
    scenario = load_scenario(MEETING, kind="dialogue")
    exact = measure_reward_model(
        scenario, tmp_path / "exact", modes=("outcome",), labelled=labelled, judge=models()["judge"]
    )
    reading = pd.read_csv(exact / READING).iloc[0]
    assert (reading["n"], reading["agreements"], reading["read"], reading["read_right"]) == (12, 8, 8, 8)
    assert reading["precision"] == reading["recall"] == reading["accuracy"] == 1.0
    table = pd.read_csv(exact / TABLE)
    assert (table["norm"] == 0).all() and set(table["outcome"]) == {"agreed", "none", "all"}
    assert (exact / "labelled.jsonl").read_text() == labelled.read_text()

    # the players' own selection beside the judge: Alice always says Friday, Bob only once it works for him
    def select(messages: list[Any], kwargs: dict[str, Any]) -> str:
        text = "\n".join(str(m.content) for m in messages)
        return "Friday" if "works for me" in text or "You are Alice" in text else "none"

    both = measure_reward_model(
        scenario,
        tmp_path / "both",
        modes=("outcome", "selection"),
        labelled=labelled,
        judge=scripted([(r"both agree to meet", select), (r".", models()["judge"].rules[0][1])]),
    )
    reading = pd.read_csv(both / READING).set_index("mode")
    assert list(reading.index) == ["outcome", "selection"]
    assert (reading["read_right"] == 8).all() and (reading["accuracy"] == 1.0).all()

    loose = measure_reward_model(
        scenario, tmp_path / "loose", modes=("outcome",), labelled=labelled, judge=scripted([(r".", credulous)])
    )
    reading = pd.read_csv(loose / READING).iloc[0]
    # every one-message prefix (a proposal) is read as agreed: 12 read, 8 of them right
    assert (reading["read"], reading["read_right"]) == (12, 8)
    assert reading["precision"] == pytest.approx(8 / 12) and reading["recall"] == 1.0
    assert reading["accuracy"] == pytest.approx(8 / 12)
    cases = pd.read_csv(loose / CASES, keep_default_na=False)
    assert set(cases[cases["outcome"] == "none"]["read"]) == {"Friday"}

    # a judge backwards: yes to the proposal, no once it is accepted: it reads the 4 one-email prefixes as agreed
    # (all wrong) and misses all 8 agreements
    def backwards(messages: list[Any], kwargs: dict[str, Any]) -> str:
        text = str(messages[-1].content)
        if re.search(r"agree to meet on (\w+)\? Answer yes or no", text) is None:
            return "3"
        return "no" if "works for me" in text else "yes"

    wrong = measure_reward_model(
        scenario, tmp_path / "wrong", modes=("outcome",), labelled=labelled, judge=scripted([(r".", backwards)])
    )
    reading = pd.read_csv(wrong / READING).iloc[0]
    assert (reading["read"], reading["read_right"], reading["recall"]) == (4, 0, 0.0)
    assert reading["precision"] == 0.0 and reading["accuracy"] == 0.0

    # resumed from `running`, a labelled measurement reads its own copy of the set, not templates
    (labelled).write_text("")
    status = json.loads((loose / "run.json").read_text())
    (loose / "run.json").write_text(json.dumps({**status, "status": "running"}))
    result = CliRunner().invoke(app, ["resume", str(loose)])
    assert result.exit_code == 0, result.output
    assert "labelled dialogues" in result.output and "precision 67%" in result.output


def test_the_reading_table_counts_only_exact_readings() -> None:
    """A reading of another day than the labelled one is neither right nor accurate; a trade is compared by its
    terms; with no agreement read or labelled, precision and recall are undefined (NaN), not 0 or 1."""
    from sandbox.dialogue.reward_error import reading_table

    def frame(pairs: list[tuple[str, str]]) -> pd.DataFrame:
        return pd.DataFrame(
            [{"mode": "outcome", "player": p, "agreed": label, "read": read} for label, read in pairs for p in (0, 1)]
        )

    row = reading_table(
        frame([("Friday", "Monday"), ("Friday", "friday."), ("", "Tuesday"), ("Sunday", ""), ("", "")])
    ).iloc[0]
    assert (row["n"], row["agreements"], row["read"], row["read_right"]) == (5, 3, 3, 1)
    assert row["precision"] == pytest.approx(1 / 3) and row["recall"] == pytest.approx(1 / 3)
    assert row["accuracy"] == pytest.approx(2 / 5)
    trade = "Alice gives 1 apple and gets 2 kiwi"
    row = reading_table(
        frame([(trade, f"They agreed: {trade}."), (trade, "Alice gives 2 apple and gets 1 kiwi")])
    ).iloc[0]
    assert (row["read_right"], row["accuracy"]) == (1, 0.5)
    row = reading_table(frame([("", ""), ("", "")])).iloc[0]
    assert row["accuracy"] == 1.0 and np.isnan(row["precision"]) and np.isnan(row["recall"])


def test_a_bad_labelled_set_is_exit_2_naming_the_file_line_and_field(tmp_path: Path) -> None:
    labelled = _labelled_set(tmp_path)
    lines = labelled.read_text().splitlines()
    broken = tmp_path / "broken.jsonl"
    cases = {
        "not json": (["{"], "line 1: not JSON"),
        "unknown day": ([lines[0], lines[1].replace('"agreed": "Friday"', '"agreed": "Funday"')], "line 2: agreed"),
        "no messages": ([re.sub(r'"messages": \[.*?\]', '"messages": []', lines[0])], "line 1: messages"),
        "other domain": ([lines[0].replace('"domain": "meeting"', '"domain": "fruit"')], "line 1: domain"),
        "unknown day after a blank line": (
            ["", lines[1].replace('"agreed": "Friday"', '"agreed": "Funday"')],
            "line 2: agreed",
        ),
        "none for null": ([lines[1].replace('"agreed": "Friday"', '"agreed": "none"')], "write null"),
        "length": ([lines[1].replace('"length": 2', '"length": 3')], "length 3, but 2 messages"),
        "empty": ([""], "holds no dialogue"),
    }
    for name, (content, message) in cases.items():
        broken.write_text("\n".join(content) + "\n")
        out = tmp_path / f"out-{name.replace(' ', '-')}"
        result = CliRunner().invoke(
            app, ["reward-model", str(MEETING), "--labelled", str(broken), "--out", str(out), "--mode", "outcome"]
        )
        assert result.exit_code == 2, (name, result.output)
        text = " ".join(result.output.split())
        assert "broken.jsonl" in text and message in text, (name, result.output)
        assert not out.exists(), name


@pytest.mark.parametrize(("domain", "name"), [("meeting", "meeting"), ("fruit", "fruit"), ("meeting", "meeting_games")])
def test_the_shipped_labelled_sets_are_readable_and_hold_agreements_and_none(domain: str, name: str) -> None:
    path = ROOT / f"scenarios/dialogue/labelled/{name}.jsonl"
    scenario = load_scenario(ROOT / f"scenarios/dialogue/{domain}.yaml", kind="dialogue")
    _, _, cases = labelled_cases(scenario, path)
    kinds = {c.outcome for c in cases}
    assert kinds == {"agreed", "none"}
    # every item keeps both labellers' readings; the label is the one they agreed on, or the adjudicated one
    for item in load_labelled(path):
        assert set(item.labels) >= {"A", "B"} and item.length == len(item.messages)


def test_agreement_answered_asks_only_about_the_day_a_reply_names_without_copying() -> None:
    """`agreement: answered` asks about the day of the latest reply naming one day that does not copy the
    message before it, and only if no later message names another day; `named` asks about every day named."""
    from sandbox.dialogue.domains import MeetingConfig
    from sandbox.dialogue.domains.meeting import answered_day
    from sandbox.rules.dialogue import ANY, Message

    def talk(*texts: str) -> tuple[Message, ...]:
        return tuple(Message(i % 2, ANY, text) for i, text in enumerate(texts))

    listing = "Hi Bob, I can meet on Monday, Wednesday or Friday next week. Which day suits you? Best, Alice"
    assert answered_day(talk("Could we meet on Friday?", "Yes, Friday works for me.")) == "Friday"
    assert answered_day(talk("Could we meet on Friday?")) is None  # a proposal is not answered
    assert answered_day(talk(listing, listing.replace("Bob", "Alice").replace("Alice", "Bob", 1))) is None  # a copy
    assert answered_day(talk(listing, "Monday or Friday would both be fine.")) is None  # two days
    # an answer, then copies of it: still the answered day
    answer = "Thank you. Wednesday is the best day for us; I will let you know of any change. Bob"
    assert answered_day(talk(listing, answer, answer.replace("Bob", "Alice"), answer)) == "Wednesday"
    # a later message naming other days reopens the choice; a later one-day reply is the new candidate (the judge
    # is then asked whether it was agreed)
    assert answered_day(talk(listing, answer, "Or could we do Monday or Friday?")) is None
    assert answered_day(talk(listing, answer, "Actually, could we do Friday instead?")) == "Friday"
    _, setups = MeetingConfig().build(("Alice", "Bob"), 1, generator(0, Branch.DIALOGUE, 1))
    dialogue = talk(listing, answer)
    named = MeetingConfig().build(("Alice", "Bob"), 1, generator(0, Branch.DIALOGUE, 1))[0]
    answered = MeetingConfig(agreement="answered").build(("Alice", "Bob"), 1, generator(0, Branch.DIALOGUE, 1))[0]
    assert [c.candidate for c in named.outcome_checks(setups[0], dialogue)] == ["Wednesday", "Friday", "Monday"]
    assert [c.candidate for c in answered.outcome_checks(setups[0], dialogue)] == ["Wednesday"]
    assert answered.outcome_checks(setups[0], talk(listing, listing)) == ()
