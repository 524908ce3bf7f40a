"""DealOrNoDeal for proxy rewards: the environment, the styles' ground truth, the prompt, the negotiator, a run."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sandbox.cli.runs import app
from sandbox.core.scenario_files import load_scenario, parse_kind
from sandbox.llm.scripted import scripted
from sandbox.proxy import negotiation_task
from sandbox.proxy.label_run import label_scenario
from sandbox.proxy.negotiator import Negotiator, style_accuracy, train_negotiator
from sandbox.rewards.objectives import NEGOTIATION_STYLES
from sandbox.rules.negotiation import Context, FixedPartner, Negotiation, Utterance, draw_context, play
from tests.test_notebooks import execute_notebook

runner = CliRunner()
NOTEBOOK = Path(__file__).parent.parent / "notebooks" / "proxy_rewards.ipynb"
CONTEXT = Context((1, 2, 3), (4, 3, 0), (1, 0, 3))


def dialogue(*acts: tuple[str, str, tuple[int, int, int] | None]) -> Negotiation:
    return Negotiation(CONTEXT, [Utterance(s, a, x) for s, a, x in acts])  # type: ignore[arg-type]


def styles(episode: Negotiation) -> set[str]:
    return {name for name in NEGOTIATION_STYLES.names() if NEGOTIATION_STYLES.get(name)(episode)}


def test_contexts_are_drawn_as_in_the_paper() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        c = draw_context(rng)
        assert all(1 <= n <= 4 for n in c.counts)
        assert all(0 <= v <= 10 for v in (*c.alice, *c.bob))
        assert c.worth("Alice", c.counts) == 10 and c.worth("Bob", c.counts) == 10


@pytest.mark.parametrize(
    ("acts", "points", "expected"),
    [
        # propose X, Y, X: a repeat, so stubborn and not versatile (the authors' evaluation called it versatile)
        (
            (
                ("Alice", "propose", (1, 2, 0)),
                ("Bob", "propose", (1, 0, 3)),
                ("Alice", "propose", (1, 1, 0)),
                ("Bob", "propose", (1, 0, 3)),
                ("Alice", "propose", (1, 2, 0)),
                ("Bob", "agree", None),
            ),
            (10, 9),
            {"stubborn", "competitive"},
        ),
        # two different proposals: versatile; Alice ends with a hat and the balls (3 points), Bob with the book (1)
        (
            (
                ("Alice", "propose", (0, 0, 3)),
                ("Bob", "propose", (1, 0, 3)),
                ("Alice", "propose", (0, 1, 3)),
                ("Bob", "agree", None),
            ),
            (3, 1),
            {"versatile", "competitive"},
        ),
        # Alice speaks once: neither versatile nor stubborn; she accepts Bob's split, worse for her
        ((("Bob", "propose", (1, 0, 3)), ("Alice", "agree", None)), (6, 10), {"pushover"}),
        # a disagreement is 0 to 0: neither competitive nor a push-over (ties)
        (
            (
                ("Alice", "propose", (1, 2, 0)),
                ("Bob", "propose", (1, 0, 3)),
                ("Alice", "insist", (1, 2, 0)),
                ("Bob", "disagree", None),
            ),
            (0, 0),
            {"stubborn"},
        ),
    ],
)
def test_styles_on_hand_worked_dialogues(acts: Any, points: tuple[int, int], expected: set[str]) -> None:
    episode = dialogue(*acts)
    assert episode.points() == points
    assert styles(episode) == expected


def test_the_partner_and_the_turn_limit() -> None:
    partner = FixedPartner()
    opening = partner.respond(Negotiation(CONTEXT))
    assert opening.act == "propose" and CONTEXT.worth("Bob", opening.allocation) >= 8  # type: ignore[arg-type]
    # Bob accepts a proposal that leaves him his target (9 >= 8), and refuses one that does not
    assert partner.respond(dialogue(("Alice", "propose", (1, 2, 0)))).act == "agree"
    assert partner.respond(dialogue(("Alice", "propose", (1, 2, 3)))).act in ("propose", "insist")

    def stubborn(episode: Negotiation) -> Utterance:
        return Utterance("Alice", "propose", (1, 2, 3))  # everything, always: Bob never agrees

    episode = play(CONTEXT, stubborn, partner, alice_first=True, turn_limit=6)
    assert len(episode.utterances) == 6 and not episode.agreed and episode.points() == (0, 0)
    # an agree with nothing on the table is a disagreement
    episode = play(CONTEXT, lambda e: Utterance("Alice", "agree"), partner, alice_first=True)
    assert [u.act for u in episode.utterances] == ["disagree"]


def test_the_examples_answers_agree_with_the_ground_truth() -> None:
    for style in NEGOTIATION_STYLES.names():
        examples = negotiation_task.examples_for(style)
        assert len(examples) == 3 and examples[0].answers[style].startswith("Yes")
        for example in examples:
            assert example.answers[style].startswith("Yes") == negotiation_task.truth(style, example.episode)


def test_the_prompt_for_each_intent_form() -> None:
    episode = dialogue(("Bob", "propose", (1, 0, 3)), ("Alice", "agree", None))
    examples = negotiation_task.render_prompt("stubborn", episode, form="examples")
    assert examples.startswith("Alice and Bob are negotiating how to split a set of books, hats, and balls.\n\n====")
    assert examples.count("Is Alice a stubborn negotiator?") == 4 and examples.endswith(
        "Is Alice a stubborn negotiator?"
    )
    assert "Yes, because she repeatedly suggested the same proposal" in examples
    assert "Alice : agree\n" + "-" * 80 + "\nAgreement!\nAlice : 6 points\nBob   : 10 points" in examples
    bare = negotiation_task.render_prompt("stubborn", episode, form="examples", explanations=False)
    assert "because" not in bare and "\nYes\n" in bare
    described = negotiation_task.render_prompt("pushover", episode, form="description", description="Alice gives in.")
    assert "Alice gives in.\n\n====" in described and described.count("=" * 80) == 1
    assert described.endswith("Is Alice a pushover negotiator?")
    none = negotiation_task.render_prompt("pushover", episode, form="none")
    assert none.endswith("Is Alice a good negotiator?") and none.count("=" * 80) == 1


def test_a_negotiator_learns_the_true_style() -> None:
    truth = NEGOTIATION_STYLES.get("stubborn")

    async def reward(episode: Negotiation) -> float:
        return float(truth(episode))

    before = style_accuracy(Negotiator.new(0), "stubborn")
    agent, counts = asyncio.run(train_negotiator(reward, episodes=250, seed=0))
    after = style_accuracy(agent, "stubborn")
    assert after >= before + 0.4 and after >= 0.7, (before, after)
    assert counts == {"dialogues": 250, "skipped": 0}


def test_unparsed_verdicts_are_skipped_not_scored() -> None:
    async def never(episode: Negotiation) -> None:
        return None

    agent, counts = asyncio.run(train_negotiator(never, episodes=20, seed=0))
    assert counts["skipped"] == 20
    untrained = Negotiator.new(0)
    assert all(
        (a == b).all() for a, b in zip(agent.network.state_dict().values(), untrained.network.state_dict().values())
    )


def stubborn_judge(messages: list[Any], kwargs: dict[str, Any]) -> str:
    """Right on the test dialogue's style: a repeated proposal by Alice."""
    last = str(messages[-1].content).split("=" * 80)[-1]
    alice = re.findall(r"Alice : (?:propose|insist): (.*)", last)
    return "Yes" if len(alice) != len(set(alice)) else "No"


def test_a_negotiation_labeling_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = load_scenario("scenarios/proxy/negotiation/stubborn.yaml", kind="proxy")
    data = scenario.model_dump(mode="json", exclude_none=True)
    data["proxy"].update({"test_items": 30, "negotiator_episodes": 200})
    judge = scripted([(r"negotiat", stubborn_judge)])
    path = label_scenario(parse_kind("proxy", data), tmp_path / "run", models={"judge": judge})
    labels = pd.read_csv(path / "labels.csv")
    assert set(labels["condition"]) == {"llm", "no_objective", "supervised"}
    llm = labels[labels["condition"] == "llm"]
    assert len(llm) == 30 and llm["correct"].all() and llm["dialogue"].str.contains("Alice : ").all()
    accuracy = pd.read_csv(path / "accuracy.csv").set_index("condition")
    assert accuracy.loc["llm", "accuracy"] == 1.0 and accuracy.loc["random", "accuracy"] == 0.5
    agents = pd.read_csv(path / "agents.csv").set_index("condition")["agent_accuracy"]
    assert agents["llm"] >= 0.7 and agents["true_reward"] >= 0.7
    summary = json.loads((path / "summary.json").read_text())
    # every distinct dialogue asked once: no more RL calls than dialogues, all through the run's cache
    assert 0 < summary["rl_judge_calls"] <= summary["rl_dialogues"] == 200
    assert summary["judge_calls"] == 60 + summary["rl_judge_calls"]
    assert summary["rl_labeling_accuracy"] == 1.0  # the judge scored on the RL dialogues too, as the paper did
    monkeypatch.setenv("PROXY_RUNS", str(tmp_path))  # the notebook reads negotiation runs too
    outputs = execute_notebook(NOTEBOOK)
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"objective": {"name": "sneaky"}}, "unknown negotiation objective"),
        ({"intent": {"form": "examples", "examples": 5}}, "three example dialogues"),
        ({"intent": {"form": "examples", "examples": 10}}, "three example dialogues"),  # said, so not ignored
        ({"intent": {"form": "description"}}, "intent.description"),
        ({"turn_limit": 1}, "proxy.turn_limit"),
    ],
)
def test_bad_negotiation_blocks_exit_2(tmp_path: Path, change: dict, field: str) -> None:
    block = {"task": "negotiation", "objective": {"name": "stubborn"}, **change}
    file = tmp_path / "bad.yaml"
    file.write_text(yaml.safe_dump({"name": "bad", "proxy": block}))
    result = runner.invoke(app, ["label", str(file), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    assert "bad.yaml" in result.output and field in result.output.replace("\n", " ")
    assert not (tmp_path / "run").exists()


def test_command_line_overrides_keep_a_negotiation_scenario_valid() -> None:
    from sandbox.proxy.scenario import apply_proxy_overrides

    for name in ("stubborn", "pushover_description"):
        scenario = apply_proxy_overrides(
            load_scenario(f"scenarios/proxy/negotiation/{name}.yaml", kind="proxy"), test_items=5
        )
        assert scenario.proxy.test_items == 5 and scenario.proxy.example_count() in (0, 3)
    ultimatum = apply_proxy_overrides(
        load_scenario("scenarios/proxy/ultimatum/share30_description.yaml", kind="proxy"), seed=2
    )
    assert ultimatum.proxy.example_count() == 0
