"""The implicit matrix-game prompt (Fig. 6), its answer parser, and the fixed-strategy opponents."""

from __future__ import annotations

import re

import numpy as np
import pytest

from agents.strategies import STRATEGIES, Random
from sandbox.rules.matrix import MATRIX_GAMES, MatrixStrategy
from sandbox.rules.matrix_prompt import (
    TEST_TOKENS,
    ActionTokens,
    matrix_prompt,
    parse_action,
)

PD = MATRIX_GAMES.get("prisoners_dilemma")
GAME_WORDS = re.compile(r"prisoner|dilemma|stag|hunt|chicken|bach|stravinsky|coordinat|cooperat|defect", re.I)


@pytest.mark.parametrize("name", MATRIX_GAMES.names())
def test_the_prompt_names_no_game_and_no_move_and_shows_the_table(name: str) -> None:
    game = MATRIX_GAMES.get(name)
    text = matrix_prompt(game, [("D", "C")], ActionTokens.of(TEST_TOKENS), np.random.default_rng(1))
    assert not GAME_WORDS.search(text)
    assert "action1" not in text and "action2" not in text  # the test tokens only
    (cc, cd), (dc, dd) = game.rows()
    row = lambda token, a, b: f"| {token} | {a[0]:g}, {a[1]:g} | {b[0]:g}, {b[1]:g} |"
    assert row("action3", cc, cd) in text and row("action4", dc, dd) in text
    own, other = game.payoffs("D", "C")
    assert (
        f"Last time, you played action4 and they played action3, so you got {own:g} points and A got {other:g}" in text
    )


def test_the_order_of_the_actions_is_drawn_per_prompt_and_seeded() -> None:
    def orders(seed: int) -> list[str]:
        rng = np.random.default_rng(seed)
        texts = [matrix_prompt(PD, [], ActionTokens(), rng) for _ in range(200)]
        return [re.search(r"choose either action (\w+) or action (\w+)", t).group(1) for t in texts]  # type: ignore[union-attr]

    first = orders(7)
    assert 60 < first.count("action1") < 140  # both orders, about half each
    assert orders(7) == first and orders(8) != first


def test_the_state_holds_the_configured_history() -> None:
    rng = np.random.default_rng(0)
    assert "You have not played with this opponent before." in matrix_prompt(PD, [], ActionTokens(), rng)
    three = matrix_prompt(PD, [("C", "C"), ("C", "D"), ("D", "D")], ActionTokens(), rng)
    assert "In the last 3 games" in three
    assert three.index("you played action1 and they played action2") < three.index(
        "you played action2 and they played action2"
    )


def test_tokens_are_configurable_and_can_be_reversed() -> None:
    tokens = ActionTokens("blue", "green")
    text = matrix_prompt(PD, [("C", "D")], tokens, np.random.default_rng(0))
    assert "you played blue and they played green, so you got 0 points" in text
    assert tokens.reversed().by_move() == {"C": "green", "D": "blue"}
    assert parse_action("green", tokens.reversed()) == "C"
    with pytest.raises(ValueError, match="must differ"):
        ActionTokens("a", "a")
    with pytest.raises(ValueError, match="one word"):
        ActionTokens("action 1", "action2")


@pytest.mark.parametrize(
    ("answer", "move"),
    [
        ("action1", "C"),
        (" action2\n", "D"),
        ("action2.", "D"),
        ("**action1**", "C"),
        ("action3", None),
        ("action1 action2", None),
        ("I choose action1", None),
        ("", None),
        ("Action1", None),
    ],
)
def test_an_answer_is_legal_only_if_it_is_one_token(answer: str, move: str | None) -> None:
    assert parse_action(answer, ActionTokens()) == move


@pytest.mark.parametrize("name", STRATEGIES.names())
def test_every_strategy_conforms(name: str) -> None:
    strategy = STRATEGIES.get(name)
    assert isinstance(strategy, MatrixStrategy) and strategy.name == name
    rng = np.random.default_rng(0)
    for opponent_last in ("C", "D", None):
        assert strategy.move(opponent_last, None, rng) in ("C", "D")


def test_the_fixed_strategies() -> None:
    rng = np.random.default_rng(0)
    tft = STRATEGIES.get("tit_for_tat")
    assert [tft.move(last, None, rng) for last in (None, "C", "D", "D", "C")] == ["C", "C", "D", "D", "C"]
    assert {STRATEGIES.get("always_cooperate").move(last, "D", rng) for last in "CD"} == {"C"}
    assert {STRATEGIES.get("always_defect").move(last, "C", rng) for last in "CD"} == {"D"}
    draws = [STRATEGIES.get("random").move("C", "C", np.random.default_rng(3)) for _ in range(3)]
    assert len(set(draws)) == 1  # seeded: the same generator state gives the same move
    many = [Random().move(None, None, rng) for _ in range(2000)]
    assert 0.45 < many.count("C") / 2000 < 0.55
    assert {Random(p_cooperate=1.0).move(None, None, rng) for _ in range(50)} == {"C"}
