"""PSRO with LLM-proposed instructions, its meta-solvers, and the LLM reward model of the paper's domains."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sandbox.core.scenario_files import parse_kind
from sandbox.dialogue import StackModels, expand
from sandbox.dialogue.domains import FruitConfig, MeetingConfig
from sandbox.dialogue.domains.meeting import DAYS
from sandbox.dialogue.meta_games import meta_payoffs, nash_bargaining, prd
from sandbox.dialogue.reward import RewardModel
from sandbox.dialogue.run import build_game, solve_scenario
from sandbox.llm import scripted
from sandbox.rules.dialogue import Message
from tests.dialogue_helpers import ULTIMATUM, ultimatum_model


def test_prd_on_rock_paper_scissors_with_a_dominated_action() -> None:
    rps = np.array([[0, -1, 1, 1], [1, 0, -1, 1], [-1, 1, 0, 1], [-1, -1, -1, 0]], dtype=float)
    strategies = prd(np.stack([rps, -rps]), iterations=20_000)  # [p][row action, column action]
    for strategy in strategies:
        assert strategy[:3] == pytest.approx([1 / 3] * 3, abs=0.02)
        assert strategy[3] < 0.03


def test_nash_bargaining_splits_a_battle_of_the_sexes() -> None:
    payoffs = np.stack([np.array([[3.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 0.0], [0.0, 3.0]])])
    marginals, joint = nash_bargaining(payoffs)
    assert joint[0, 0] == pytest.approx(0.5, abs=0.01) and joint[1, 1] == pytest.approx(0.5, abs=0.01)
    assert joint[0, 1] + joint[1, 0] < 0.01
    assert marginals[0] == pytest.approx([0.5, 0.5], abs=0.01)


@pytest.mark.parametrize("scale", [1.0, 10.0, 90.0])
def test_nash_bargaining_finds_the_asymmetric_solution_at_any_scale(scale: float) -> None:
    """Two coordinated outcomes worth (4, 1) and (1, 2), disagreement (0, 0): the solution maximises
    log(1 + 3p) + log(2 - p), so p = 5/6 on the first, whatever the payoffs' unit."""
    payoffs = scale * np.stack([np.array([[4.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 0.0], [0.0, 2.0]])])
    _, joint = nash_bargaining(payoffs, disagreement=np.zeros(2))
    assert joint[0, 0] == pytest.approx(5 / 6, abs=1e-3) and joint[1, 1] == pytest.approx(1 / 6, abs=1e-3)


def test_the_meta_game_is_exact_on_the_tree() -> None:
    scenario = parse_kind("dialogue", ULTIMATUM, "test")
    tree = asyncio.run(expand(build_game(scenario), StackModels(ultimatum_model())))
    payoffs = meta_payoffs(tree)
    assert payoffs.shape == (2, 3, 3)
    # greedy (9 of 10) against a tough responder (who rejects less than 5): nothing; against lenient: 9 and 1
    assert payoffs[:, 1, 0].tolist() == [0.0, 0.0] and payoffs[:, 1, 1].tolist() == [9.0, 1.0]


def _router(words: list[str], proposals: dict[str, int], accept: Any = None) -> Any:
    player = ultimatum_model(proposals=proposals, accept=accept)
    queue = iter(words)

    def route(messages: list[Any], kwargs: dict[str, Any]) -> Any:
        if "Propose one" in str(messages[-1].content):
            return next(queue, "spare")
        return player.answer(messages, kwargs)

    return scripted([(r".", route)])


def test_psro_adds_a_dominating_candidate_and_refuses_duplicates(tmp_path: Path) -> None:
    """The responder accepts anything: a proposer instruction that keeps more dominates; "greedy" (already in the
    set) is refused as a duplicate, "ruthless" (keeps 10) beats "fair" and joins, and the meta-strategy takes it."""
    data = json.loads(json.dumps(ULTIMATUM))
    data["dialogue"]["seeds_per_message"] = 1
    data["psro"] = {"iterations": 1, "candidates": 2}
    model = _router(
        ["greedy", "Sure, here is one: bold", "ruthless", "fair", "calm", "mild"],
        {"generous": 4, "greedy": 9, "any": 5, "ruthless": 10, "fair": 5},
        accept=lambda s, o: True,
    )
    path = solve_scenario(
        parse_kind("dialogue", data, "test"), tmp_path / "run", models={"players": model, "judge": model}
    )
    candidates = pd.read_csv(path / "psro_candidates.csv")
    mine = candidates[(candidates.iteration == 0) & (candidates.player == 0)].set_index("candidate")
    assert mine.loc["greedy", "status"] == "duplicate"
    assert (candidates["status"] == "illegal").sum() == 1  # not one word: refused and asked again
    assert mine.loc["ruthless", "status"] == "added" and mine.loc["fair", "status"] == "scored"
    assert mine.loc["ruthless", "score"] == pytest.approx(10.0) and mine.loc["fair", "score"] == pytest.approx(5.0)
    summary = json.loads((path / "summary.json").read_text())
    assert summary["psro"]["instructions"][0] == ["generous", "greedy", "any", "ruthless"]
    assert summary["psro"]["final"]["0"]["ruthless"] > 0.9
    meta = pd.read_csv(path / "psro.csv")
    assert set(meta.iteration) == {0, 1} and (path / "psro.png").is_file()


def _meeting_setup() -> Any:
    domain, setups = MeetingConfig().build(("Alice", "Bob"), 1, np.random.default_rng(0))
    return domain, setups[0]


def test_the_value_reward_model_reads_numbers_and_records_garbage() -> None:
    domain, setup = _meeting_setup()
    dialogue = (Message(0, "Monday", "Monday?"), Message(1, "any", "Yes, Monday."))
    judge = scripted([(r"What is Alice's payoff", "7"), (r"What is Bob's payoff", "4")])
    outcome = asyncio.run(RewardModel(domain, "value").score(judge, setup, dialogue, seed=1))
    assert outcome.payoffs == (7.0, 4.0) and outcome.illegal is None
    garbage = scripted([(r"What is Alice's payoff", "7"), (r"What is Bob's payoff", "lots")])
    outcome = asyncio.run(RewardModel(domain, "value").score(garbage, setup, dialogue, seed=1))
    assert outcome.payoffs == (7.0, 0.0) and "Bob" in (outcome.illegal or "")


def test_the_outcome_reward_model_computes_payoffs_from_private_values() -> None:
    domain, setup = _meeting_setup()
    values = setup.data["values"]
    common = next(d for d in values[0] if d in values[1]) if set(values[0]) & set(values[1]) else next(iter(values[0]))
    other = next(d for d in DAYS if d != common)
    dialogue = (
        Message(0, "any", f"Shall we meet on {other}?"),
        Message(1, "any", f"No, but {common} works."),
        Message(0, "any", "Fine by me."),
    )
    # asked day by day, the latest named first: a judge saying yes to every day gives the later one
    yes = scripted([(r"agree to meet on", "yes")])
    outcome = asyncio.run(RewardModel(domain, "outcome").score(yes, setup, dialogue, seed=1))
    assert outcome.payoffs == (float(values[0].get(common, 0)), float(values[1].get(common, 0)))
    assert [c.candidate for c in domain.outcome_checks(setup, dialogue)] == [common, other]
    assert (
        RewardModel(domain, "outcome").calls(setup, dialogue) == 2
        and RewardModel(domain, "value").calls(setup, dialogue) == 2
    )
    only_other = scripted([(rf"agree to meet on {other}\?", "yes"), (r"agree to meet on", "no")])
    outcome = asyncio.run(RewardModel(domain, "outcome").score(only_other, setup, dialogue, seed=1))
    assert outcome.payoffs == (float(values[0].get(other, 0)), float(values[1].get(other, 0)))
    no = scripted([(r"agree to meet on", "no")])
    assert asyncio.run(RewardModel(domain, "outcome").score(no, setup, dialogue, seed=1)).payoffs == (0.0, 0.0)
    # no day named: no agreement, and no call (a scripted model with no rule would raise)
    unnamed = (Message(0, "any", "Shall we?"), Message(1, "any", "Sure."))
    assert asyncio.run(RewardModel(domain, "outcome").score(scripted([]), setup, unnamed, seed=1)).payoffs == (0.0, 0.0)
    garbage = scripted([(r"agree to meet on", "perhaps")])
    outcome = asyncio.run(RewardModel(domain, "outcome").score(garbage, setup, dialogue, seed=1))
    assert outcome.payoffs == (0.0, 0.0) and common in (outcome.illegal or "")


def test_a_fruit_trade_nobody_can_pay_for_does_not_happen() -> None:
    domain, setups = FruitConfig().build(("Alice", "Bob"), 1, np.random.default_rng(3))
    setup = setups[0]
    have_a, have_b = setup.data["endowments"]
    value_a, value_b = setup.data["values"]
    give = next(f for f, n in have_a.items() if n > 0)
    get = next((f for f, n in have_b.items() if n > 0), None)
    if get is not None:
        assert domain.payoffs_of(setup, (1, give, 1, get)) == (
            value_a[get] - value_a[give],
            value_b[give] - value_b[get],
        )
    assert domain.payoffs_of(setup, (have_a[give] + 1, give, 1, get or "kiwi")) == (0.0, 0.0)


def test_the_reward_model_error_of_a_perfect_and_a_constant_judge(tmp_path: Path) -> None:
    """Table 8's harness: a judge that reads the agreed day exactly has no error; one that always answers 0 is
    right on rejected and incomplete dialogues and off by the true values on valid ones."""
    import re

    from sandbox.core.scenario_files import load_scenario
    from sandbox.dialogue.reward_error import CASES, TABLE, measure_reward_model

    def read_day(messages: list[Any], kwargs: dict[str, Any]) -> str:
        text = str(messages[-1].content)
        agreed = re.search(r"meet on (\w+)\?.*works for me", text, re.S)
        asked = re.search(r"agree to meet on (\w+)\? Answer yes or no", text)
        return "yes" if agreed and asked and agreed.group(1) == asked.group(1) else "no"

    scenario = load_scenario(Path(__file__).parent.parent / "scenarios/dialogue/meeting.yaml", kind="dialogue")
    perfect = scripted([(r"agree to meet on", read_day)])
    path = measure_reward_model(scenario, tmp_path / "perfect", dialogues=4, modes=("outcome",), judge=perfect)
    table = pd.read_csv(path / TABLE)
    assert (table["norm"] == 0).all() and (table["sgn"] == 0).all() and set(table["n"]) == {8, 24}
    zero = scripted([(r"payoff\?", "0")])
    path = measure_reward_model(scenario, tmp_path / "zero", dialogues=4, modes=("value",), judge=zero)
    table = pd.read_csv(path / TABLE).set_index("outcome")
    cases = pd.read_csv(path / CASES)
    valid = cases[cases.outcome == "valid"]
    assert table.loc["rejected", "norm"] == 0 and table.loc["incomplete", "norm"] == 0
    assert table.loc["valid", "norm"] == pytest.approx(valid["truth"].abs().mean() / 10)
    assert table.loc["valid", "sgn"] == pytest.approx((valid["truth"] != 0).mean())


def test_reward_model_refuses_a_domain_without_templates(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sandbox.cli.runs import app

    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["reward-model", "scenarios/dialogue/debate.yaml", "--out", str(out)])
    assert result.exit_code == 2 and "dialogue.domain.kind" in result.output
    assert not out.exists()


def test_guided_agents_beat_the_baseline_head_to_head(tmp_path: Path) -> None:
    """Against a responder who accepts anything, the solver-guided proposer keeps 9 where "any" keeps 5; the
    payoffs of new dialogues match the solver's prediction, with CIs."""
    from sandbox.dialogue.play import PLAY, play

    model = ultimatum_model(accept=lambda s, o: True)
    path = solve_scenario(
        parse_kind("dialogue", ULTIMATUM, "test"), tmp_path / "run", models={"players": model, "judge": model}
    )
    play(path, episodes=6, models={"players": model, "judge": model})
    summary = json.loads((path / "summary.json").read_text())
    rows = {(r["pairing"], r["player"]): r for r in summary["play"]["rows"]}
    assert rows[("any vs any", 0)]["mean"] == 5.0 and rows[("solver vs any", 0)]["mean"] == 9.0
    assert rows[("solver vs any", 0)]["predicted"] == pytest.approx(9.0, abs=0.05)
    assert rows[("solver vs any", 0)]["n"] == 6
    assert all(0.0 <= r["fallback_rate"] <= 1.0 for r in rows.values())
    frame = pd.read_csv(path / PLAY)
    assert len(frame) == 4 * 6  # four pairings
    # the pairings share each episode's setup and seeds
    assert frame.groupby("episode")["setup"].nunique().max() == 1


def test_a_guided_agent_falls_back_where_the_solver_never_was(tmp_path: Path) -> None:
    """New seeds make new proposals: the responder's states are not in the solved tree, and it is told so."""
    from agents.dialogue import GuidedSpeaker

    policy = pd.DataFrame(
        [
            {"player": 1, "infostate_text": "seen", "depth": 1, "instruction": i, "probability": p}
            for i, p in (("tough", 1.0), ("lenient", 0.0), ("any", 0.0))
        ]
    )
    speaker = GuidedSpeaker.from_policy(policy, 1)
    rng = np.random.default_rng(0)
    assert speaker.choose("seen", 1, ("tough", "lenient", "any"), rng).fallback is False
    choice = speaker.choose("never seen", 1, ("tough", "lenient", "any"), rng)
    assert choice.fallback and choice.instruction == "tough"  # the depth's mean policy


def test_play_refuses_a_directory_that_is_not_a_solve(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sandbox.cli.runs import app

    result = CliRunner().invoke(app, ["play", str(tmp_path)])
    assert result.exit_code == 2 and "run directory" in result.output


@pytest.mark.parametrize(
    ("name", "messages", "terminals"), [("meeting", 5 + 25, 25), ("fruit", 4 + 16, 16), ("debate", 4 + 16, 16)]
)
def test_the_paper_domains_solve_with_the_reward_model(
    tmp_path: Path, name: str, messages: int, terminals: int
) -> None:
    """Each shipped paper domain renders its prompts, asks its reward model once per player of each distinct
    finished dialogue, and solves; the judge's numbers are the payoffs."""
    import re

    from sandbox.core.scenario_files import load_scenario

    def speak(messages_: list[Any], kwargs: dict[str, Any]) -> str:
        # the words depend on the speaker's own instruction (the last one in its prompt)
        said = re.findall(r"(Insist on a meeting for \w+|Use a \w+ tone|Make a \w+ style)", str(messages_[-1].content))
        return f"My message: {said[-1]}."

    def value(messages_: list[Any], kwargs: dict[str, Any]) -> str:
        return "1" if any(w in str(messages_[-1].content) for w in ("Friday", "calm", "logos")) else "0"

    model = scripted(
        [
            (r"Which one does the message follow", "calm"),
            (r"Write your next", speak),
            (r"payoff\?|win this debate", value),
        ]
    )
    scenario = load_scenario(Path(__file__).parent.parent / "scenarios" / "dialogue" / f"{name}.yaml", kind="dialogue")
    path = solve_scenario(scenario, tmp_path / "run", models={"players": model, "judge": model})
    summary = json.loads((path / "summary.json").read_text())
    assert summary["tree"]["terminal_nodes"] == terminals and summary["illegal_terminals"] == 0
    assert summary["llm_calls"]["messages"] == messages
    assert summary["llm_calls"]["rewards"] == terminals  # every dialogue's words differ
    assert summary["llm_calls"]["reward_calls"] == 2 * terminals  # reward: value asks once per player
    dialogues = pd.read_csv(path / "dialogues.csv")
    assert set(dialogues["payoff_0"]) <= {0.0, 1.0} and dialogues["payoff_0"].max() == 1.0


def test_psro_refuses_a_scenario_whose_grown_tree_is_too_large(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sandbox.cli.runs import app

    data = json.loads(json.dumps(ULTIMATUM))
    data["dialogue"]["max_tree_messages"] = 60
    data["psro"] = {"iterations": 3, "candidates": 2}
    bad = tmp_path / "bad.yaml"
    bad.write_text(__import__("yaml").safe_dump(data))
    result = CliRunner().invoke(app, ["solve", str(bad), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "psro.iterations" in result.output and not (tmp_path / "out").exists()


def test_fruit_templates_always_hold_a_possible_trade(tmp_path: Path) -> None:
    """Setups where no trade is possible are skipped; every valid dialogue's truth is a real trade's payoffs."""
    from sandbox.core.scenario_files import load_scenario
    from sandbox.dialogue.reward_error import template_cases

    scenario = load_scenario(Path(__file__).parent.parent / "scenarios/dialogue/fruit.yaml", kind="dialogue")
    for seed in range(40):
        data = scenario.model_dump(mode="json")
        data["seed"] = seed
        _, setups, cases = template_cases(parse_kind("dialogue", data, "x"), 10)
        assert len({c.setup for c in cases}) == 10 and len(cases) == 30
        for case in cases:
            if case.outcome == "valid":
                have_a, have_b = setups[case.setup].data["endowments"]
                assert any(n > 0 for n in have_a.values()) and any(n > 0 for n in have_b.values())


def test_resume_finishes_a_reward_model_measurement_not_a_solve(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sandbox.cli.runs import app
    from sandbox.core.scenario_files import load_scenario
    from sandbox.dialogue.reward_error import is_reward_model_run, measure_reward_model
    from sandbox.dialogue.run import is_solve_run

    scenario = load_scenario(Path(__file__).parent.parent / "scenarios/dialogue/meeting.yaml", kind="dialogue")
    path = measure_reward_model(
        scenario, tmp_path / "rm", dialogues=2, modes=("outcome",), judge=scripted([(r"agree to meet on", "No.")])
    )
    assert is_reward_model_run(path) and not is_solve_run(path)
    cases = pd.read_csv(path / "reward_model.csv", keep_default_na=False)
    assert (cases["illegal"] == "").all()  # "No." is a no, not an unreadable answer
    result = CliRunner().invoke(app, ["resume", str(path)])
    assert result.exit_code == 0 and "Norm" in result.output


def test_imitation_refuses_runs_of_different_instruction_sets(tmp_path: Path) -> None:
    from sandbox.base.errors import UsageError
    from sandbox.dialogue.imitation import imitate

    model = ultimatum_model()
    first = solve_scenario(
        parse_kind("dialogue", ULTIMATUM, "a"), tmp_path / "a", models={"players": model, "judge": model}
    )
    data = json.loads(json.dumps(ULTIMATUM))
    data["dialogue"]["instructions"][0] = ["generous", "any"]
    second = solve_scenario(
        parse_kind("dialogue", data, "b"), tmp_path / "b", models={"players": model, "judge": model}
    )
    with pytest.raises(UsageError, match="different instructions"):
        imitate([first, second], tmp_path / "out", embed=lambda texts: np.zeros((len(texts), 4)))


def test_chat_messages_put_the_dialogue_in_turns() -> None:
    """messages: chat: the domain's text without the dialogue (and a line against echoing) as the system prompt, the
    other player's messages as user turns (named), one's own as assistant turns, ending on the other's turn."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    config = MeetingConfig(messages="chat")
    domain, setups = config.build(("Alice", "Bob"), 1, np.random.default_rng(0))
    setup = setups[0]
    dialogue = (Message(0, "Monday", "Monday?"), Message(1, "any", "No, Friday."), Message(0, "Monday", "Monday!"))
    first = domain.message(setup, 0, "Monday", ())
    assert [type(m) for m in first.messages] == [SystemMessage, HumanMessage]
    assert "Insist on a meeting for Monday" in str(first.messages[0].content)
    bob = domain.message(setup, 1, "Friday", dialogue)
    assert [type(m) for m in bob.messages] == [SystemMessage, HumanMessage, AIMessage, HumanMessage]
    assert [str(m.content) for m in bob.messages[1:]] == [
        "Message from Alice:\nMonday?",
        "No, Friday.",
        "Message from Alice:\nMonday!",
    ]
    assert "do not repeat it" in str(bob.messages[0].content)
    assert "Monday?" not in str(bob.messages[0].content) and "Insist on a meeting for Friday" in str(
        bob.messages[0].content
    )
    alice = domain.message(setup, 0, "Monday", dialogue[:2])
    assert [type(m) for m in alice.messages] == [SystemMessage, HumanMessage, AIMessage, HumanMessage]
    assert str(alice.messages[-1].content) == "Message from Bob:\nNo, Friday."
    text = MeetingConfig().build(("Alice", "Bob"), 1, np.random.default_rng(0))[0].message(setup, 1, "Friday", dialogue)
    assert len(text.messages) == 1 and "Alice: Monday?" in str(text.messages[0].content)  # the paper's: one prompt
