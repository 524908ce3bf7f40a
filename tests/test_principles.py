"""The assistant follows what its principle means: the reading, the stance's band, the guided responder, the bench."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import prompts
from agents.assistant import (
    STANCES,
    PolicyFollowingAssistant,
    read_principle,
    stance_constraint,
)
from sandbox.llm.contracts import CallInfo
from sandbox.llm.scripted import ScriptedReply, scripted
from sandbox.rules.ultimatum import (
    Split,
    Stake,
    decision_constraint,
    proposal_constraint,
    proposal_sentence,
)
from sandbox.scai.principles import Principle, play, principle_set, score, summary
from societies.norms import NORMS

CALL = CallInfo(role="assistant", agent="assistant", step="move")


def forced_statement(kwargs: dict[str, Any]) -> str:
    """The one statement a reading call's grammar forces."""
    return re.search(r'root ::= " (.*)"$', kwargs["constraint"].grammar).group(1)


def likelihood_model(likely: str, first_word: str = "everything") -> Any:
    """A model that scores `likely`'s statement highest but, asked to write, copies `first_word` (a 1.5B model's habit)."""

    def reading(messages: list[Any], kwargs: dict[str, Any]) -> ScriptedReply:
        statement = forced_statement(kwargs)
        logprob = -0.5 if f"I keep {likely} " in statement else -4.0
        return ScriptedReply(
            f"Under this principle, {statement}", token_logprobs=({"token": "x", "logprob": logprob, "top": {}},)
        )

    def propose(messages: list[Any], kwargs: dict[str, Any]) -> str:
        grammar = kwargs["constraint"].grammar
        first = re.search(r'"(\d+), and the responder will get (\d+)\."', grammar)  # the band's first legal split
        return kwargs["constraint"].prefix + f"{first.group(1)}, and the responder will get {first.group(2)}."

    return scripted(
        [
            (r"explain what a principle means", reading),
            (r"You are the proposer", propose),
            (r"You are the responder", "no"),
        ]
    )


def test_the_reading_takes_the_likeliest_statement_not_the_first_word() -> None:
    model = likelihood_model("nothing")
    stance = asyncio.run(read_principle(model, "Always give the other player everything you have.", seed=0, call=CALL))
    assert stance is not None and stance.word == "nothing"
    assert model.calls == len(STANCES)  # one teacher-forced call per statement


def test_without_log_probabilities_the_model_chooses_a_statement_itself() -> None:
    chooser = scripted(
        [(r"explain what a principle means", "Under this principle, I keep half and the other player gets half.")]
    )
    assert asyncio.run(read_principle(chooser, "Split it.", seed=0, call=CALL)).word == "half"
    garbage = scripted([(r"explain what a principle means", "Under this principle, bananas.")])
    assert asyncio.run(read_principle(garbage, "Split it.", seed=0, call=CALL)) is None


@pytest.mark.parametrize("amount", [1, 7, 60, 100])
def test_a_stances_grammar_admits_only_its_band_and_every_split_once(amount: int) -> None:
    stake = Stake(amount, "dollars")
    kept = []
    for stance in STANCES:
        constraint = stance_constraint(stake, stance)
        assert constraint.prefix.startswith(f"Under my principle, {stance.statement} For the {amount} dollars")
        mine = [int(p) for p in re.findall(r'"(\d+), and the responder will get', constraint.grammar)]
        assert all(stance.low <= p / amount <= stance.high for p in mine)
        kept += mine
    assert sorted(kept) == list(range(amount + 1))


def test_the_scored_assistant_proposes_in_the_band_of_its_reading() -> None:
    stake = Stake(60, "apples")
    model = likelihood_model("nothing")
    policy = "Always give the other player everything you have."
    scored = PolicyFollowingAssistant(policy=policy, model=model, reading="scored")
    answer = asyncio.run(scored.propose(stake, seed=1, call=CALL, constraint=proposal_constraint(stake, remark=False)))
    assert answer.startswith("For the 60 apples, the proposer will get ") and "responder will get 60" in answer
    # the lead-in of before asks the model for the keep word itself
    lead_in = PolicyFollowingAssistant(policy=policy, model=model, reading="lead_in")
    messages: list[Any] = []
    model.rules.insert(
        0,
        (
            r"You are the proposer",
            lambda m, k: (
                messages.append(k["constraint"])
                or "For the 60 apples, the proposer will get 60, and the responder will get 0."
            ),
        ),
    )
    asyncio.run(lead_in.propose(stake, seed=1, call=CALL, constraint=proposal_constraint(stake, remark=False)))
    assert messages[-1].prefix == prompts.render("scai/assistant_lead.j2")
    # none: the paper's request, any legal split
    plain = PolicyFollowingAssistant(policy=policy, model=model, reading="none")
    asyncio.run(plain.propose(stake, seed=1, call=CALL, constraint=proposal_constraint(stake, remark=False)))
    assert messages[-1] == proposal_constraint(stake, remark=False)


def test_the_guided_responder_states_the_reading_and_gets_that_norms_decision_examples() -> None:
    seen: list[list[Any]] = []
    model = likelihood_model("half")
    model.rules.insert(0, (r"You are the responder", lambda m, k: seen.append(m) or "yes"))
    stake, split = Stake(60, "apples"), Split(54, 6)
    for responder in ("paper", "guided"):
        assistant = PolicyFollowingAssistant(
            policy="Treat everyone the same.", model=model, rules=True, responder=responder
        )
        asyncio.run(
            assistant.respond(
                stake,
                proposal_sentence(stake, split),
                split,
                seed=1,
                call=CALL,
                constraint=decision_constraint(remark=False),
            )
        )
    paper, guided = seen
    assert len(paper) == 2 and "What your principle means" not in paper[0].content
    assert "What your principle means for a split: I keep half and the other player gets half." in guided[0].content
    fair = [m.content for m in guided[1:-1]]
    assert fair and fair[1::2] == ["yes" if accept else "no" for _, accept in NORMS.get("fair").example_decisions]


def test_the_rules_and_the_principle_are_separate_lines() -> None:
    system = prompts.render("scai/assistant_system.j2", policy="P", rules=True, prior=None, learned_on=None)
    assert "no one receives anything.\nYour principle: P" in system


def test_the_bench_scores_each_text_against_its_target_and_rule() -> None:
    texts = [
        Principle("gives", "Put others first and give them nearly all.", 0.9, "all", "test"),
        Principle("fair", "Share everything equally with everyone.", 0.5, "fair", "test"),
        Principle("keeps", "Look after yourself and keep nearly all.", 0.1, "some", "test"),
    ]
    from tests.conftest import scai_models

    model = scai_models()["assistant"]  # offers by keyword and answers yes to everything
    rows = []
    for p in texts:
        rows += asyncio.run(play(model, p, reading="scored", responder="paper"))
    table = score(pd.DataFrame(rows), texts)
    assert table["offered"].round(2).tolist() == [0.9, 0.5, 0.1]
    assert table["offered ok"].all()
    # yes to 10% and 30% breaks the fair rule; yes to nothing breaks the selfish rule (something above nothing)
    assert table.set_index("principle")["answers ok"].to_dict() == {"gives": True, "fair": False, "keeps": False}
    assert table.set_index("principle")["accepts"].to_dict()["keeps"] == "yyyyy"
    assert summary(table)[["texts", "offered_ok", "answers_ok"]].values.tolist() == [[3, 3, 1]]


def test_the_benchmark_set_holds_the_issues_paraphrases_and_held_out_texts() -> None:
    texts = principle_set()
    assert {"Keep nothing for yourself.", "Take all you can.", "Split evenly whatever the amount."} <= {
        p.text for p in texts
    }
    assert sum(p.group == "held-out" for p in texts) >= 8
    examples = prompts.render("scai/reading_examples.j2")
    assert not any(p.text in examples for p in texts)  # the reading's few-shot examples are none of the test texts


@pytest.mark.parametrize(
    ("likely", "offers", "answers"),
    [
        ("half", (0.1, 0.35, 0.4, 0.9), ["no", "no", "yes", "yes"]),  # the fair norm's rule: 40% or more
        ("everything", (0.0, 0.05, 0.5), ["no", "yes", "yes"]),  # the selfish norm's: anything above nothing
        ("nothing", (0.0, 0.1, 0.9), ["yes", "yes", "yes"]),  # the altruistic norm's: everything
    ],
)
def test_the_rule_responder_applies_the_rule_of_its_reading_without_asking(
    likely: str, offers: tuple[float, ...], answers: list[str]
) -> None:
    model = likelihood_model(likely)
    model.rules.insert(0, (r"You are the responder", lambda m, k: pytest.fail("the rule responder asks no decision")))
    assistant = PolicyFollowingAssistant(policy="Some principle.", model=model, rules=True, responder="rule")
    stake = Stake(20, "apples")
    got = []
    for offer in offers:
        split = Split(20 - round(offer * 20), round(offer * 20))
        got.append(
            asyncio.run(
                assistant.respond(
                    stake,
                    proposal_sentence(stake, split),
                    split,
                    seed=1,
                    call=CALL,
                    constraint=decision_constraint(remark=False),
                )
            )
        )
    assert got == answers
    assert model.calls == len(STANCES) * len(offers)  # the reading's calls only (with no cache here, one per decision)


def test_the_rule_responder_without_a_reading_decides_as_the_paper() -> None:
    model = scripted(
        [(r"explain what a principle means", "Under this principle, bananas."), (r"You are the responder", "no")]
    )
    assistant = PolicyFollowingAssistant(policy="Split it.", model=model, responder="rule")
    stake, split = Stake(10, "apples"), Split(1, 9)
    assert (
        asyncio.run(
            assistant.respond(
                stake,
                proposal_sentence(stake, split),
                split,
                seed=1,
                call=CALL,
                constraint=decision_constraint(remark=False),
            )
        )
        == "no"
    )


def test_the_norms_rules_are_their_decision_hints() -> None:
    from sandbox.distill.truth import accepts

    rules = {
        name: [NORMS.get(name).accepts(s) for s in (0.0, 0.1, 0.39, 0.4, 1.0)]
        for name in ("selfish", "fair", "altruistic")
    }
    assert rules == {
        "selfish": [False, True, True, True, True],
        "fair": [False, False, False, True, True],
        "altruistic": [True] * 5,
    }
    assert [accepts("fair", s) for s in (0.39, 0.4)] == [
        False,
        True,
    ]  # the distillation's ground truth is the same rule
    assert [p.accepts(0.3) for p in principle_set()[:3]] == [True, False, True]


def test_a_society_with_the_rule_responder_decides_by_the_policys_reading(tmp_path: Path) -> None:
    """Selfish users offer little: an assistant whose policy reads as half rejects what its rule rejects, and the
    scripted assistant's own decision (always yes) is never asked."""
    from sandbox import run
    from tests.conftest import scai_models, scai_scenario

    assistant = {
        "initial_policy": "Share everything equally with everyone.",
        "reading": "scored",
        "responder": "rule",
        "interactions": {"user_user": 2, "assistant_proposer": 1, "assistant_responder": 3},
    }
    scenario = scai_scenario(runs=1, epochs=1, assistant=assistant)
    models = scai_models()
    models["assistant"].rules.insert(0, (r"You are the responder", lambda m, k: pytest.fail("rule asks no decision")))
    episodes = run(scenario, out=tmp_path / "r", models=models).episodes
    mine = episodes[episodes["responder"] == "assistant"]
    assert len(mine) == 3
    assert ((mine["offered_share"] >= 0.4) == (mine["decision"] == "accept")).all()
    assert (mine["decision"] == "reject").any()  # the selfish users' offers fall under 40%
