"""Matrix-game populations of LLM members (`game.play: llm`) with a scripted model: moves through the moral package's
implicit prompt and parser, payoffs by the table, illegal moves recorded, reflection and imitation of principles,
resume after a kill, bad input."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from sandbox.base.files import read_json
from sandbox.core.scenario_files import parse_kind
from sandbox.llm.scripted import ScriptedReply, scripted
from sandbox.population.run import run_population

TIT_FOR_TAT = "Cooperate first, then do what the other agent did last time."
MEMBERS = [{"strategy": "altruistic", "share": 0.5}, {"strategy": "selfish", "share": 0.5, "fixed": True}]


def matrix(
    rule: str = "reflect", generations: int = 3, members: list[dict] | None = None, payoff: str = "total", **game: Any
) -> Any:
    return parse_kind(
        "population",
        {
            "name": "pd-llm",
            "seed": 1,
            "population": {
                "agents": 6,
                "generations": generations,
                "members": members or MEMBERS,
                "network": {"kind": "ring"},
                "game": {"kind": "matrix", "name": "prisoners_dilemma", "turns": 2, "play": "llm", **game},
                "revision": {
                    "rule": rule,
                    **({"beta": 1000.0} if rule == "imitate" else {}),
                    **({"payoff": payoff} if payoff != "total" else {}),
                },
            },
        },
    )


class Members:
    """Selfish principles defect, tit for tat copies the last move shown, anything else cooperates; a reflection
    answers tit for tat. `garbage`: answers that name no single token; `stop_after`: raises then (a kill)."""

    def __init__(self, garbage: bool = False, stop_after: int | None = None) -> None:
        self.garbage, self.stop_after = garbage, stop_after
        self.prompts: list[tuple[str, str, Any]] = []

    def __call__(self, messages: Any, kwargs: Any) -> str:
        if self.stop_after is not None and len(self.prompts) >= self.stop_after:
            raise KeyboardInterrupt
        system, text = messages[0].content, messages[-1].content
        self.prompts.append((system, text, kwargs.get("constraint")))
        if "Revised principle" in text:
            return f"Revised principle: {TIT_FOR_TAT}"
        if self.garbage:
            return "I cooperate with action1 or action2"
        if "selfish" in system.lower():
            return "action2"
        last = re.search(r"they played (action\d)", text)
        return last.group(1) if "do what the other agent did" in system and last else "action1"

    def model(self) -> Any:
        return scripted([(r".", self)])


def test_members_play_their_principles_through_the_implicit_prompt_and_reflect(tmp_path: Path) -> None:
    members = Members()
    path = run_population(matrix(), tmp_path / "run", models={"user": members.model()})
    moves = pd.read_csv(path / "moves.csv")
    population = pd.read_csv(path / "population.csv")
    kinds = population.query("generation == 0").set_index("agent")["kind"]
    first = moves.query("generation == 0")
    for r in first.itertuples():  # the moral package's prisoner's dilemma (Tennant et al.): R 3, S 0, T 4, P 1
        assert r.move_a == ("D" if kinds[r.a] == "fixed" else "C") and r.move_b == (
            "D" if kinds[r.b] == "fixed" else "C"
        )
        expected = {("C", "C"): (3, 3), ("C", "D"): (0, 4), ("D", "C"): (4, 0), ("D", "D"): (1, 1)}[
            (r.move_a, r.move_b)
        ]
        assert (r.payoff_a, r.payoff_b) == expected
    assert all(
        "You must choose either action" in p and "Your principle:" in s
        for s, p, _ in members.prompts
        if "Revised principle" not in p
    )
    reflections = [p for _, p, _ in members.prompts if "Revised principle" in p]
    assert len(reflections) == 2 * 3 and all(p.count("- against") == 4 for p in reflections)  # 2 neighbours x 2 turns
    later = population.query("generation == 2 and kind == 'member'")
    assert (later["strategy"] == TIT_FOR_TAT).all()
    assert population.query("kind == 'fixed'")["strategy"].str.startswith("Be selfish").all()
    # tit for tat against a defector: C then D; against tit for tat: C, C
    last = moves.query("generation == 2")
    against = last[(last["a"].map(kinds) == "fixed") != (last["b"].map(kinds) == "fixed")]  # a member and a defector
    member_moves = [r.move_b if kinds[r.a] == "fixed" else r.move_a for r in against.sort_values("turn").itertuples()]
    assert sorted(member_moves[: len(member_moves) // 2]) == ["C"] * (len(member_moves) // 2)
    assert set(member_moves[len(member_moves) // 2 :]) == {"D"}
    summary = read_json(path / "summary.json")
    assert summary["game"] == "matrix_llm" and summary["illegal_rate"] == 0.0


def test_illegal_answers_are_recorded_and_earn_nothing(tmp_path: Path) -> None:
    members = [{"strategy": "altruistic", "share": 1.0}]
    path = run_population(
        matrix("imitate", 1, members), tmp_path / "run", models={"user": Members(garbage=True).model()}
    )
    moves = pd.read_csv(path / "moves.csv")
    assert moves["move_a"].isna().all() and moves["payoff_a"].eq(0).all() and moves["payoff_b"].eq(0).all()
    assert read_json(path / "summary.json")["illegal_rate"] == 1.0


def test_constrained_answers_are_held_to_the_two_tokens(tmp_path: Path) -> None:
    members = Members()
    run_population(
        matrix("imitate", 1, answer="constrained", tokens=["blue", "green"]),
        tmp_path / "run",
        models={"user": members.model()},
    )
    assert all(c.choices == ("blue", "green") for _, _, c in members.prompts)


def test_imitating_members_copy_a_better_neighbour(tmp_path: Path) -> None:
    path = run_population(matrix("imitate", 2), tmp_path / "run", models={"user": Members().model()})
    revisions = pd.read_csv(path / "revisions.csv")
    population = pd.read_csv(path / "population.csv").set_index(["generation", "name"])
    for r in revisions.itertuples():
        gap = population.loc[(0, r.partner), "payoff"] - population.loc[(0, r.name), "payoff"]
        assert (r.outcome in ("copied", "same")) if gap > 0.01 else (r.outcome == "kept") if gap < -0.01 else True
    assert "copied" in set(revisions["outcome"])  # cooperators next to a defector earn less


def test_a_reflection_cut_off_at_the_token_limit_is_illegal_and_the_principle_stays(tmp_path: Path) -> None:
    members = Members()

    def cut(messages: Any, kwargs: Any) -> Any:
        answer = members(messages, kwargs)
        if "Revised principle" in messages[-1].content:
            return ScriptedReply(
                "Revised principle: Cooperate first, then if the other agent defected I will", finish_reason="length"
            )
        return answer

    path = run_population(matrix(generations=2), tmp_path / "run", models={"user": scripted([(r".", cut)])})
    revisions = pd.read_csv(path / "revisions.csv")
    assert revisions["outcome"].eq("illegal").all() and (revisions["old_norm"] == revisions["new_norm"]).all()


def test_a_mean_payoff_is_compared_and_shown_per_opponent(tmp_path: Path) -> None:
    members = Members()
    scenario = matrix(generations=2, payoff="mean")
    total = run_population(matrix(generations=1), tmp_path / "total", models={"user": Members().model()})
    path = run_population(scenario, tmp_path / "mean", models={"user": members.model()})
    assert (
        pd.read_csv(path / "population.csv").query("generation == 0")["payoff"] * 2
        == pd.read_csv(total / "population.csv")["payoff"]
    ).all()  # two neighbours each on a ring
    assert all("mean per opponent" in p for _, p, _ in members.prompts if "Revised principle" in p)


def test_a_generation_without_a_legal_move_has_no_cooperation_figure(tmp_path: Path) -> None:
    path = run_population(
        matrix("imitate", 1, [{"strategy": "fair", "share": 1.0}]),
        tmp_path / "run",
        models={"user": Members(garbage=True).model()},
    )
    assert pd.read_csv(path / "generations.csv")["cooperation"].isna().all()
    assert read_json(path / "summary.json")["cooperation_by_generation"] == [None]


@pytest.mark.parametrize(
    ("population", "field"),
    [
        ({"game": {"kind": "matrix", "history": 2}}, "history: read with play llm only"),
        ({"game": {"kind": "matrix", "play": "llm", "tokens": ["a", "a"]}}, "the two action tokens must differ"),
        ({"members": [{"strategy": "llm", "share": 1.0}]}, "members[0].strategy llm"),
        (
            {"members": [{"strategy": "fair", "share": 0.9}, {"strategy": "assistant", "share": 0.1}]},
            "SCAI's assistant plays the ultimatum game",
        ),
        ({"revision": {"rule": "best"}}, "revision.rule best"),
    ],
)
def test_bad_matrix_llm_input_is_refused_naming_the_field(population: dict, field: str) -> None:
    from sandbox.base.errors import ScenarioError

    block = {
        "agents": 6,
        "generations": 2,
        "members": [{"strategy": "fair", "share": 1.0}],
        "game": {"kind": "matrix", "play": "llm"},
        "revision": {"rule": "reflect"},
        **population,
    }
    with pytest.raises(ScenarioError, match=re.escape(field)):
        parse_kind("population", {"name": "bad", "population": block})


def test_a_state_edit_sets_a_norm_with_its_text_or_is_refused_naming_the_field(tmp_path: Path) -> None:
    """An agent's norm id follows its text: `state.agents.0.norm=ID` exits 2 naming the field and writes nothing
    (a fork that set it apart from the text showed agent 0 with "Always defect."'s id beside "Always cooperate.");
    `state.agents.0.strategy=TEXT` gives the agent that text as a norm of its own, in the state and in norms.csv."""
    from typer.testing import CliRunner

    import sandbox
    from sandbox.cli.runs import app

    parent = run_population(matrix(generations=3), tmp_path / "parent", models={"user": Members().model()})
    for field in ("agents.0.norm=1", "next_id=7"):
        out = tmp_path / "never"
        result = CliRunner().invoke(
            app, ["fork", str(parent), "--at", "2", "--set", f"state.{field}", "--out", str(out)]
        )
        assert result.exit_code == 2, result.output
        assert field.split("=")[0] in result.output and "strategy=TEXT" in " ".join(result.output.split())
        assert not out.exists()
    text = "Defect every time, whatever the other agent does."
    fork = sandbox.fork(
        parent,
        at=2,
        changes={"state.agents.0.strategy": text},
        out=tmp_path / "fork",
        models={"user": Members().model()},
    )
    norms, population = pd.read_csv(fork.path / "norms.csv"), pd.read_csv(fork.path / "population.csv")
    new = norms[norms["rule"] == "fork"]
    assert new[["generation", "author", "strategy"]].values.tolist() == [[2, "agent0", text]]
    agent0 = population[(population["agent"] == 0) & (population["generation"] == 2)].iloc[0]
    assert (agent0["norm"], agent0["strategy"]) == (new["norm"].iloc[0], text)
    assert norms["norm"].is_unique  # the new norm took the next id, which no other text holds


def test_a_state_edit_is_checked_against_the_game_s_typed_population(tmp_path: Path) -> None:
    """A value of the old value's type can still be one the game's population cannot hold: an agent's kind is a
    member or fixed, so `state.agents.0.kind=robot` exits 2 naming the path and the field, and writes nothing;
    `kind=fixed` is one, and the fork plays it. The population (columns) is checked whole as the game types it."""
    from typer.testing import CliRunner

    import sandbox
    from sandbox.cli.runs import app
    from sandbox.population.games.matrix.llm import LLMMatrixGame

    parent = run_population(matrix(generations=3), tmp_path / "parent", models={"user": Members().model()})
    out = tmp_path / "never"
    result = CliRunner().invoke(
        app, ["fork", str(parent), "--at", "2", "--set", "state.agents.0.kind=robot", "--out", str(out)]
    )
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "state.agents.0.kind" in said and "agents.0.kind" in said.split("state.agents.0.kind", 1)[1], said
    assert not out.exists()
    with pytest.raises(ValueError, match=r"state\.agents\.0\.norm: norm\.0: Input should be a valid integer"):
        LLMMatrixGame.check_agents(
            {"kind": ["member"], "fixed": [False], "norm": [1.5], "texts": {"1": "x"}, "next_id": 2}, "agents.0.norm"
        )
    fork = sandbox.fork(
        parent,
        at=2,
        changes={"state.agents.0.kind": "fixed"},
        out=tmp_path / "fork",
        models={"user": Members().model()},
    )
    population = pd.read_csv(fork.path / "population.csv")
    assert population[(population["agent"] == 0) & (population["generation"] == 2)]["kind"].tolist() == ["fixed"]


def test_the_state_holds_the_agents_as_columns_and_reads_a_run_made_with_records(tmp_path: Path) -> None:
    """The checkpoint holds the agents as columns (kind, fixed, norm id; the texts of the norms held; the next id),
    one list each, which population.csv matches row for row; a checkpoint from before (a record an agent) is read
    as the same columns, and its revision too; a fork may not set an agent's name, which follows its index."""
    from typer.testing import CliRunner

    from sandbox.cli.runs import app
    from sandbox.engine.generations import THREAD
    from sandbox.engine.store import last_state
    from sandbox.population.games.matrix.llm import LLMMatrixGame
    from sandbox.population.games.matrix.llm_agents import AgentView, as_columns

    path = run_population(matrix(generations=3), tmp_path / "run", models={"user": Members().model()})
    agents = last_state(path, THREAD)["agents"]
    assert sorted(agents) == ["fixed", "kind", "next_id", "norm", "texts"]
    assert all(len(agents[column]) == 6 for column in ("kind", "fixed", "norm"))
    population = pd.read_csv(path / "population.csv", keep_default_na=False)
    last = population[population["generation"] == 2]  # the population the last generation played
    texts = {int(k): v for k, v in agents["texts"].items()}
    assert last["kind"].tolist() == agents["kind"] and last["fixed"].tolist() == agents["fixed"]
    assert last["norm"].tolist() == agents["norm"] and last["strategy"].tolist() == [texts[n] for n in agents["norm"]]
    assert last["name"].tolist() == [f"agent{i}" for i in range(6)]
    assert set(texts) == set(agents["norm"]) and agents["next_id"] > max(agents["norm"])

    records = list(AgentView(agents))  # what a checkpoint held before the columns
    assert records[0] == {"name": "agent0", "kind": agents["kind"][0], "fixed": agents["fixed"][0]} | {
        "norm": agents["norm"][0],
        "strategy": texts[agents["norm"][0]],
    }
    assert as_columns({"agents": records, "next_id": agents["next_id"]}) == agents
    game = LLMMatrixGame.__new__(LLMMatrixGame)  # next_agents reads only the state
    old = {"generation": 1, "revised": {"agents": records, "norms": [], "revisions": [], "next_id": agents["next_id"]}}
    assert game.next_agents(old) == agents  # type: ignore[arg-type]

    out = tmp_path / "never"
    result = CliRunner().invoke(
        app, ["fork", str(path), "--at", "1", "--set", "state.agents.2.name=x", "--out", str(out)]
    )
    assert result.exit_code == 2 and "agents.2.name" in result.output and "index" in result.output, result.output
    assert not out.exists()
