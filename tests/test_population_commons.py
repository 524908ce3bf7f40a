"""GovSim's fishery among LLM agents with a scripted model: the rules' invariants through the LLM loop (sustainable
fishers survive every month, greedier ones collapse in the month the rules imply), the chat, the agreed limit and
its memory, the switches (talk, universalization, constrained answers), fixed fishers, illegal answers, resume
after a kill, bad input."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sandbox.base.files import read_json
from sandbox.core.scenario_files import parse_kind
from sandbox.llm.scripted import scripted
from sandbox.population.games.commons.rules import CommonsRules, play
from sandbox.population.run import run_population
from tests.test_population_donor import assert_bad_input

GOVSIM = "scenarios/population/govsim_fishery.yaml"


def commons(months: int = 12, members: list[dict] | None = None, **game: Any) -> Any:
    return parse_kind(
        "population",
        {
            "name": "fishery",
            "seed": 3,
            "population": {
                "agents": 5,
                "generations": months,
                "members": members or [{"strategy": "llm", "share": 1.0}],
                "game": {"kind": "commons", **game},
                "revision": {"rule": "memory"},
            },
        },
    )


class Fisher:
    """Asks for `catch` tons (a callable of the stock, or an int); in the chat the first speaker proposes its catch
    and names the next, who agrees and concludes; the limit is read from the proposal. `garbage`: no answer has the
    asked format; `stop_after`: raises after that many calls (a kill)."""

    def __init__(self, catch: Any = 10, garbage: bool = False, stop_after: int | None = None) -> None:
        self.catch, self.garbage, self.stop_after = catch, garbage, stop_after
        self.calls: list[tuple[str, str, Any]] = []  # (system, prompt, constraint)

    def __call__(self, messages: Any, kwargs: Any) -> str:
        system = messages[0].content if len(messages) > 1 else ""
        prompt = messages[-1].content
        self.calls.append((system, prompt, kwargs.get("constraint")))
        if self.stop_after is not None and len(self.calls) > self.stop_after:
            raise KeyboardInterrupt
        if self.garbage:
            return "I would rather not say."
        if "how many tons of fish would you catch" in prompt:
            stock = int(re.findall(r"there are (\d+) tons of fish in the lake", prompt)[-1])
            catch = self.catch(stock) if callable(self.catch) else self.catch
            return f"The lake holds {stock}. Answer: {catch} tons"
        if "What would you say next" in prompt:
            conversation = prompt.split("Conversation so far:")[1].split("Task:")[0]
            if conversation.count("\n-") <= 1:  # only the Mayor spoke
                return (
                    f"Response: Let us each catch {self.catch if isinstance(self.catch, int) else 10} tons.\n"
                    "Conversation conclusion by me: no\nNext speaker: Emma"
                )
            return "Response: Agreed.\nConversation conclusion by me: yes\nNext speaker: John"
        if "Summarize" in prompt:
            return "The fishers agreed to catch a fixed amount each. Then they left."
        if "fishing limit" in prompt:
            proposed = re.search(r"Let us each catch (\d+) tons", prompt)
            return f"Answer: {proposed.group(1)}" if proposed else "Answer: N/A"
        return "I should remember the limit. And more."

    def model(self) -> Any:
        return scripted([(r".", self)])

    def prompts(self, task: str) -> list[str]:
        return [p for _, p, _ in self.calls if task in p]


def test_sustainable_fishers_agree_a_limit_remember_it_and_survive_every_month(tmp_path: Path) -> None:
    fisher = Fisher(10)
    path = run_population(commons(), tmp_path / "run", models={"user": fisher.model()})
    summary = read_json(path / "summary.json")
    assert summary["survival_months"] == 12 and not summary["collapsed"]
    assert summary["gains"] == [120] * 5 and summary["efficiency"] == 1.0 and summary["equality"] == 1.0
    assert summary["over_usage"] == 0.0 and summary["agreed_limits"] == [10] * 12
    talk = pd.read_csv(path / "talk.csv")
    first = talk[talk["generation"] == 0]
    assert first["speaker"].tolist() == ["Mayor", "John", "Emma"]  # the first fisher opens, then the one it names
    assert first["utterance"].iloc[0].count("caught 10 tons of fish") == 5
    harvests = fisher.prompts("how many tons of fish would you catch")
    assert len(harvests) == 60
    limit = "The community agreed on a maximum limit of 10 tons of fish per person."
    assert not any(limit in p for p in harvests[:5]) and all(limit in p for p in harvests[5:])
    assert all("Let's think step-by-step" in p for p in harvests)  # the code's prompt under the default free answer
    notes = pd.read_csv(path / "notes.csv")
    assert set(notes["kind"]) == {"summary", "limit", "planning", "interesting"}


@pytest.mark.parametrize("allocation", ["stochastic", "proportional"])
def test_greedy_fishers_collapse_in_the_month_the_rules_imply(tmp_path: Path, allocation: str) -> None:
    path = run_population(commons(allocation=allocation), tmp_path / "run", models={"user": Fisher(12).model()})
    expected = play(CommonsRules(allocation=allocation), lambda m, i, s: 12, np.random.default_rng(0))
    gens = pd.read_csv(path / "generations.csv")
    assert [m.stock for m in expected.months] == gens["stock"].tolist() == [100, 80, 40]
    summary = read_json(path / "summary.json")
    assert summary["survival_months"] == len(expected.months) == 3 and summary["collapsed"]
    assert gens["talk_steps"].tolist() == [3, 3, 0]  # no chat in the month of the collapse
    assert pd.read_csv(path / "population.csv").query("generation == 2")["caught"].sum() == 40  # the whole stock


def test_unreadable_answers_are_illegal_moves_and_an_unread_conclusion_ends_the_chat(tmp_path: Path) -> None:
    path = run_population(commons(2, retries=2), tmp_path / "run", models={"user": Fisher(garbage=True).model()})
    rows = pd.read_csv(path / "population.csv")
    assert not rows["valid"].any() and rows["attempts"].eq(3).all() and rows["caught"].eq(0).all()
    talk = pd.read_csv(path / "talk.csv").query("speaker != 'Mayor'")
    assert len(talk) == 2 and not talk["ended_read"].any()  # one utterance a month, then the chat ends
    summary = read_json(path / "summary.json")
    assert summary["illegal_rate"] == 1.0 and summary["agreed_limits"] == [None, None]
    assert summary["unread_conclusions"] == 2 and summary["survival_months"] == 2


def test_without_talk_no_report_no_chat_and_the_system_prompt_says_nothing_of_it(tmp_path: Path) -> None:
    fisher = Fisher(10)
    path = run_population(commons(2, talk=False), tmp_path / "run", models={"user": fisher.model()})
    assert len(fisher.calls) == 10  # five harvests a month, nothing else
    assert all("communicate" not in system for system, _, _ in fisher.calls)
    assert pd.read_csv(path / "talk.csv").empty and pd.read_csv(path / "notes.csv").empty


def test_universalization_shows_the_sustainable_catch_of_the_current_stock(tmp_path: Path) -> None:
    fisher = Fisher(lambda stock: 15)
    run_population(commons(2, universalization=True), tmp_path / "on", models={"user": fisher.model()})
    harvests = fisher.prompts("how many tons of fish would you catch")
    assert all("if everyone fishes more than 10 tons" in p for p in harvests[:5])
    assert all("if everyone fishes more than 5 tons" in p for p in harvests[5:])  # 100 - 75 = 25, doubled: 50
    off = Fisher(10)
    run_population(commons(1), tmp_path / "off", models={"user": off.model()})
    assert not any("if everyone fishes more than" in p for _, p, _ in off.calls)


def test_a_fixed_fisher_calls_no_model_never_speaks_and_is_reported(tmp_path: Path) -> None:
    fisher = Fisher(10)
    members = [{"strategy": "llm", "share": 0.8}, {"strategy": "30", "share": 0.2, "fixed": True}]
    path = run_population(commons(2, members=members), tmp_path / "run", models={"user": fisher.model()})
    rows = pd.read_csv(path / "population.csv")
    fixed = rows[rows["fixed"]]
    assert len(fixed) == 2 and fixed["asked"].eq(30).all() and fixed["attempts"].eq(0).all()
    assert len(fisher.prompts("how many tons of fish would you catch")) == 8
    talk = pd.read_csv(path / "talk.csv")
    name = fixed["name"].iloc[0]
    assert name not in set(talk["speaker"]) and f"{name} caught 30 tons of fish." in talk["utterance"].iloc[0]
    # month 1: 4 x 10 + 30 = 70 of 100, so 60 next month, where the sustainable catch is 30 // 5 = 6: 1 + 5 of 10
    assert read_json(path / "summary.json")["over_usage"] == pytest.approx(0.6)


def test_constrained_answers_are_prefilled_and_held_to_their_format(tmp_path: Path) -> None:
    fisher = Fisher(10)
    run_population(commons(1, answer="constrained"), tmp_path / "run", models={"user": fisher.model()})
    by_task = {
        task: [c for _, p, c in fisher.calls if task in p]
        for task in ("how many tons", "What would you say next", "fishing limit")
    }
    assert all(c.prefix == "Answer: " and c.grammar for c in by_task["how many tons"])
    assert all(c.prefix == "Response: " and '"Emma"' in c.grammar for c in by_task["What would you say next"][:1])
    assert all(c.prefix == "Answer: " and "N/A" in c.grammar for c in by_task["fishing limit"])
    assert not any("step-by-step" in p for _, p, _ in fisher.calls)


def test_every_chat_turn_is_kept_when_fishers_speak_again_and_the_cap_counts_the_report(tmp_path: Path) -> None:
    def chatty(messages: Any, kwargs: Any) -> str:
        prompt = messages[-1].content
        if "how many tons of fish would you catch" in prompt:
            return "Answer: 10 tons"
        if "What would you say next" in prompt:  # John and Kate name each other and never conclude
            other = "Kate" if messages[0].content.startswith("You are John") else "John"
            return f"**Response:** We should fish less.\n**Conversation conclusion by me:** no\nNext speaker: {other}"
        return "Answer: N/A" if "fishing limit" in prompt else "Noted."

    calls: list[Any] = []
    model = scripted([(r".", lambda m, k: calls.append(m) or chatty(m, k))])
    path = run_population(commons(1, talk_steps=7, notes=False), tmp_path / "run", models={"user": model})
    talk = pd.read_csv(path / "talk.csv")
    assert talk["speaker"].tolist() == ["Mayor", "John", "Kate", "John", "Kate", "John", "Kate"]
    assert (talk["utterance"].iloc[1:] == "We should fish less.").all()  # no markdown left in what others read
    assert read_json(path / "summary.json")["calls"] == len(calls) == 5 + 6 + 2  # harvests, turns, summary and limit


def test_a_months_events_expire_with_it_and_an_agreed_limit_two_months_later(tmp_path: Path) -> None:
    fisher = Fisher(10)
    limits: list[str] = []

    def once(messages: Any, kwargs: Any) -> str:  # a limit is agreed in the first month only
        if "fishing limit" in messages[-1].content:
            limits.append(messages[-1].content)
            return "Answer: 10" if len(limits) == 1 else "Answer: N/A"
        return fisher(messages, kwargs)

    run_population(commons(5, notes=False), tmp_path / "run", models={"user": scripted([(r".", once)])})
    harvests = fisher.prompts("how many tons of fish would you catch")
    agreed = "The community agreed on a maximum limit of 10 tons"
    assert [sum(agreed in p for p in harvests[5 * m : 5 * m + 5]) for m in range(5)] == [0, 5, 5, 0, 0]
    assert all("caught 10 tons" not in p for p in harvests)  # last month's catch is gone by the next harvest
    assert all(p.count("Before everyone fishes") == 1 for p in harvests)


def test_an_unreadable_harvest_is_asked_again_with_the_format_restated(tmp_path: Path) -> None:
    def late(messages: Any, kwargs: Any) -> str:
        if "how many tons of fish would you catch" in messages[1].content:
            return "Answer: 10 tons" if "had no number of tons" in messages[-1].content else "Ten, I think."
        return "Answer: N/A"

    path = run_population(
        commons(1, talk=False, retries=1), tmp_path / "run", models={"user": scripted([(r".", late)])}
    )
    rows = pd.read_csv(path / "population.csv")
    assert rows["valid"].all() and rows["attempts"].eq(2).all() and rows["caught"].eq(10).all()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"revision": {"rule": "select"}}, "set revision.rule memory"),
        ({"network": {"kind": "ring_lattice", "k": 2}}, "network.kind ring_lattice"),
        (
            {"members": [{"strategy": "llm", "share": 0.8}, {"strategy": "lots", "share": 0.2, "fixed": True}]},
            "members[1].strategy 'lots'",
        ),
        ({"members": [{"strategy": "llm", "share": 0.8}, {"strategy": "30", "share": 0.2}]}, "set fixed: true"),
        ({"agents": 6}, "game.names has 5 names for 6 agents"),
        ({"game": {"kind": "commons", "collapse_below": 100}}, "collapse_below 100 is not below"),
        ({"judge_play": True}, "judge_play: not read by the commons game"),
        (
            {"game": {"kind": "commons", "names": ["John", "Kate", "Mayor", "Emma", "Luke"]}},
            "Mayor cannot name a fisher",
        ),
    ],
)
def test_bad_commons_input_exits_2_naming_the_field(tmp_path: Path, change: dict, field: str) -> None:
    assert_bad_input(tmp_path, GOVSIM, change, field)


def test_a_month_names_the_columns_of_generations_csv_in_their_order() -> None:
    from sandbox.population.games.commons.game import COLUMNS, GENERATIONS, MonthRow

    assert [*MonthRow.__annotations__, "seconds"] == [*COLUMNS[GENERATIONS]]
