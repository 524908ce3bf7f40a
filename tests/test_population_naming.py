"""Naming-game populations (Ashery, Aiello & Baronchelli 2025) with a scripted model: convergence after 3 N
successes, committed members who call no model, the memory window, illegal answers, resume after a kill, bad input."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from sandbox.base.files import read_json
from sandbox.cli.runs import app
from sandbox.core.scenario_files import parse_kind
from sandbox.llm.scripted import scripted
from sandbox.population.run import resume_population, run_population

runner = CliRunner()


def naming(agents: int = 6, generations: int = 20, members: list[dict] | None = None, **game: Any) -> Any:
    return parse_kind(
        "population",
        {
            "name": "naming",
            "seed": 2,
            "population": {
                "agents": agents,
                "generations": generations,
                "members": members or [{"strategy": "llm", "share": 1.0}],
                "game": {"kind": "naming", "words": ["Q", "M", "X"], **game},
                "revision": {"rule": "memory"},
            },
        },
    )


class Copier:
    """Picks the name of its latest success, else its partners' most frequent pick (the latest among ties), else the
    first word shown; with `majority`, always its partners' most frequent pick; with `garbage`, answers without a
    value; with `stop_after`, raises after that many calls (a kill)."""

    def __init__(self, garbage: bool = False, stop_after: int | None = None, majority: bool = False) -> None:
        self.garbage, self.stop_after, self.majority = garbage, stop_after, majority
        self.systems: list[str] = []
        self.prompts: list[str] = []
        self.constraints: list[Any] = []

    def __call__(self, messages: Any, kwargs: Any) -> str:
        self.systems.append(messages[0].content)
        self.prompts.append(messages[-1].content)
        if self.stop_after is not None and len(self.prompts) > self.stop_after:
            raise KeyboardInterrupt
        self.constraints.append(kwargs.get("constraint"))
        if self.garbage:
            return "I would pick the best one."
        history = re.findall(r"'Player 1': '(\w+)', 'Player 2': '(\w+)', 'payoff': (-?\d+)", messages[-1].content)
        shown = re.search(r"values: ([\w, ]+)\.", messages[0].content).group(1).split(", ")
        won = [own for own, _, payoff in history if int(payoff) > 0 and not self.majority]
        seen = [other for _, other, _ in history if other != "none"]
        pick = won[-1] if won else max(seen[::-1], key=seen.count) if seen else shown[0]
        return f"Let me think. {{'value': '{pick}'; 'reason': 'my partner played it'}}"

    def model(self) -> Any:
        return scripted([(r".", self)])


def test_a_population_converges_after_3n_successes_in_a_row_and_stops(tmp_path: Path) -> None:
    copier = Copier()
    path = run_population(naming(), tmp_path / "run", models={"user": copier.model()})
    rows = pd.read_csv(path / "interactions.csv")
    summary = read_json(path / "summary.json")
    at = summary["consensus_at"]
    assert at == len(rows) and rows["success"].tail(18).all()  # 3 N = 18 successes in a row, and it stopped there
    assert not rows["success"].iloc[: at - 18].tail(1).all() or at == 18  # the run of successes began just then
    last = rows.tail(18)
    assert set(last["name_a"]) == set(last["name_b"]) == {summary["consensus_name"]}
    assert len(copier.prompts) == 2 * len(rows)  # two picks an interaction, each readable the first time
    histories = [len(re.findall(r"'round': \d+", p)) for p in copier.prompts]
    assert max(histories) == 5 and min(histories) == 0  # the memory window: the last 5 interactions
    orders = {re.search(r"values: ([\w, ]+)\.", s).group(1) for s in copier.systems}
    assert len(orders) > 1  # the words' order is shuffled per prompt
    gens = pd.read_csv(path / "generations.csv")
    assert gens["consensus_at"].dropna().astype(int).tolist() == [at]
    assert gens["dominant_share"].iloc[-1] == 1.0 and gens["interactions"].sum() == len(rows)


def test_committed_members_call_no_model_and_flip_a_prepared_convention(tmp_path: Path) -> None:
    members = [{"strategy": "llm", "share": 0.5}, {"strategy": "M", "share": 0.5, "fixed": True}]
    copier = Copier(majority=True)
    path = run_population(
        naming(8, 6, members, prepared="Q", stop_at_consensus=False), tmp_path / "run", models={"user": copier.model()}
    )
    rows = pd.read_csv(path / "interactions.csv")
    population = pd.read_csv(path / "population.csv")
    committed = set(population.loc[population["committed"].eq("M"), "agent"])
    assert len(committed) == 4
    for side in "ab":
        assert rows.loc[rows[side].isin(committed), f"name_{side}"].eq("M").all()
        assert rows.loc[rows[side].isin(committed), f"attempts_{side}"].eq(0).all()
    picks = sum((~rows[side].isin(committed)).sum() for side in "ab")
    assert len(copier.prompts) == picks  # the committed never call the model
    assert population.loc[population["agent"].isin(committed), "held"].eq("M").all()  # not their prepared memory
    assert "'Player 1': 'Q', 'Player 2': 'Q', 'payoff': 100" in copier.prompts[0]  # a prepared memory
    gens = pd.read_csv(path / "generations.csv")
    assert gens["committed_share"].iloc[0] < gens["committed_share"].iloc[-1] == 1.0  # the copiers all flipped to M
    summary = read_json(path / "summary.json")
    assert (
        summary["committed_word"] == "M"
        and summary["final_committed_share"] == 1.0
        and summary["committed_share"] == 4 / len(population["agent"].unique())
    )


def test_unreadable_answers_are_asked_again_then_fail_the_interaction(tmp_path: Path) -> None:
    path = run_population(naming(4, 1, retries=2), tmp_path / "run", models={"user": Copier(garbage=True).model()})
    rows = pd.read_csv(path / "interactions.csv")
    assert not rows["valid_a"].any() and not rows["success"].any() and rows["attempts_a"].eq(3).all()
    assert rows["payoff"].eq(-50).all()
    assert pd.read_csv(path / "generations.csv")["illegal_rate"].iloc[0] == 1.0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"revision": {"rule": "imitate"}}, "set revision.rule memory"),
        ({"members": [{"strategy": "llm", "share": 0.8}, {"strategy": "M", "share": 0.2}]}, "set fixed: true"),
        (
            {"members": [{"strategy": "llm", "share": 0.8}, {"strategy": "Z", "share": 0.2, "fixed": True}]},
            "members[1].strategy 'Z'",
        ),
        ({"game": {"kind": "naming", "words": ["Q", "M"], "prepared": "X"}}, "prepared 'X' is not one of the words"),
        ({"game": {"kind": "naming", "words": ["Q", "Q"]}}, "words must be distinct"),
        ({"game": {"kind": "naming", "words": ["q", "Q"]}}, "distinct (case aside)"),
        ({"game": {"kind": "naming", "words": ["é", "M"]}}, "ASCII letters or digits"),
        ({"game": {"kind": "naming", "words": ["none", "M"]}}, "not 'none'"),
        ({"actors": 2}, "actors 2: with update sequential each interaction waits"),
        ({"revision": {"rule": "memory", "beta": 2.0}}, "revision.beta: not read by the naming game"),
    ],
)
def test_bad_naming_input_exits_2_naming_the_field(tmp_path: Path, change: dict, field: str) -> None:
    from tests.test_population_donor import assert_bad_input

    assert_bad_input(tmp_path, "scenarios/population/naming_small.yaml", change, field)


def test_the_constrained_answer_is_prefilled_with_the_codes_format_and_held_to_the_words(tmp_path: Path) -> None:
    class Bare(Copier):  # answers as a backend holding it to the words would: the rest after the prefix
        def __call__(self, messages: Any, kwargs: Any) -> str:
            answer = super().__call__(messages, kwargs)
            return kwargs["constraint"].prefix + re.search(r"'value': '(\w+)'", answer).group(1)

    bare = Bare()
    path = run_population(naming(answer="constrained"), tmp_path / "run", models={"user": bare.model()})
    assert {(c.prefix, c.choices) for c in bare.constraints} == {("{'value': '", ("Q", "M", "X"))}
    assert pd.read_csv(path / "interactions.csv")[["valid_a", "valid_b"]].all().all()
    free = Copier()
    run_population(naming(), tmp_path / "free", models={"user": free.model()})
    assert set(free.constraints) == {None}  # the code's prompt, unconstrained, by default


def test_the_matrix_and_donor_games_refuse_the_memory_rule() -> None:
    from sandbox.base.errors import ScenarioError

    with pytest.raises(ScenarioError, match="memory is the naming game's"):
        parse_kind(
            "population",
            {
                "name": "m",
                "population": {
                    "agents": 4,
                    "generations": 1,
                    "members": [{"strategy": "Cooperator", "share": 1.0}],
                    "revision": {"rule": "memory"},
                },
            },
        )
    with pytest.raises(ScenarioError, match="memory is the naming game's"):
        parse_kind(
            "population",
            {
                "name": "d",
                "population": {
                    "agents": 4,
                    "generations": 1,
                    "members": [{"strategy": "llm", "share": 1.0}],
                    "game": {"kind": "donor"},
                    "revision": {"rule": "memory"},
                },
            },
        )


def naming_over_loopback(out: Path, latency_s: float = 0.0) -> tuple[Any, int, str]:
    """`sandbox run scenarios/population/naming_small.yaml` into `out`, its users the Copier over a loopback
    OpenAI-compatible server: the command's result, the requests the server took, and its URL."""
    from types import SimpleNamespace

    from tests.loopback_openai import loopback_openai

    copier = Copier()

    def answer(body: dict[str, Any]) -> str:  # the Copier, over HTTP
        return copier([SimpleNamespace(content=m["content"]) for m in body["messages"]], {})

    with loopback_openai(answer, latency_s=latency_s) as server:
        model = f"user=openai:loopback@{server.url}"
        result = runner.invoke(
            app, ["run", "scenarios/population/naming_small.yaml", "--out", str(out), "--model", model]
        )
        return result, len(server.requests), server.url


def test_the_cli_takes_model_user_openai_end_to_end(tmp_path: Path) -> None:
    result, requests, url = naming_over_loopback(tmp_path / "run")
    assert result.exit_code == 0, result.output
    summary = read_json(tmp_path / "run" / "summary.json")
    assert summary["model"] == f"openai:loopback@{url}" and summary["calls"] == requests > 0
    assert "consensus" in result.output


def test_the_cli_stops_at_a_budget_with_exit_3_and_resumes_with_a_higher_one(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from tests.loopback_openai import loopback_openai

    copier = Copier()

    def answer(body: dict[str, Any]) -> str:
        return copier([SimpleNamespace(content=m["content"]) for m in body["messages"]], {})

    import yaml

    data = yaml.safe_load(Path("scenarios/population/naming_small.yaml").read_text())
    # 20 calls: one generation's 16 picks fit (a smaller cap is refused up front), the run's do not
    (tmp_path / "capped.yaml").write_text(yaml.safe_dump({**data, "budget": {"calls": 20}}))
    run = tmp_path / "run"
    with loopback_openai(answer) as server:
        model = ["--model", f"user=openai:loopback@{server.url}"]
        stopped = runner.invoke(app, ["run", str(tmp_path / "capped.yaml"), "--out", str(run), *model])
        assert stopped.exit_code == 3, stopped.output
        assert "sandbox resume" in " ".join(stopped.output.split())
        assert read_json(run / "run.json")["status"] == "stopped"
        finished = runner.invoke(app, ["resume", str(run), "--max-calls", "100000"])
    assert finished.exit_code == 0, finished.output
    assert read_json(run / "summary.json")["calls"] > 20


@pytest.mark.parametrize("stop_after", [3, 20, 45])  # 48 calls: 24 interactions in rounds of 3
def test_a_naming_population_in_rounds_of_pairs_killed_anywhere_resumes_to_identical_tables(
    tmp_path: Path, stop_after: int
) -> None:
    """The conformance test kills the sequential game (tests/test_population_games.py); here rounds of pairs."""
    scenario = naming(6, 4, stop_at_consensus=False, update="pairs")
    whole = run_population(scenario, tmp_path / "whole", models={"user": Copier().model()})
    with pytest.raises(KeyboardInterrupt):
        run_population(scenario, tmp_path / "cut", models={"user": Copier(stop_after=stop_after).model()})
    resumed = resume_population(tmp_path / "cut", models={"user": Copier().model()})
    for table in ("interactions.csv", "population.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(whole / table), pd.read_csv(resumed / table))
