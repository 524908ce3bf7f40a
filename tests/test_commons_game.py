"""GovSim's fishery (sandbox.population.games.commons.rules): the rules' invariants and figures."""

from __future__ import annotations

import numpy as np
import pytest

from sandbox.population.games.commons.rules import (
    CommonsRules,
    allocate,
    figures,
    parse_harvest,
    play,
    sustainable_catch,
)


def constant(catch: int):
    return lambda month, agent, stock: catch


def test_everyone_taking_the_sustainable_catch_survives_every_month() -> None:
    rules = CommonsRules()
    outcome = play(rules, lambda m, i, stock: sustainable_catch(stock, rules.agents), np.random.default_rng(0))
    assert len(outcome.months) == 12 and not any(m.collapsed for m in outcome.months)
    assert all(m.stock == 100 and m.left == 50 for m in outcome.months)  # 5 x 10 taken, 50 doubles back to 100
    f = figures(outcome)
    assert f["survival_months"] == 12 and f["total_gain"] == 600 and f["efficiency"] == 1.0
    assert f["equality"] == 1.0 and f["over_usage"] == 0.0


@pytest.mark.parametrize(("catch", "collapse_month"), [(11, 4), (12, 3), (15, 2), (20, 1)])
def test_greedier_fishers_collapse_in_the_month_the_rules_imply(catch: int, collapse_month: int) -> None:
    # 11 each: 100 -55-> 45 -> 90 -55-> 35 -> 70 -55-> 15 -> 30 -> asks 55 > 30: all 30 taken, 0 < 5: month 4.
    # 12 each: 100 -> 40 -> 80 -> 20 -> 40 -> 0: month 3. 15: 100 -> 25 -> 50 -> 0: month 2. 20: 100 -> 0: month 1.
    outcome = play(CommonsRules(), constant(catch), np.random.default_rng(0))
    assert [m.collapsed for m in outcome.months] == [False] * (collapse_month - 1) + [True]
    assert figures(outcome)["survival_months"] == collapse_month


def test_a_shortfall_is_shared_one_ton_at_a_time_or_in_proportion() -> None:
    rng = np.random.default_rng(3)
    caught = allocate([30, 10, 0, 20, 40], 50, "stochastic", rng)
    assert sum(caught) == 50 and all(0 <= c <= a for c, a in zip(caught, [30, 10, 0, 20, 40]))
    assert caught == allocate([30, 10, 0, 20, 40], 50, "stochastic", np.random.default_rng(3))  # seeded
    draws = np.array([allocate([40, 40], 40, "stochastic", np.random.default_rng(s)) for s in range(200)])
    assert abs(draws[:, 0].mean() - 20) < 1.0  # a fair ton-by-ton draw
    assert allocate([30, 10, 0, 20, 40], 50, "proportional", rng) == [15, 5, 0, 10, 20]
    assert sum(allocate([1, 1, 1], 2, "proportional", rng)) == 2
    assert allocate([3, 4], 10, "stochastic", rng) == [3, 4]  # asks that fit are granted


def test_figures_of_an_unequal_run_and_an_illegal_answer() -> None:
    outcome = play(CommonsRules(agents=2, months=2), lambda m, i, s: [30, 0][i], np.random.default_rng(0))
    f = figures(outcome)
    assert f["gains"] == [60, 0] and f["equality"] == pytest.approx(0.5)  # 1 - (60 + 60) / (2 * 2 * 60)
    assert f["over_usage"] == pytest.approx(0.5)  # agent 0 passes the sustainable (100 // 2) // 2 = 25 each month
    assert f["efficiency"] == pytest.approx(0.6)  # 1 - (2 * 50 - 60) / (2 * 50)
    illegal = play(CommonsRules(agents=2, months=1), lambda m, i, s: [None, 10][i], np.random.default_rng(0))
    assert illegal.months[0].asked == (None, 10) and illegal.months[0].caught == (0, 10)


def test_harvest_answers_are_read_as_govsim_wrote_them() -> None:
    assert parse_harvest("Step by step... Answer: 12 tons") == 12
    assert parse_harvest("Answer: **8** tons") == 8
    assert parse_harvest("Answer: about ten") is None and parse_harvest("12 tons") is None
