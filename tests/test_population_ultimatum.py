"""Ultimatum-game populations with a scripted model: members play their principle and revise it (their own MetaLM,
or imitation), SCAI's fixed users never revise, SCAI's assistant reads the generation's interactions; illegal moves
and illegal revisions are recorded; a killed run resumes to identical tables; bad input exits 2."""

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
from sandbox.population.run import run_population
from tests.test_population_donor import assert_bad_input

SMALL = "scenarios/population/ultimatum_small.yaml"
FAIR = "Be fair: always share equally, so that everyone gets the same."
MEMBERS = [
    {"strategy": "altruistic", "share": 0.5},
    {"strategy": "selfish", "share": 1 / 3, "fixed": True},
    {"strategy": "assistant", "share": 1 / 6},
]


def ultimatum(
    rule: str = "reflect", generations: int = 3, members: list[dict] | None = None, agents: int = 6, **game: Any
) -> Any:
    return parse_kind(
        "population",
        {
            "name": "ultimatum",
            "seed": 5,
            "population": {
                "agents": agents,
                "generations": generations,
                "members": members or MEMBERS,
                "network": {"kind": "ring"},
                "game": {"kind": "ultimatum", "reading": "none", "amount": {"min": 10, "max": 30}, **game},
                "revision": {"rule": rule, **({"beta": 1000.0} if rule == "imitate" else {})},
            },
        },
    )


class Players:
    """Proposes by the principle in its system prompt (fair: half, selfish: a tenth, anything else: all but one),
    accepts everything; a MetaLM answers the fair principle. `garbage`: no answer is a legal move or principle;
    `stop_after`: raises after that many calls (a kill)."""

    def __init__(self, garbage: bool = False, stop_after: int | None = None) -> None:
        self.garbage, self.stop_after = garbage, stop_after
        self.meta: list[str] = []
        self.calls = 0

    def __call__(self, messages: Any, kwargs: Any) -> str:
        self.calls += 1
        if self.stop_after is not None and self.calls > self.stop_after:
            raise KeyboardInterrupt
        system, text = messages[0].content, messages[-1].content
        if any("flex-policy" in m.content for m in messages):  # a MetaLM's prompt, or its re-ask
            self.meta.append(text)
            return "" if self.garbage else f"Revised principle: {FAIR}"
        if self.garbage:
            return "Let me think about it."
        if "proposer will get" in text and "accept" in text.lower():
            return "yes"
        n, currency = re.search(r"(\d+) (\w+)", text).groups()
        n = int(n)
        give = n // 2 if "fair" in system.lower() else n // 10 if "selfish" in system.lower() else n - 1
        return f"For the {n} {currency}, the proposer will get {n - give}, and the responder will get {give}."

    def models(self) -> dict[str, Any]:
        model = scripted([(r".", self)])
        return {"user": model, "assistant": model, "meta": model}


def test_members_reflect_on_their_own_play_the_assistant_on_the_generation_and_users_stay(tmp_path: Path) -> None:
    players = Players()
    path = run_population(ultimatum(), tmp_path / "run", models=players.models())
    population = pd.read_csv(path / "population.csv")
    fixed = population[population["kind"] == "fixed"]
    assert fixed["strategy"].str.startswith("Be selfish").all() and fixed["offered_share"].lt(0.15).all()
    first = population.query("generation == 0 and kind == 'member'")
    assert first["offered_share"].gt(0.85).all()  # altruistic: all but one
    later = population.query("generation == 2 and kind != 'fixed'")
    assert (later["strategy"] == FAIR).all() and later["offered_share"].between(0.4, 0.55).all()
    revisions = pd.read_csv(path / "revisions.csv")
    learners = set(population.query("kind != 'fixed'")["name"])
    assert set(revisions["rule"]) == {"reflect", "assistant"} and set(revisions["name"]) == learners
    # 2 generations revised x 4 learners; a member reads its own 4 episodes (2 neighbours, both ways) and no others
    assert len(players.meta) == 8
    own = [m for m in players.meta if m.count("Start of interaction") == 4]
    assert len(own) == 6 and all("(none observed)" in m for m in own)
    assistant = [m for m in players.meta if m not in own]
    assert all(m.count("Start of interaction") == 12 and "(none observed)" not in m for m in assistant)
    norms = pd.read_csv(path / "norms.csv")
    assert norms.query("generation == 1")["parents"].notna().all()
    summary = read_json(path / "summary.json")
    assert summary["fixed_offered_share_by_generation"][0] < 0.15 < summary["members_offered_share_by_generation"][2]


def test_imitating_members_copy_a_better_neighbour_and_only_the_assistant_asks_a_metalm(tmp_path: Path) -> None:
    members = [{"strategy": "altruistic", "share": 0.5}, {"strategy": "selfish", "share": 0.5, "fixed": True}]
    players = Players()
    path = run_population(ultimatum("imitate", 2, members), tmp_path / "run", models=players.models())
    revisions = pd.read_csv(path / "revisions.csv")
    assert players.meta == [] and set(revisions["rule"]) == {"imitate"}
    population = pd.read_csv(path / "population.csv").set_index(["generation", "agent"])
    for r in revisions.itertuples():  # beta 1000: a neighbour better by 0.01 of the stake is copied, a worse never
        gap = population.loc[(0, int(r.partner.removeprefix("user-"))), "score"] - population.loc[(0, r.agent), "score"]
        assert r.probability == pytest.approx(1 / (1 + np.exp(-1000 * gap)), abs=1e-6)
        if gap > 0.01:
            assert (
                r.outcome in ("copied", "same")
                and r.new_norm == population.loc[(0, int(r.partner.removeprefix("user-"))), "norm"]
            )
        elif gap < -0.01:
            assert r.outcome == "kept" and r.new_norm == r.old_norm
    assert "copied" in set(revisions["outcome"])  # the altruists lose to their selfish neighbours
    assert population.xs(1, level="generation").query("kind == 'fixed'")["strategy"].str.startswith("Be selfish").all()


def test_illegal_moves_and_illegal_principles_are_recorded_and_the_principle_stays(tmp_path: Path) -> None:
    path = run_population(ultimatum(generations=2), tmp_path / "run", models=Players(garbage=True).models())
    episodes = pd.read_csv(path / "episodes.csv")
    assert not episodes["proposal_legal"].any() and episodes["decision"].isna().all()
    assert episodes["proposer_share"].eq(0).all()
    revisions = pd.read_csv(path / "revisions.csv")
    assert revisions["outcome"].eq("illegal").all() and (revisions["old_norm"] == revisions["new_norm"]).all()
    summary = read_json(path / "summary.json")
    assert summary["illegal_rate"] == 0.5 and summary["illegal_revisions"] == 4  # the proposal of two moves


def test_the_dry_run_counts_the_principle_readings(tmp_path: Path) -> None:
    from sandbox.population.kind import dry_run
    from sandbox.population.kind import load as load_population

    calls = dry_run(load_population(SMALL))["calls"].sum()
    assert calls == 232  # measured on the embedded model: 72 moves, 150 readings, 10 revisions (docs)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"revision": {"rule": "select"}}, "revision.rule select"),
        ({"revision": {"rule": "reflect", "beta": 3.0}}, "revision.beta"),
        ({"members": [{"strategy": "llm", "share": 1.0}]}, "members[0].strategy llm"),
        (
            {"members": [{"strategy": "fair", "share": 0.5}, {"strategy": "assistant", "share": 0.5}]},
            "members[1]: the assistant is one",
        ),
        ({"members": [{"strategy": "kind", "share": 1.0}]}, "members[0].strategy 'kind'"),
        ({"members": [{"strategy": "fair", "share": 1.0}]}, "game.assistant_policy: no member is the assistant"),
        ({"judge_play": True}, "judge_play"),
        (
            {
                "members": [{"strategy": "fair", "share": 1.0}],
                "revision": {"rule": "imitate"},
                "game": {"kind": "ultimatum", "assistant_interactions": 5, "meta_reasks": 2},
            },
            "game.assistant_interactions, game.meta_reasks: no member is the assistant, and imitation asks no MetaLM",
        ),
    ],
)
def test_bad_ultimatum_input_exits_2_naming_the_field(tmp_path: Path, change: dict, field: str) -> None:
    assert_bad_input(tmp_path, SMALL, change, field)
