"""The population games as plug-ins of the one engine (`sandbox.engine.generations`): one module a game, each a
`PopulationGame` registered by `@plays(NAME)` under the name its settings give (`PopulationGameSpec.engine_game`).

`game_for(spec)` returns the class that plays `spec`, importing the module of the game's name from this package
when no class is registered under it yet (a game of another package registers itself when imported).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from sandbox.population.games.base import PopulationGame

__all__ = ["PopulationGame", "game_for", "plays"]

_GAMES: dict[str, type[PopulationGame]] = {}


def plays(name: str) -> Callable[[type[PopulationGame]], type[PopulationGame]]:
    """Class decorator: register a `PopulationGame` as the player of the games whose settings name `name`."""

    def register(cls: type[PopulationGame]) -> type[PopulationGame]:
        if name in _GAMES and _GAMES[name] is not cls:
            raise ValueError(f"population game {name!r} is registered twice ({_GAMES[name].__name__}, {cls.__name__})")
        _GAMES[name] = cls
        return cls

    return register


def game_for(spec: Any) -> type[PopulationGame]:
    """The class that plays the game of settings `spec` (a `PopulationGameSpec`)."""
    name = spec.engine_game()
    if name not in _GAMES:
        try:
            importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise
    if name not in _GAMES:
        raise KeyError(f"no population game is registered as {name!r} (registered: {', '.join(sorted(_GAMES))})")
    return _GAMES[name]
