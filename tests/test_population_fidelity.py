"""The proxy judge of play against norm in a donor-game population (`population.judge_play`), with scripted
players and a scripted judge: each agent's own moves are shown against its own strategy, the verdicts land in
fidelity.csv and the summary, an unparsed verdict stays unlabelled, and a killed run resumes to the same table."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from sandbox.base.files import read_json
from sandbox.core.scenario_files import parse_kind
from sandbox.llm.scripted import scripted
from sandbox.population.run import resume_population, run_population
from tests.test_population_donor import Recorder


def judged(agents: int = 6, generations: int = 2) -> Any:
    return parse_kind(
        "population",
        {
            "name": "donor",
            "seed": 1,
            "population": {
                "agents": agents,
                "generations": generations,
                "members": [{"strategy": "llm", "share": 1.0}],
                "game": {"kind": "donor"},
                "judge_play": True,
                "revision": {"rule": "select"},
            },
        },
    )


class Liar(Recorder):
    """The Recorder, but agent 1_1 gives nothing whatever its strategy says."""

    def __call__(self, messages: Any, kwargs: Any) -> str:
        text = messages[-1].content
        if "Your name is 1_1." in text and "How many units do you give up" in text:
            return "Justification: none.\nAnswer: 0"
        return super().__call__(messages, kwargs)


class Judge:
    """Yes when every share the player gave is the tenths its strategy names; with `unsure`, an answer that is
    neither yes nor no; with `stop_after`, a kill after that many verdicts."""

    def __init__(self, unsure: bool = False, stop_after: int | None = None) -> None:
        self.unsure, self.stop_after = unsure, stop_after
        self.prompts: list[str] = []

    def __call__(self, messages: Any, kwargs: Any) -> str:
        text = messages[-1].content
        self.prompts.append(text)
        if self.stop_after is not None and len(self.prompts) > self.stop_after:
            raise KeyboardInterrupt  # a kill while the judge reads a generation
        if self.unsure:
            return "Perhaps"
        tenths = int(re.search(r"give (\d) tenths", text).group(1))
        shares = [int(x) for x in re.findall(r"\((\d+)% of its units\)", text)]
        return "Yes" if shares and all(s == 10 * tenths for s in shares) else "No"

    def model(self) -> Any:
        return scripted([(r".", self)])


def test_the_judge_reads_each_agents_own_moves_against_its_own_norm(tmp_path: Path) -> None:
    judge = Judge()
    path = run_population(judged(), tmp_path / "run", models={"user": Liar().model(), "judge": judge.model()})
    fidelity = pd.read_csv(path / "fidelity.csv")
    donations = pd.read_csv(path / "donations.csv")
    population = pd.read_csv(path / "population.csv")
    assert len(fidelity) == 12 and len(judge.prompts) == 12  # every agent, both generations
    for row in fidelity.itertuples():
        own = donations[(donations["generation"] == row.generation) & (donations["donor"] == row.agent)]
        assert row.moves.count("\n") + 1 == len(own)  # each of its own moves as donor, and no other's
        strategy = population.query("generation == @row.generation and agent == @row.agent")["strategy"].item()
        assert f'"{strategy}"' in judge.prompts[row.Index]
        assert bool(row.label) == (row.name != "1_1")  # only the agent that did not play its strategy fails
    summary = read_json(path / "summary.json")
    liar_generations = set(fidelity.loc[fidelity["name"] == "1_1", "generation"])
    assert summary["norm_fidelity_by_generation"] == [round(1 - (g in liar_generations) / 6, 4) for g in range(2)]
    assert summary["fidelity_unparsed"] == 0


def test_an_unparsed_verdict_is_recorded_without_a_label(tmp_path: Path) -> None:
    path = run_population(
        judged(4, 1), tmp_path / "run", models={"user": Recorder().model(), "judge": Judge(unsure=True).model()}
    )
    fidelity = pd.read_csv(path / "fidelity.csv")
    assert fidelity["label"].isna().all() and fidelity["answer"].eq("Perhaps").all()
    summary = read_json(path / "summary.json")
    assert summary["fidelity_unparsed"] == 4 and summary["norm_fidelity_by_generation"] == [None]


@pytest.mark.parametrize(("who", "stop_after"), [("user", 10), ("user", 30), ("judge", 2), ("judge", 6)])
def test_a_judged_population_killed_anywhere_resumes_to_the_same_verdicts(
    tmp_path: Path, who: str, stop_after: int
) -> None:
    whole = run_population(
        judged(4, 2), tmp_path / "whole", models={"user": Recorder().model(), "judge": Judge().model()}
    )
    killer = {"user": Recorder(), "judge": Judge()}
    killer[who] = (Recorder if who == "user" else Judge)(stop_after=stop_after)
    with pytest.raises(KeyboardInterrupt):
        run_population(judged(4, 2), tmp_path / "cut", models={role: m.model() for role, m in killer.items()})
    resumed = resume_population(tmp_path / "cut", models={"user": Recorder().model(), "judge": Judge().model()})
    for table in ("fidelity.csv", "donations.csv", "population.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(whole / table), pd.read_csv(resumed / table))


def test_only_the_donor_game_reads_judge_play() -> None:
    from sandbox.base.errors import ScenarioError

    with pytest.raises(ScenarioError, match="judge_play: a scripted matrix game"):
        parse_kind(
            "population",
            {
                "name": "m",
                "population": {
                    "agents": 4,
                    "generations": 1,
                    "judge_play": True,
                    "members": [{"strategy": "Cooperator", "share": 1.0}],
                },
            },
        )
    with pytest.raises(ScenarioError, match="judge_play: not read by the naming game"):
        parse_kind(
            "population",
            {
                "name": "n",
                "population": {
                    "agents": 4,
                    "generations": 1,
                    "judge_play": True,
                    "members": [{"strategy": "llm", "share": 1.0}],
                    "game": {"kind": "naming"},
                    "revision": {"rule": "memory"},
                },
            },
        )


def test_the_known_cases_bench_scores_a_judge_that_always_says_yes_at_half() -> None:
    from sandbox.base.sync import run_sync
    from sandbox.population.games.donor.fidelity import KNOWN_CASES, ajudge_known_cases
    from sandbox.population.games.donor.spec import DonorSpec
    from sandbox.rewards.judge import ProxyJudge

    yes = run_sync(ajudge_known_cases(ProxyJudge(scripted([(r".", "Yes")])), DonorSpec(kind="donor")))
    assert sum(r["right"] for r in yes) == sum(follows for _, _, follows in KNOWN_CASES) == len(KNOWN_CASES) // 2

    def reader(messages: Any, kwargs: Any) -> str:  # a judge that reads the share each text names
        text = messages[-1].content
        named = 0 if "nothing" in text else 100 if "everything" in text else int(re.search(r"(\d+)%", text).group(1))
        return "Yes" if all(int(x) == named for x in re.findall(r"\((\d+)% of its units\)", text)) else "No"

    rows = run_sync(ajudge_known_cases(ProxyJudge(scripted([(r".", reader)])), DonorSpec(kind="donor")))
    assert all(r["right"] for r in rows)  # a judge that reads the moves against the text gets every case
    assert [r["shares"] for r in rows] == [shares for _, shares, _ in KNOWN_CASES]
