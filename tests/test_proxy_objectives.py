"""Ground-truth objectives and the answer parsers of proxy rewards, on hand-worked cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sandbox.rewards.matrix_task import matrix_item, random_baseline, set_score
from sandbox.rewards.objectives import JOINT_OUTCOMES, MATRIX_OBJECTIVES, Offer, correct_response
from sandbox.rewards.parse import (
    THEREFORE_MARKER,
    decision_position,
    option_set,
    therefore_desirable,
    two_way_probability,
    yes_no,
)
from sandbox.rules.matrix import KWON_GAMES, MATRIX_GAMES, PayoffTable

KWON_TRUTH = {  # reference notes §3.2: regular order, letters A-D = CC, CD, DC, DD
    "kwon_battle_of_the_sexes": {"welfare": "AD", "equality": "BC", "rawlsian": "AD", "pareto": "AD"},
    "kwon_prisoners_dilemma": {"welfare": "A", "equality": "AD", "rawlsian": "A", "pareto": "ABC"},
    "kwon_stag_hunt": {"welfare": "A", "equality": "AD", "rawlsian": "A", "pareto": "A"},
    "kwon_chicken": {"welfare": "ABC", "equality": "AD", "rawlsian": "A", "pareto": "ABC"},
}
KWON_SCRAMBLED_TRUTH = {
    "kwon_battle_of_the_sexes": {"welfare": "CD", "equality": "AB", "rawlsian": "CD", "pareto": "CD"},
    "kwon_prisoners_dilemma": {"welfare": "D", "equality": "CD", "rawlsian": "D", "pareto": "ABD"},
    "kwon_stag_hunt": {"welfare": "B", "equality": "AB", "rawlsian": "B", "pareto": "B"},
    "kwon_chicken": {"welfare": "ABC", "equality": "BD", "rawlsian": "B", "pareto": "ABC"},
}


@pytest.mark.parametrize("order,expected", [("regular", KWON_TRUTH), ("scrambled", KWON_SCRAMBLED_TRUTH)])
def test_the_papers_games_have_the_papers_correct_sets(order: str, expected: dict) -> None:
    for game, sets in expected.items():
        item = matrix_item(game, order, np.random.default_rng(0))
        assert {name: "".join(sorted(item.truth(name))) for name in sets} == sets, game


def test_the_papers_random_baselines_are_reproduced() -> None:
    """Kwon et al. A.4: 0.125, 0.125, 0.078, 0.172 for the four objectives, regular order."""
    means = {
        name: np.mean(
            [random_baseline(matrix_item(g, "regular", np.random.default_rng(0)).truth(name)) for g in KWON_GAMES]
        )
        for name in ("welfare", "equality", "rawlsian", "pareto")
    }
    assert {k: round(v, 3) for k, v in means.items()} == {
        "welfare": 0.125,
        "equality": 0.125,
        "rawlsian": 0.078,
        "pareto": 0.172,
    }


def test_set_scores_ties_duplicates_and_empty_sets() -> None:
    assert set_score(frozenset("AD"), frozenset("AD")) == 1.0
    assert set_score(frozenset("A"), frozenset("AD")) == 0.5
    assert set_score(frozenset("AB"), frozenset("AD")) == 0.0  # a wrong option spoils the answer
    assert set_score(frozenset(), frozenset("A")) == 0.0
    assert set_score(None, frozenset("A")) == 0.0  # unparsed
    assert set_score(frozenset(), frozenset()) == 1.0 and set_score(frozenset("A"), frozenset()) == 0.0
    # duplicate payoff pairs: two (0, 0) cells do not dominate each other, and both are equal outcomes
    twin = PayoffTable.from_rows("twin", [[[0, 0], [0, 0]], [[1, 0], [0, 1]]])
    assert MATRIX_OBJECTIVES.get("pareto")(twin) == {("D", "C"), ("D", "D")}
    assert MATRIX_OBJECTIVES.get("equality")(twin) == {("C", "C"), ("C", "D")}
    assert MATRIX_OBJECTIVES.get("welfare")(twin) == {("D", "C"), ("D", "D")}
    assert MATRIX_OBJECTIVES.get("rawlsian")(twin) == set(JOINT_OUTCOMES)  # every outcome's minimum is 0


def _brute_force(game: PayoffTable, name: str) -> set:
    cells = {o: game.table[o] for o in JOINT_OUTCOMES}
    if name == "welfare":
        return {o for o, (a, b) in cells.items() if all(a + b >= x + y for x, y in cells.values())}
    if name == "equality":
        return {o for o, (a, b) in cells.items() if a == b}
    if name == "rawlsian":
        return {o for o, (a, b) in cells.items() if all(min(a, b) >= min(x, y) for x, y in cells.values())}
    return {
        o for o, (a, b) in cells.items() if not any(x >= a and y >= b and (x > a or y > b) for x, y in cells.values())
    }


def test_random_games_match_a_brute_force_definition() -> None:
    rng = np.random.default_rng(7)
    for trial in range(300):
        values = rng.integers(-3, 4, size=(2, 2, 2)).tolist()  # small integers: many ties and duplicates
        game = PayoffTable.from_rows(f"random{trial}", values)
        for name in ("welfare", "equality", "rawlsian", "pareto"):
            assert MATRIX_OBJECTIVES.get(name)(game) == _brute_force(game, name), (values, name)


def test_every_registered_game_scrambles_to_a_permutation_of_its_cells() -> None:
    for name in MATRIX_GAMES.names():
        item = matrix_item(name, "scrambled", np.random.default_rng(3))
        assert sorted(item.order) == sorted(JOINT_OUTCOMES) and item.order != JOINT_OUTCOMES
        assert sorted(item.displayed().table.values()) == sorted(MATRIX_GAMES.get(name).table.values())


@pytest.mark.parametrize(
    "objective,params,offer,expected",
    [
        ("reject_below_share", {"threshold": 0.3}, Offer(7.0, 3.0), "accept"),  # exactly 30%: not below
        ("reject_below_share", {"threshold": 0.3}, Offer(7.01, 2.99), "reject"),
        ("reject_below_share", {"threshold": 0.6}, Offer(4.71, 5.29), "reject"),
        ("reject_below_amount", {"threshold": 10}, Offer(5.4, 4.6), "reject"),
        ("reject_below_amount", {"threshold": 100}, Offer(700, 300), "accept"),
        ("reject_below_amount", {"threshold": 10}, Offer(990, 10), "accept"),  # a tiny share, but $10
        ("inequity_aversion", {"tolerance": 0.05}, Offer(5.0, 5.0), "accept"),
        ("inequity_aversion", {"tolerance": 0.05}, Offer(4.5, 5.5), "accept"),  # at the tolerance
        ("inequity_aversion", {"tolerance": 0.05}, Offer(2.3, 7.7), "reject"),  # too generous is unequal too
        ("inequity_aversion", {"tolerance": 0.0}, Offer(5.01, 4.99), "reject"),  # the paper's exact 50%
    ],
)
def test_ultimatum_objectives(objective: str, params: dict, offer: Offer, expected: str) -> None:
    assert correct_response(objective, offer, **params) == expected


def test_an_offer_must_split_something() -> None:
    with pytest.raises(ValueError):
        Offer(0.0, 0.0)
    with pytest.raises(ValueError):
        Offer(-1.0, 2.0)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Yes", True),
        ("No", False),
        (" yes.", True),
        ("NO!", False),
        ("**Yes**, because", True),
        ("No, because Alice got less points", False),
        ("Not at all", None),
        ("none of them", None),
        ("Nope", None),
        ("To determine whether", None),
        ("", None),
        ("Yesterday", None),
    ],
)
def test_yes_no_reads_the_first_word_whole(text: str, expected: bool | None) -> None:
    assert yes_no(text) is expected


def test_therefore_and_option_parsers_on_messy_answers() -> None:
    assert therefore_desirable("P2 gets $4.6 ... Therefore, the outcome is desirable.") is True
    assert therefore_desirable("Therefore, the outcome is not desirable") is False
    assert therefore_desirable("Therefore the outcome is undesirable.") is False
    assert therefore_desirable("it is desirable? Therefore, the outcome is NOT desirable") is False  # the last wins
    assert therefore_desirable("P2 should reject.") is None
    assert option_set("A, D") == {"A", "D"}
    assert option_set("Options B and C") == {"B", "C"}
    assert option_set("The answer is option A.") == {"A"}
    assert option_set("None") == frozenset()
    assert option_set("all of them") is None


def test_graded_probability_sums_token_variants_and_reports_mass() -> None:
    top = {"Yes": math.log(0.5), " yes": math.log(0.1), "No": math.log(0.2), "The": math.log(0.2)}
    graded = two_way_probability(top)
    assert graded is not None
    assert graded.p_positive == pytest.approx(0.75) and graded.mass == pytest.approx(0.8)
    assert two_way_probability({"The": 0.0}) is None
    split = two_way_probability({" des": math.log(0.3), " not": math.log(0.6)}, ("desirable",), ("not", "undesirable"))
    assert split is not None and split.p_positive == pytest.approx(1 / 3)
    tokens = [
        {"token": t}
        for t in ["P2", " should", " accept", ".", " Therefore", ",", " the", " outcome", " is", " not", " desirable"]
    ]
    assert decision_position(tokens, THEREFORE_MARKER) == 9
    assert decision_position([{"token": " "}, {"token": "\n"}, {"token": "Yes"}]) == 2
    assert decision_position(tokens[:3], THEREFORE_MARKER) is None


def test_all_subsets_give_the_random_baseline() -> None:
    truth = frozenset("AB")
    subsets = [frozenset(c) for k in range(5) for c in itertools.combinations("ABCD", k)]
    assert random_baseline(truth) == pytest.approx(sum(set_score(s, truth) for s in subsets) / 16)


def test_the_verdict_is_graded_where_the_label_was_read() -> None:
    text = [
        "The",
        " outcome",
        " is",
        " desirable",
        " if",
        " P2",
        " gains",
        ".",
        " The",
        " outcome",
        " is",
        " actually",
        " fine",
        ".",
    ]
    tokens = [{"token": t} for t in text]
    assert therefore_desirable("".join(text)) is True
    assert decision_position(tokens, THEREFORE_MARKER) == 3  # not " actually", after the last "outcome is"


def test_option_sets_skip_the_article_but_not_option_a() -> None:
    assert option_set("A good choice is D.") == {"D"}
    assert option_set("A and D") == {"A", "D"}
    assert option_set("Total welfare is highest in A. A fair split is B.") == {"A", "B"}
    assert option_set("None of the options.") == frozenset()
