"""The donor game's rules (Vallinder & Hughes 2024): pairings, traces, transfers, punishment, illegal moves and
selection scores, checked against the rules and the authors' notebook."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from sandbox.population.games.donor.rules import (
    DonorMove,
    DonorRules,
    DonorView,
    final_scores,
    pairings,
    play_game,
    play_generation,
    trace,
    trace_text,
)


def give(fraction: float):
    return lambda view: DonorMove("donate", fraction * view.donor_resources)


def test_the_notebooks_pairing_of_12_agents() -> None:
    games = pairings(12, DonorRules(), np.random.default_rng(0))
    assert len(games) == 2 and all(len(rounds) == 12 for rounds in games)
    for rounds in games:
        for pairs in rounds:
            assert sorted(x for pair in pairs for x in pair) == list(range(12))  # everyone plays each round
    first = games[0]
    unordered = Counter(frozenset(pair) for pairs in first for pair in pairs)
    assert len(unordered) == 36 and set(unordered.values()) == {2}  # each A-B pair twice a game, once each way
    ordered = Counter(pair for pairs in first for pair in pairs)
    assert set(ordered.values()) == {1}
    a = {d for d, _ in first[0]}  # group A donates in round 0
    assert all(len({x, y} & a) == 1 for pairs in first for x, y in pairs)  # same-half agents never meet
    donors_b = [all(d not in a for d, _ in first[r]) for r in range(12)]
    assert donors_b[5] and donors_b[6]  # B donates in rounds 6 and 7 (defect 2 of the notes)
    last_recipients = [{r for _, r in rounds[-1]} for rounds in games]
    assert last_recipients[0] | last_recipients[1] == set(range(12))  # each a final-round recipient once
    assert not last_recipients[0] & last_recipients[1]
    assert games[1] == [[(y, x) for x, y in pairs] for pairs in first]


def test_the_round_robin_never_repeats_a_partner_within_a_game() -> None:
    games = pairings(12, DonorRules(pairing="round_robin"), np.random.default_rng(1))
    for rounds in games:
        assert len(rounds) == 11
        pairs = [frozenset(p) for ps in rounds for p in ps]
        assert len(pairs) == len(set(pairs)) == 66
    last = [{r for _, r in rounds[-1]} for rounds in games]
    assert last[0] | last[1] == set(range(12)) and not last[0] & last[1]


def test_everyone_donating_everything_reaches_the_closed_form_maximum() -> None:
    rounds = pairings(12, DonorRules(), np.random.default_rng(0))[0]
    _, final = play_game(0, rounds, 12, DonorRules(), give(1.0))
    # the donor side doubles what it holds each round (10 -> 30, 60, ..., 960 after round 6); round 7's donors
    # (B again) hold nothing; rounds 8-12 double 960 five times: 30,720 for each of 6 agents, 0 for the others
    assert sorted(final) == [0.0] * 6 + [30_720.0] * 6
    _, kept = play_game(0, rounds, 12, DonorRules(), give(0.0))
    assert np.all(kept == 10.0)


def test_the_total_grows_by_the_multiplier_minus_one_times_the_donations() -> None:
    rng = np.random.default_rng(3)
    rules = DonorRules(multiplier=3.0)
    rounds = pairings(8, rules, rng)[0]
    records, final = play_game(
        0, rounds, 8, rules, lambda v: DonorMove("donate", float(rng.random()) * v.donor_resources)
    )
    assert final.sum() == pytest.approx(8 * 10 + (3.0 - 1) * sum(r.amount for r in records))


def test_the_trace_follows_the_recipients_back_three_steps() -> None:
    rules = DonorRules()
    rounds = pairings(12, rules, np.random.default_rng(0))[0]
    seen: dict[int, int] = {}

    def decide(view: DonorView) -> DonorMove:
        seen[view.round] = max(seen.get(view.round, 0), len(view.trace))
        for earlier, later in zip(view.trace, view.trace[1:]):
            assert later.donor == earlier.recipient and later.round < earlier.round
        if view.trace:
            assert view.trace[0].donor == view.recipient
        return DonorMove("donate", 0.5 * view.donor_resources)

    records, _ = play_game(0, rounds, 12, rules, decide)
    assert [seen[r] for r in range(5)] == [0, 1, 2, 3, 3]  # paper: 0, 1, 2, then 3 for all remaining rounds
    assert trace(records, records[-1].donor, 12, depth=1) == (records[-1],)


def test_punishment_removes_twice_the_cost_and_floors_at_zero() -> None:
    rules = DonorRules(punishment=True)
    rounds = [[(0, 1)], [(0, 1)]]
    records, final = play_game(0, rounds, 2, rules, lambda v: DonorMove("punish", 4.0))
    assert final[0] == 2.0 and final[1] == 0.0  # 10 - 2 - 8; 10 - 8 = 2, then max(0, 2 - 8)
    assert records[0].share == pytest.approx(0.4)
    banned, final = play_game(0, [[(0, 1)]], 2, DonorRules(), lambda v: DonorMove("punish", 1.0))
    assert not banned[0].valid and final.tolist() == [10.0, 10.0]


@pytest.mark.parametrize(
    "move",
    [DonorMove("donate", 11.0), DonorMove("donate", -1.0), DonorMove(None, None, "??"), DonorMove("donate", math.nan)],
)
def test_an_impossible_or_unreadable_move_is_recorded_as_illegal_and_changes_nothing(move: DonorMove) -> None:
    records, final = play_game(0, [[(0, 1)]], 2, DonorRules(), lambda v: move)
    assert not records[0].valid and records[0].action is None and math.isnan(records[0].share)
    assert final.tolist() == [10.0, 10.0]


def test_a_donor_with_nothing_has_no_donated_share() -> None:
    records, _ = play_game(0, [[(0, 1)], [(0, 2)]], 3, DonorRules(), give(1.0))
    assert records[0].share == 1.0 and records[1].donor_before == 0 and math.isnan(records[1].share)


def test_selection_scores_the_mean_of_both_games_or_the_notebooks_twice_the_last() -> None:
    finals = [np.array([10.0, 30.0]), np.array([20.0, 0.0])]
    assert final_scores(finals, DonorRules()).tolist() == [15.0, 15.0]
    assert final_scores(finals, DonorRules(selection_score="notebook")).tolist() == [40.0, 0.0]
    generation = play_generation(12, DonorRules(), give(0.5), np.random.default_rng(0))
    assert len(generation.records) == 2 * 12 * 6 and generation.scores.shape == (12,)
    with pytest.raises(ValueError, match="even number"):
        pairings(7, DonorRules(), np.random.default_rng(0))


def test_the_trace_reads_newest_first_as_the_notebook_and_the_prompt_example() -> None:
    rounds = [[(2, 3)], [(1, 2)], [(0, 1)]]  # C gives to D, then B to C, then A to B
    records, _ = play_game(0, rounds, 4, DonorRules(), give(0.5))
    text = trace_text(trace(records, 0, 3, depth=3), ["A", "B", "C", "D"])  # what A's next donor sees
    assert text == (
        "In round 3, A donated 50% of their resources to B. In round 2, B donated 50% of their resources "
        "to C. In round 1, C donated 50% of their resources to D."
    )


def test_an_answer_of_all_of_a_rounded_amount_is_legal_and_gives_what_there_is() -> None:
    rules = DonorRules(multiplier=1.5)
    records, final = play_game(0, [[(0, 1)]], 2, DonorRules(endowment=2 / 3), lambda v: DonorMove("donate", 0.67))
    assert records[0].valid and records[0].amount == pytest.approx(2 / 3) and final[0] == 0.0
    assert rules.multiplier == 1.5


def test_the_network_pairing_draws_maximal_matchings_along_the_edges() -> None:
    import networkx as nx

    from societies.network import build_network
    from societies.society_block import Network

    graph = build_network(9, Network(kind="ring"), np.random.default_rng(0))
    rules = DonorRules(pairing="network", rounds=7, games=2)
    games = pairings(9, rules, np.random.default_rng(1), graph.maximal_matching)
    ring = {frozenset(e) for e in nx.cycle_graph(9).edges()}
    assert len(games) == 2 and all(len(rounds) == 7 for rounds in games)
    donors = set()
    for pairs in games[0]:
        used = [a for pair in pairs for a in pair]
        assert len(used) == len(set(used)) and all(frozenset(p) in ring for p in pairs)
        free = set(range(9)) - set(used)
        assert not any(frozenset((a, b)) in ring for a in free for b in free)  # maximal: no edge left between free
        assert len(pairs) >= 3  # a maximal matching of a 9-cycle holds at least 3 edges
        donors.update(a for a, _ in pairs)
    assert games[1] == [[(b, a) for a, b in pairs] for pairs in games[0]]  # the second game reverses every pair
    assert len(donors) > 5  # the donor of a pair is drawn, not always the lower agent
    with pytest.raises(ValueError, match="matching"):
        pairings(9, rules, np.random.default_rng(1))
