"""The paper's five matrix games and the intrinsic rewards of Table 1, case by case."""

from __future__ import annotations

import itertools

import pytest

from sandbox.moral.scenario import EVALUATION_GAMES
from sandbox.rewards.intrinsic import RewardParams, Schedule, Step, reward
from sandbox.rules.matrix import KWON_GAMES, MATRIX_GAMES, PayoffTable

PD = MATRIX_GAMES.get("prisoners_dilemma")
PARAMS = RewardParams(xi=3.0, illegal=-6.0)


def test_the_five_games_have_the_papers_payoffs_and_properties() -> None:
    assert set(EVALUATION_GAMES) == {
        "bach_or_stravinsky",
        "chicken",
        "defective_coordination",
        "prisoners_dilemma",
        "stag_hunt",
    }
    assert set(MATRIX_GAMES.names()) == set(EVALUATION_GAMES) | set(KWON_GAMES)
    assert PD.rows() == [[(3, 3), (0, 4)], [(4, 0), (1, 1)]]  # Fig. 1
    # Section 8.6: where the greatest collective payoff lies in each game
    best = {
        name: {
            pair
            for pair, (a, b) in MATRIX_GAMES.get(name).table.items()
            if a + b == MATRIX_GAMES.get(name).max_collective()
        }
        for name in EVALUATION_GAMES
    }
    assert best["prisoners_dilemma"] == best["stag_hunt"] == {("C", "C")}
    assert best["chicken"] == {("C", "D"), ("D", "C")}
    assert best["bach_or_stravinsky"] == {("C", "C"), ("D", "D")}
    assert best["defective_coordination"] == {("D", "D")}
    # the prisoner's dilemma: defection dominates, mutual cooperation beats mutual defection
    assert PD.payoffs("D", "C")[0] > PD.payoffs("C", "C")[0] > PD.payoffs("D", "D")[0] > PD.payoffs("C", "D")[0]


def test_a_table_seen_from_the_column_player() -> None:
    bos = MATRIX_GAMES.get("bach_or_stravinsky").for_column_player()
    assert bos.payoffs("C", "C") == (2, 3) and bos.payoffs("D", "D") == (3, 2)
    with pytest.raises(ValueError, match="2 rows of 2 cells"):
        PayoffTable.from_rows("bad", [[[1, 1], [0, 0]]])


# Table 1 on the prisoner's dilemma, every (own move, opponent's move, opponent's last move):
# game = own payoff; deontological = -xi iff own D after the opponent's C; utilitarian = both payoffs;
# game + deontological = own payoff - xi iff own D after the opponent's C.
CASES = {
    # (own, other, last_other): (game, deontological, utilitarian, game_deontological)
    ("C", "C", "C"): (3, 0, 6, 3),
    ("C", "C", "D"): (3, 0, 6, 3),
    ("C", "D", "C"): (0, 0, 4, 0),
    ("C", "D", "D"): (0, 0, 4, 0),
    ("D", "C", "C"): (4, -3, 4, 1),
    ("D", "C", "D"): (4, 0, 4, 4),
    ("D", "D", "C"): (1, -3, 2, -2),
    ("D", "D", "D"): (1, 0, 2, 1),
    ("C", "C", None): (3, 0, 6, 3),
    ("D", "D", None): (1, 0, 2, 1),  # a first step has no state
}
NAMES = ("game", "deontological", "utilitarian", "game_deontological")


@pytest.mark.parametrize(("case", "expected"), CASES.items(), ids=lambda c: "".join(map(str, c)))
def test_table_1(case: tuple, expected: tuple) -> None:
    step = Step(*case, game=PD)
    assert tuple(reward(name, step, PARAMS) for name in NAMES) == expected


@pytest.mark.parametrize(("other", "last_other"), list(itertools.product("CD", ["C", "D", None])))
def test_an_illegal_output_earns_r_illegal_under_every_reward(other: str, last_other: str | None) -> None:
    step = Step(None, other, last_other, PD)  # type: ignore[arg-type]
    assert {reward(name, step, PARAMS) for name in NAMES} == {-6.0}
    assert reward("utilitarian", step, RewardParams(illegal=-1.5)) == -1.5


def test_xi_is_a_parameter() -> None:
    step = Step("D", "C", "C", PD)
    assert reward("deontological", step, RewardParams(xi=5)) == -5
    assert reward("game_deontological", step, RewardParams(xi=5)) == -1


def test_schedules_switch_at_their_episode() -> None:
    unlearn = Schedule.parse("game, utilitarian@500")
    assert [unlearn.at(e) for e in (0, 499, 500, 999)] == ["game", "game", "utilitarian", "utilitarian"]
    assert Schedule.parse([(0, "deontological")]).at(10_000) == "deontological"
    with pytest.raises(ValueError, match="say when"):
        Schedule.parse("game,utilitarian")
    with pytest.raises(ValueError, match="starts at episode 0"):
        Schedule.parse([(5, "game")])
    with pytest.raises(KeyError, match="unknown reward 'kindness'"):
        Schedule.parse("kindness")
