"""The naming game (sandbox.population.games.naming.rules) against the theory's known behaviour."""

from __future__ import annotations

import numpy as np

from sandbox.population.games.naming.rules import Convergence, coordination_payoff, minimal_naming_game, tipping_share


def test_a_population_without_a_minority_reaches_one_convention() -> None:
    for seed in range(3):
        outcome = minimal_naming_game(60, np.random.default_rng(seed), horizon=200_000)
        assert outcome.consensus is not None and outcome.shares[-1] > 0.8


def test_a_committed_minority_flips_the_convention_above_the_tipping_share_only() -> None:
    # Xie et al. (2011): on a complete graph the tipping share is about 0.098
    below = [minimal_naming_game(400, np.random.default_rng(s), committed=20, horizon=100 * 400) for s in range(3)]
    assert all(o.consensus is None and o.shares[-1] < 0.2 for o in below)  # 5%: A holds
    above = [minimal_naming_game(400, np.random.default_rng(s), committed=80, horizon=100 * 400) for s in range(3)]
    assert all(o.consensus is not None and o.name == 1 for o in above)  # 20%: B takes over
    assert 0.05 < tipping_share(200, [0.03, 0.06, 0.09, 0.12, 0.15, 0.2], seeds=3, horizon_per_agent=100) <= 0.15


def test_coordination_payoffs_and_convergence() -> None:
    assert coordination_payoff("R", "R", 100, -50) == (100, 100)
    assert coordination_payoff("R", "Q", 100, -50) == (-50, -50)
    c = Convergence(agents=2)
    assert not any(c.update(True) for _ in range(5)) and c.update(True)  # 3N = 6 in a row
    assert not c.update(False)
