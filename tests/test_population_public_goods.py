"""The public goods game with punishment: its payoffs, its matching, the scripted types' dynamics against the
experiments' qualitative results (contributions decay without punishment and hold with it; the punished are those
below), LLM members' answers read or recorded as illegal, and a state edit of a scripted member refused. The run
contract (resume, fork, replay, bad input, summary, figure) is the conformance test's (test_population_games.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sandbox.core.scenario_files import parse_kind
from sandbox.llm.scripted import scripted
from sandbox.population.games.public_goods.rules import group_payoffs, groups_of
from sandbox.population.run import run_population

TYPES = [
    {"strategy": "free rider", "share": 0.25},
    {"strategy": "conditional cooperator", "share": 0.5},
    {"strategy": "punisher", "share": 0.25},
]


def public_goods(agents: int = 40, periods: int = 10, members: list[dict] | None = None, **game: Any) -> Any:
    return parse_kind(
        "population",
        {
            "name": "pgg",
            "seed": 7,
            "population": {
                "agents": agents,
                "generations": periods,
                "members": members or TYPES,
                "game": {"kind": "public_goods", **game},
                "network": {"kind": "complete"},
                "revision": {"rule": "memory"},
            },
        },
    )


def test_payoffs_follow_the_linear_rule_and_each_point_costs_one_and_takes_three() -> None:
    rng = np.random.default_rng(0)
    contributions = rng.integers(0, 21, size=4)
    first, final = group_payoffs(contributions.tolist(), None, 20, 0.4, 1, 3)
    assert np.allclose(first, 20 - contributions + 0.4 * contributions.sum()) and np.array_equal(first, final)
    points = np.zeros((4, 4))
    points[0, 3], points[1, 3], points[2, 0] = 2, 1, 4
    _, punished = group_payoffs(contributions.tolist(), points, 20, 0.4, 1, 3)
    assert np.allclose(punished - first, [-2 - 12, -1, -4, -9])


def test_partner_groups_stay_and_stranger_groups_are_drawn_anew(tmp_path: Path) -> None:
    assert groups_of(8, 4, None) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    for matching, same in (("partner", True), ("stranger", False)):
        path = run_population(public_goods(16, 3, matching=matching), tmp_path / matching)
        groups = pd.read_csv(path / "population.csv").pivot(index="agent", columns="generation", values="group")
        partners = [groups.groupby(groups[g]).apply(lambda x: tuple(sorted(x.index))).tolist() for g in groups]
        assert all(sorted(p) == sorted(partners[0]) for p in partners) == same, matching


def test_contributions_decay_without_punishment_and_hold_with_it(tmp_path: Path) -> None:
    """Fehr & Gächter's result in the scripted types: without punishment the mean contribution falls period by
    period to a few tokens; with punishment it stays well above, the free riders are punished first and most, and
    the punished contribute more the next period."""
    without = pd.read_csv(run_population(public_goods(), tmp_path / "without") / "generations.csv")
    path = run_population(public_goods(punishment=True), tmp_path / "with")
    with_ = pd.read_csv(path / "generations.csv")
    decline = without["mean_contribution"].to_numpy()
    assert decline[0] > 2 * decline[-1] and (np.diff(decline) <= 1e-9).all()
    assert with_["mean_contribution"].iloc[-1] > 2 * decline[-1]
    rows = pd.read_csv(path / "population.csv")
    first = rows[rows["generation"] == 0]
    by_kind = first.groupby("kind")["received"].mean()
    assert by_kind["free rider"] > 0 and by_kind["free rider"] > by_kind.drop("free rider").max()
    punished = first[first["received"] > 0]["agent"]
    later = rows[(rows["generation"] == 1) & rows["agent"].isin(punished)]
    assert (later["contribution"].to_numpy() > first.set_index("agent").loc[punished, "contribution"].to_numpy()).all()


def test_llm_members_follow_their_norms_and_garbage_is_an_illegal_move(tmp_path: Path) -> None:
    members = [{"strategy": "fair", "share": 0.5}, {"strategy": "selfish", "share": 0.5}]

    def answer(messages: Any, kwargs: Any) -> str:
        system, prompt = messages[0].content, messages[-1].content
        if "How many of your" not in prompt:
            return "Points: none"
        return "Contribution: 0" if "selfish" in system.lower() else "Contribution: 10"

    path = run_population(
        public_goods(8, 2, members, punishment=True), tmp_path / "norms", models={"user": scripted([(r".", answer)])}
    )
    rows = pd.read_csv(path / "population.csv")
    texts = pd.read_csv(path / "norms.csv").set_index("norm")["strategy"]
    by_norm = rows.groupby(rows["norm"].map(texts))["contribution"].mean()
    assert by_norm.to_dict() == {"Be fair: always share equally, so that everyone gets the same.": 10.0} | {
        t: 0.0 for t in texts if "selfish" in t.lower()
    }
    assert rows["valid"].all() and rows["punish_valid"].all()
    garbage = run_population(
        public_goods(8, 2, members, punishment=True),
        tmp_path / "garbage",
        models={"user": scripted([(r".", "I will think about it.")])},
    )
    rows = pd.read_csv(garbage / "population.csv")
    assert not rows["valid"].any() and not rows["punish_valid"].any() and rows["contribution"].eq(0).all()
    assert rows["attempts"].eq(3).all()  # the first ask and two more (game.retries)
    assert pd.read_csv(garbage / "generations.csv")["illegal_rate"].eq(1.0).all()


def test_a_scripted_member_has_no_norm_to_edit_and_an_llm_members_norm_is_set_with_its_text(tmp_path: Path) -> None:
    from sandbox.population.games.public_goods.game import PublicGoodsGame

    population = {
        "agents": [
            {"name": "member0", "kind": "free rider", "norm": None, "strategy": ""},
            {"name": "member1", "kind": "llm", "norm": 0, "strategy": "Be fair: share equally."},
        ],
        "groups": None,
        "next_id": 1,
    }
    with pytest.raises(ValueError, match="scripted free rider"):
        PublicGoodsGame.edit_state(population, "agents.0.strategy", "Give all you have, always.", 2)
    with pytest.raises(ValueError, match="agents.1.norm"):
        PublicGoodsGame.edit_state(population, "agents.1.norm", 5, 2)
    edit = PublicGoodsGame.edit_state(population, "agents.1.strategy", "Give all you have, always.", 2)
    agent = edit.update["agents"]["agents"][1]
    assert (agent["norm"], agent["strategy"]) == (1, "Give all you have, always.")
    row = edit.rows["norms.csv"][0]  # a named record (`NormRow`)
    assert [row[k] for k in ("generation", "norm", "author", "rule", "strategy")] == [
        2,
        1,
        "member1",
        "fork",
        "Give all you have, always.",
    ]


def test_identical_imperfect_conditional_cooperators_decline_as_in_the_authors_simulation(tmp_path: Path) -> None:
    """Fischbacher & Gächter's explanation of the decline: a population of identical imperfect conditional
    cooperators (their average schedule, beliefs updated by their estimated rule) contributes less each period and
    settles near 4 tokens (their own simulation, from the subjects' first-period choices: 7.9 falling to 3.8), while
    their data fall from 7.9 to 2.2."""
    members = [{"strategy": "conditional cooperator", "share": 1.0}]
    path = run_population(public_goods(40, 10, members, matching="stranger"), tmp_path / "icc")
    decline = pd.read_csv(path / "generations.csv")["mean_contribution"].tolist()
    assert decline[0] == 7 and decline[-1] == 4 and all(a >= b for a, b in zip(decline, decline[1:]))
    beliefs = pd.read_csv(path / "population.csv").groupby("generation")["belief"].mean()
    assert beliefs.iloc[0] == pytest.approx(9.8) and beliefs.is_monotonic_decreasing
