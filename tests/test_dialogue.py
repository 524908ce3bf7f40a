"""Dialogue games bound to OpenSpiel: the solver path, the tree's shape, its LLM calls, the metrics, the CLI."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sandbox.cli.runs import app
from sandbox.core.scenario_files import parse_kind
from sandbox.dialogue import StackModels, expand, solve
from sandbox.dialogue.run import build_game, resume_solve, solve_scenario
from sandbox.dialogue.solve import infostates
from sandbox.llm import scripted
from sandbox.llm.cache import ResponseCache
from sandbox.llm.resolve import ModelStack
from tests.dialogue_helpers import ULTIMATUM, chat_game, kuhn_game, kuhn_model, ultimatum_model

runner = CliRunner()


def dialogue_scenario(**changes: Any) -> Any:
    data = json.loads(json.dumps(ULTIMATUM))
    for path, value in changes.items():
        where = data
        *parents, last = path.split("__")
        for key in parents:
            where = where[key]
        where[last] = value
    return parse_kind("dialogue", data, "test.yaml")


def test_kuhn_poker_through_the_binding_has_its_known_value() -> None:
    """Kuhn poker spoken in messages, solved by OpenSpiel's C++ CFR on the cached tree: player 0's value is -1/18."""
    model = kuhn_model()
    tree = asyncio.run(expand(kuhn_game(), StackModels(model)))
    assert tree.counts()["infostates"] == 12
    solution = solve(tree, iterations=1000)
    assert solution.values[0] == pytest.approx(-1 / 18, abs=1e-3)
    assert solution.values[1] == pytest.approx(1 / 18, abs=1e-3)
    assert solution.nash_conv < 0.005
    assert model.calls == tree.calls["messages"] == 18  # 3 cards x 2 instructions x 3 positions in the betting


def test_every_decision_changes_the_game() -> None:
    """No dummy moves: at every decision, two instructions lead to different dialogues or different payoffs."""
    tree = asyncio.run(expand(build_game(dialogue_scenario()), StackModels(ultimatum_model())))

    def reachable(node_id: int) -> set[Any]:
        node = tree.nodes[node_id]
        if node.kind == "terminal":
            return {(tuple(m.text for m in node.dialogue), node.outcome.payoffs)}
        return set().union(*(reachable(c) for c in node.children))

    decisions = [n for n in tree.nodes if n.kind == "decision"]
    assert decisions and any(len(n.dialogue) == 1 for n in decisions)  # the responder decides too
    for node in decisions:
        outcomes = [frozenset(reachable(c)) for c in node.children]
        assert len(set(outcomes)) == len(outcomes), f"a dummy decision at {node.dialogue}"


def test_perfect_recall_when_the_model_ignores_its_instruction() -> None:
    """The same words under different own instructions stay different information states."""
    game = chat_game()
    tree = asyncio.run(expand(game, StackModels(scripted([(r"Say something", "hello")]))))
    by_state: dict[str, set[tuple[str, ...]]] = {}
    for node in tree.nodes:
        if node.kind == "decision":
            key = game.infostate(node.setup, node.dialogue, node.player)
            by_state.setdefault(key, set()).add(tuple(m.instruction for m in node.dialogue if m.speaker == node.player))
    assert all(len(histories) == 1 for histories in by_state.values())
    # player 0 at the start; player 1 after "hello" (it cannot tell player 0's instruction); player 0 again, once
    # per instruction it gave itself (OpenSpiel's chat games merge these three, as the words are the same)
    assert len(by_state) == 1 + 1 + 3


def test_a_second_expansion_makes_no_backend_calls(tmp_path: Path) -> None:
    game = build_game(dialogue_scenario())
    model = ultimatum_model()
    first = ModelStack(cache=ResponseCache(tmp_path / "cache.sqlite"), sinks=[], concurrency=4)
    tree = asyncio.run(expand(game, StackModels(first.for_role("players", "", {}, given=model))))
    calls = model.calls
    assert calls == tree.calls["messages"] > 0
    again = ModelStack(cache=ResponseCache(tmp_path / "cache.sqlite"), sinks=[], concurrency=4)
    second = asyncio.run(
        expand(build_game(dialogue_scenario()), StackModels(again.for_role("players", "", {}, given=model)))
    )
    assert model.calls == calls
    assert [n.dialogue for n in second.nodes] == [n.dialogue for n in tree.nodes]


def test_a_solve_calls_the_model_once_per_distinct_message_and_classification(tmp_path: Path) -> None:
    model = ultimatum_model()
    path = solve_scenario(dialogue_scenario(), tmp_path / "run", models={"players": model, "judge": model})
    summary = json.loads((path / "summary.json").read_text())
    calls = summary["llm_calls"]
    # 3 proposals x 2 seeds (the scripted words repeat across seeds: 3 distinct proposals, each answered under
    # 3 instructions x 2 seeds), and one classification per distinct non-"any" message text.
    assert calls["messages"] == 3 * 2 + 3 * 3 * 2 == 24
    assert model.calls == calls["distinct"] == sum(summary["backend_calls"].values())
    tree = summary["tree"]
    assert tree["terminal_nodes"] == 3 * 2 * 3 * 2 and tree["infostates"] == 4


def test_cfr_finds_a_dominant_instruction(tmp_path: Path) -> None:
    """A responder that accepts everything makes "greedy" dominant: CFR plays it, gains over "any", NashConv ~ 0."""
    model = ultimatum_model(accept=lambda style, offered: True)
    path = solve_scenario(dialogue_scenario(), tmp_path / "run", models={"players": model, "judge": model})
    policy = pd.read_csv(path / "policy.csv")
    root = policy[(policy.player == 0) & (policy.depth == 0)].set_index("instruction")["probability"]
    assert root["greedy"] > 0.99
    summary = json.loads((path / "summary.json").read_text())
    assert summary["any_vs_any"] == [5.0, 5.0]
    assert summary["solver_vs_any"][0] == pytest.approx(9.0, abs=0.05)
    assert summary["cfr_gain"][0] == pytest.approx(4.0, abs=0.05)
    assert summary["nash_conv"] < 0.05
    assert summary["steering_rate"] == 1.0
    for name in ("dialogues.csv", "steering.csv", "policy.png", "payoffs.png", "transcripts.jsonl"):
        assert (path / name).is_file(), name


def test_expansion_generates_a_level_concurrently() -> None:
    """Every message of a depth is in flight together (the speed itself is measured by `sandbox bench dialogue`)."""
    in_flight = peak = 0
    model = ultimatum_model(latency_s=0.02)
    inner = model.answer

    def counting(messages: Any, kwargs: Any) -> Any:
        return inner(messages, kwargs)

    class Watch(StackModels):
        async def speak(self, prompt: Any, seed: int, *, speaker: str) -> str:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            try:
                return await super().speak(prompt, seed, speaker=speaker)
            finally:
                in_flight -= 1

    asyncio.run(expand(build_game(dialogue_scenario()), Watch(model)))
    assert peak == 3 * 3 * 2  # the widest level: 3 distinct proposals x 3 responder instructions x 2 seeds


def test_the_responder_is_read_by_its_leading_yes_or_no() -> None:
    """A remark that says "accepting" after a no does not turn the answer into an acceptance."""
    from sandbox.rules.dialogue import Message

    game = build_game(dialogue_scenario())
    proposal = Message(0, "greedy", "For the 10 dollars, the proposer will get 9, and the responder will get 1.")
    no = game.domain.payoffs(game.setups[0], (proposal, Message(1, "tough", "no. Accepting this would be foolish.")))
    yes = game.domain.payoffs(game.setups[0], (proposal, Message(1, "lenient", "yes. I refuse to haggle.")))
    assert no.payoffs == (0.0, 0.0) and yes.payoffs == (9.0, 1.0)


def test_an_illegal_proposal_is_a_recorded_terminal(tmp_path: Path) -> None:
    model = scripted(
        [(r"Propose your split", "I want it all, give me everything."), (r"Which one does the message", "greedy")]
    )
    path = solve_scenario(dialogue_scenario(), tmp_path / "run", models={"players": model, "judge": model})
    dialogues = pd.read_csv(path / "dialogues.csv")
    assert len(dialogues) == 3 * 2 and dialogues["illegal"].str.startswith("proposal:").all()
    assert (dialogues[["payoff_0", "payoff_1"]] == 0).all().all()


def test_a_killed_solve_resumes_to_the_same_result(tmp_path: Path) -> None:
    model = ultimatum_model()
    whole = solve_scenario(dialogue_scenario(), tmp_path / "whole", models={"players": model, "judge": model})

    class Dies(Exception):
        pass

    dying = ultimatum_model()
    inner = dying.answer
    count = 0

    def answer(messages: Any, kwargs: Any) -> Any:
        nonlocal count
        count += 1
        if count > 8:
            raise Dies("killed")
        return inner(messages, kwargs)

    object.__setattr__(dying, "answer", answer)
    with pytest.raises(Dies):
        solve_scenario(dialogue_scenario(), tmp_path / "cut", models={"players": dying, "judge": dying})
    fresh = ultimatum_model()
    resume_solve(tmp_path / "cut", models={"players": fresh, "judge": fresh})
    assert fresh.calls < model.calls  # the answers before the kill came from the cache
    for name in ("policy.csv", "dialogues.csv", "steering.csv"):
        assert (tmp_path / "cut" / name).read_text() == (whole / name).read_text(), name
    cut, full = (json.loads((p / "summary.json").read_text()) for p in (tmp_path / "cut", whole))
    for key in ("tree", "llm_calls", "nash_conv", "values", "cfr_gain", "steering_rate"):
        assert cut[key] == full[key], key


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (
            {"dialogue": {**ULTIMATUM["dialogue"], "instructions": [["generous", "greedy"], ["tough", "any"]]}},
            "dialogue.instructions",
        ),
        (
            {
                "dialogue": {
                    **ULTIMATUM["dialogue"],
                    "players": ["A", "B", "C"],
                    "instructions": [["any"], ["any"], ["any"]],
                }
            },
            "players",
        ),
        ({"dialogue": {**ULTIMATUM["dialogue"], "seeds_per_message": 16, "scenarios": 100}}, "max_tree_messages"),
        ({"dialogue": {**ULTIMATUM["dialogue"], "tone": "calm"}}, "dialogue.tone"),
        ({"dialogue": {**ULTIMATUM["dialogue"], "domain": {"kind": "chess"}}}, "dialogue.domain"),
        ({"solver": {"algorithm": "mccfr"}}, "solver.algorithm"),
        (
            {
                "dialogue": {
                    **ULTIMATUM["dialogue"],
                    "domain": {"kind": "meeting", "available": [5, 3]},
                    "instructions": [["Monday", "any"], ["Monday", "any"]],
                }
            },
            "dialogue.domain.available",
        ),
        (
            {
                "dialogue": {
                    **ULTIMATUM["dialogue"],
                    "domain": {"kind": "meeting"},
                    "instructions": [["Funday", "any"], ["Monday", "any"]],
                }
            },
            "dialogue.instructions",
        ),
    ],
)
def test_bad_dialogue_scenarios_exit_2_naming_the_field(tmp_path: Path, change: dict[str, Any], field: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**ULTIMATUM, **change}))
    out = tmp_path / "out"
    result = runner.invoke(app, ["solve", str(bad), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "bad.yaml" in result.output and field in result.output, result.output
    assert not out.exists()


def test_solve_refuses_a_bad_model_override(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(ULTIMATUM))
    for args in (["--model", "user=embedded"], ["--model", "players=nonsense"]):
        result = runner.invoke(app, ["solve", str(good), "--out", str(tmp_path / "out"), *args])
        assert result.exit_code == 2, (args, result.output)
        assert not (tmp_path / "out").exists()


def test_the_policy_table_covers_every_information_state(tmp_path: Path) -> None:
    model = ultimatum_model()
    path = solve_scenario(dialogue_scenario(), tmp_path / "run", models={"players": model, "judge": model})
    policy = pd.read_csv(path / "policy.csv")
    sums = policy.groupby("infostate")["probability"].sum()
    assert (sums.round(6) == 1.0).all()
    game = build_game(dialogue_scenario())
    tree = asyncio.run(expand(game, StackModels(model)))
    assert policy["infostate"].nunique() == len(infostates(tree)) == tree.counts()["infostates"]


@pytest.mark.slow(seconds=104)
def test_the_small_game_solves_on_the_embedded_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The instructed ultimatum game, one seed per message, expanded on the embedded model and solved; guided agents
    play it head to head; the notebook reads the run."""
    from sandbox.core.scenario_files import load_scenario

    scenario = load_scenario(Path(__file__).parent.parent / "scenarios/dialogue/ultimatum_small.yaml", kind="dialogue")
    data = scenario.model_dump(mode="json")
    data["dialogue"]["seeds_per_message"] = 1
    path = solve_scenario(parse_kind("dialogue", data, "small"), tmp_path / "run")
    summary = json.loads((path / "summary.json").read_text())
    assert summary["tree"]["terminal_nodes"] == 9 and summary["illegal_terminals"] == 0  # the grammar holds
    calls = summary["llm_calls"]
    proposals = pd.read_csv(path / "dialogues.csv")["message_0"].nunique()
    assert calls["messages"] == 3 + 3 * proposals  # every distinct message generated once, no re-expansion
    assert sum(summary["backend_calls"].values()) == calls["distinct"]
    assert 0.0 <= summary["nash_conv"] < 0.5
    assert summary["steering_rate"] is not None and 0.0 <= summary["steering_rate"] <= 1.0
    assert len(summary["cfr_gain"]) == 2
    from sandbox.dialogue.play import play

    play(path, episodes=2)
    rows = json.loads((path / "summary.json").read_text())["play"]["rows"]
    assert len(rows) == 4 * 2 and all(r["n"] == 2 for r in rows)
    from tests.test_notebooks import execute_notebook

    monkeypatch.setenv("RUN_DIR", str(path))
    outputs = execute_notebook(Path(__file__).parent.parent / "notebooks" / "dialogue_solvers.ipynb")
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)


def test_instruction_following_reads_the_classifier_whatever_its_case() -> None:
    """A classifier that answers "calm" to the instruction "Calm" names it (a capitalised instruction set, as days)."""
    import dataclasses

    from sandbox.dialogue.steering import classify
    from tests.dialogue_helpers import chat_game

    game = dataclasses.replace(chat_game(), instructions=(("Calm", "Angry", "any"), ("calm", "any")))
    tree = asyncio.run(expand(game, StackModels(scripted([(r"Say something", lambda m, k: str(m[-1].content))]))))
    judge = scripted(
        [
            (
                r"Which one does the message follow",
                lambda m, k: "calm" if "Style: Calm" in str(m[-1].content) else "angry",
            )
        ]
    )
    results = asyncio.run(classify(tree, judge))
    assert results and {r.judged for r in results} == {"Calm", "Angry"}
    assert all(r.follows for r in results)


def test_the_llm_judge_can_end_a_dialogue() -> None:
    """termination: judge: the judge is asked after each message; a "yes" ends the dialogue before the limit."""
    import dataclasses

    from tests.dialogue_helpers import chat_game

    game = dataclasses.replace(chat_game(), termination="judge")
    speaker = scripted([(r"Say something", lambda m, k: "farewell" if "angry" in str(m[-1].content) else "hello")])
    judge = scripted(
        [(r"Has this conversation come to an end", lambda m, k: "yes" if "farewell" in str(m[-1].content) else "no")]
    )
    tree = asyncio.run(expand(game, StackModels(speaker, judge)))
    lengths = sorted({len(n.dialogue) for n in tree.terminals()})
    assert lengths[0] == 1  # "angry" says farewell at once and the judge ends it
    assert max(lengths) == 3  # the others run to the message limit
    assert tree.calls["judgments"] > 0


def test_the_registered_game_loads_by_name_and_cfr_plus_solves_it() -> None:
    import pyspiel

    from sandbox.dialogue.spiel import SHORT_NAME, register_tree

    tree = asyncio.run(expand(kuhn_game(), StackModels(kuhn_model())))
    game = pyspiel.load_game(SHORT_NAME, {"tree": register_tree(tree)})
    assert game.num_players() == 2 and game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    solver = pyspiel.CFRPlusSolver(pyspiel.convert_to_cached_tree(game))
    for _ in range(300):
        solver.evaluate_and_update_policy()
    values = pyspiel.expected_returns(game.new_initial_state(), solver.average_policy(), -1, True)
    assert values[0] == pytest.approx(-1 / 18, abs=2e-3)
    assert solve(tree, algorithm="cfr_plus", iterations=300).values[0] == pytest.approx(-1 / 18, abs=2e-3)


def test_first_message_decisions_hold_each_players_instruction() -> None:
    """decisions: first_message: a player's later turns are decisions with one action, its first instruction; the
    tree branches only at first messages, and the game still solves (a player who checked must fold to a bet)."""
    import dataclasses

    from sandbox.dialogue.spiel import DialogueSpielGame

    game = dataclasses.replace(kuhn_game(), decisions="first_message")
    model = kuhn_model()
    tree = asyncio.run(expand(game, StackModels(model)))
    later = [n for n in tree.nodes if n.kind == "decision" and any(m.speaker == n.player for m in n.dialogue)]
    assert later and all(len(n.children) == 1 for n in later)
    for node in later:
        held = next(m.instruction for m in node.dialogue if m.speaker == node.player)
        assert tree.nodes[node.children[0]].instruction == held
    # a third message only after check-bet, under the instruction A held: one per setup, not two
    third = [n for n in tree.terminals() if len(n.dialogue) == 3]
    assert len(third) == 6 and all(n.dialogue[2].text == "I check." for n in third)
    assert {s.instructions for s in infostates(tree) if len(s.instructions) == 1} == {("check or fold",)}
    solution = solve(tree, iterations=500)
    assert solution.nash_conv < 0.01
    spiel = DialogueSpielGame(tree=tree)
    state = spiel.new_initial_state()
    for action in (0, 0, 0, 1, 0):  # setup 0, A checks, seed, B bets, seed
        state.apply_action(action)
    assert state.current_player() == 0 and state.legal_actions() == [0]
    assert state.action_to_string(0, 0) == "check or fold"


def test_first_message_decisions_keep_the_tree_small() -> None:
    from sandbox.dialogue.scenario import estimate_messages

    data = json.loads(json.dumps(ULTIMATUM))
    data["dialogue"]["domain"] = {"kind": "meeting"}
    data["dialogue"]["instructions"] = [["Monday", "Friday", "any"], ["Monday", "Friday", "any"]]
    data["dialogue"].update(max_messages=6, seeds_per_message=1, scenarios=1)
    every = parse_kind("dialogue", data, "test.yaml").dialogue
    data["dialogue"]["decisions"] = "first_message"
    first = parse_kind("dialogue", data, "test.yaml").dialogue
    assert estimate_messages(every) == 3 + 9 + 27 + 81 + 243 + 729
    assert estimate_messages(first) == 3 + 9 + 9 + 9 + 9 + 9
    data["dialogue"].update(max_messages=12, decisions="every_message")
    with pytest.raises(Exception, match="max_tree_messages"):
        parse_kind("dialogue", data, "test.yaml")
    data["dialogue"]["decisions"] = "first_message"
    assert estimate_messages(parse_kind("dialogue", data, "test.yaml").dialogue) == 3 + 9 * 11
