"""A population game from outside the package, registered by `SANDBOX_POPULATION_GAMES=tests.toy_population_game:GAME`
(as another distribution's entry point would): the public goods game under another kind, so that the conformance
test of the games (tests/test_population_games.py) is seen to play a game it was not written for."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from sandbox.population.conformance import GameCase
from sandbox.population.games.public_goods.conformance import CASE as PUBLIC_GOODS
from sandbox.population.games.public_goods.game import PublicGoodsGame
from sandbox.population.games.public_goods.spec import PublicGoodsSpec
from sandbox.population.registry import GameEntry


class ToySpec(PublicGoodsSpec):  # type: ignore[override]
    """The public goods game's settings, as another game's."""

    kind: Literal["toy_goods"]  # type: ignore[assignment]


class ToyGame(PublicGoodsGame):
    """The public goods game's plug-in, as another game's."""


CASE: GameCase = replace(
    PUBLIC_GOODS,
    block={**PUBLIC_GOODS.block, "game": {**PUBLIC_GOODS.block["game"], "kind": "toy_goods"}},
    bad=(({"agents": 10}, "not a multiple of game.group_size 4"),),
)

GAME = GameEntry(
    kind="toy_goods",
    title="A toy game registered from outside the package",
    spec="tests.toy_population_game:ToySpec",
    plugins={"game": "tests.toy_population_game:ToyGame"},
    conformance={"game": "tests.toy_population_game:CASE"},
    headline="mean_contribution",
)
