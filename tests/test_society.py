"""Populations (exact counts, seeded), networks, and matching along edges."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from sandbox.core.scenario_files import parse_scenario
from societies.network import build_network, match
from societies.population import build_population, largest_remainder_counts
from societies.society_block import Matching, Network


@pytest.mark.parametrize(
    ("proportions", "total", "counts"),
    [
        ([0.5, 0.5], 10, [5, 5]),
        ([1 / 3, 1 / 3, 1 / 3], 10, [4, 3, 3]),
        ([0.8, 0.2], 7, [6, 1]),
        ([0.45, 0.45, 0.1], 3, [2, 1, 0]),
        ([0.2, 0.3, 0.5], 0, [0, 0, 0]),
    ],
)
def test_largest_remainder(proportions: list[float], total: int, counts: list[int]) -> None:
    assert largest_remainder_counts(proportions, total) == counts


def test_largest_remainder_is_within_one_of_quota() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        weights = rng.random(rng.integers(1, 6))
        proportions = weights / weights.sum()
        total = int(rng.integers(0, 500))
        counts = largest_remainder_counts(list(proportions), total)
        assert sum(counts) == total
        assert all(abs(c - p * total) < 1 for c, p in zip(counts, proportions))


def society(size: int = 10, **extra: object) -> object:
    data = {
        "name": "s",
        "society": {
            "size": size,
            "norms": [{"norm": "selfish", "proportion": 0.7}, {"norm": "altruistic", "proportion": 0.3}],
            "manners": [{"manner": "rude", "proportion": 0.5}, {"manner": "sycophantic", "proportion": 0.5}],
            **extra,
        },
    }
    return parse_scenario(data).society


def test_population_counts_are_exact_and_seeded() -> None:
    spec = society(10)
    users = build_population(spec, np.random.default_rng(1))
    assert Counter(u.norm.name for u in users) == {"selfish": 7, "altruistic": 3}
    assert Counter(u.manner.name for u in users) == {"rude": 5, "sycophantic": 5}
    again = build_population(spec, np.random.default_rng(1))
    other = build_population(spec, np.random.default_rng(2))
    assert [u.norm.name for u in users] == [u.norm.name for u in again]
    assert [(u.norm.name, u.manner.name) for u in users] != [(u.norm.name, u.manner.name) for u in other]


def test_custom_norm_text_reaches_the_user() -> None:
    data = {
        "name": "s",
        "society": {"size": 4, "norms": [{"norm": "kind", "text": "Be kind.", "proportion": 1.0}]},
    }
    users = build_population(parse_scenario(data).society, np.random.default_rng(0))
    assert {u.norm.text for u in users} == {"Be kind."}


def check_pairs(pairs: list, allowed: set[frozenset[int]] | None, size: int) -> None:
    for pair in pairs:
        assert pair.first != pair.second
        assert 0 <= pair.first < size and 0 <= pair.second < size
        if allowed is not None:
            assert frozenset((pair.first, pair.second)) in allowed


def test_maximal_matching_on_complete_network() -> None:
    network = build_network(11, Network(), np.random.default_rng(0))
    assert network.is_complete
    pairs = match(network, Matching(kind="maximal"), None, np.random.default_rng(0))
    assert len(pairs) == 5
    agents = [a for p in pairs for a in (p.first, p.second)]
    assert len(set(agents)) == 10
    check_pairs(pairs, None, 11)


def test_matching_follows_ring_edges() -> None:
    size = 12
    network = build_network(size, Network(kind="ring"), np.random.default_rng(0))
    allowed = {frozenset((i, (i + 1) % size)) for i in range(size)}
    for seed in range(5):
        pairs = match(network, Matching(kind="maximal"), None, np.random.default_rng(seed))
        check_pairs(pairs, allowed, size)
        agents = [a for p in pairs for a in (p.first, p.second)]
        assert len(agents) == len(set(agents))
        # maximal: no edge left whose two ends are both free
        free = set(range(size)) - set(agents)
        assert not any(frozenset((i, (i + 1) % size)) <= free for i in free)


def test_matching_rounds_reach_the_requested_count() -> None:
    network = build_network(6, Network(kind="ring"), np.random.default_rng(0))
    pairs = match(network, Matching(kind="maximal"), 20, np.random.default_rng(0))
    assert len(pairs) == 20
    random_pairs = match(network, Matching(kind="random"), 30, np.random.default_rng(0))
    assert len(random_pairs) == 30
    check_pairs(random_pairs, {frozenset((i, (i + 1) % 6)) for i in range(6)}, 6)


def test_edge_list_and_small_world() -> None:
    edges = Network(kind="edges", edges=[(0, 1), (2, 3)])
    network = build_network(4, edges, np.random.default_rng(0))
    pairs = match(network, Matching(), None, np.random.default_rng(0))
    assert sorted(frozenset((p.first, p.second)) for p in pairs) == sorted([frozenset((0, 1)), frozenset((2, 3))])
    small = build_network(30, Network(kind="small_world", k=4, p=0.2), np.random.default_rng(0))
    assert small.to_networkx().number_of_edges() == 60


def test_orientation_is_random_but_seeded() -> None:
    network = build_network(100, Network(), np.random.default_rng(0))
    a = match(network, Matching(), None, np.random.default_rng(5))
    b = match(network, Matching(), None, np.random.default_rng(5))
    assert a == b
    firsts = sum(p.first < p.second for p in a)
    assert 10 < firsts < 40


def test_complete_network_of_ten_thousand_is_not_materialised() -> None:
    network = build_network(10_000, Network(), np.random.default_rng(0))
    assert network.graph is None
    assert len(match(network, Matching(), None, np.random.default_rng(0))) == 5000
