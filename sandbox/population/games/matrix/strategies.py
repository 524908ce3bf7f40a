"""Scripted strategies from the `axelrod` library, found by name, and the payoffs of their matches.

Importing `axelrod` costs 10 to 20 s of CPU (it instantiates every strategy to classify it), so what validation
and dry runs ask (is a name a strategy, its display name, whether it is stochastic) is read from a catalogue of the
installed version's strategies kept beside this module (`axelrod_strategies.json`, written by
`python -m sandbox.population.games.matrix.strategies`); only a run that plays imports the library, and it does so
through `import_axelrod` (about a third of the time; see there). Another installed version of axelrod than the
catalogue's is read from the library itself.

Within a generation every pair of neighbours plays a match of `turns` turns.
Two deterministic strategies always play the same match, so the payoffs are
computed once per pair of strategies (`MatchTable`) and looked up per edge;
a pair with a stochastic strategy plays each of its edges' matches with a
seed drawn from the run's seed tree.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import inspect
import json
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from typing_extensions import TypedDict

from sandbox.rules.matrix import MATRIX_GAMES, MOVES, PayoffTable

if TYPE_CHECKING:
    import axelrod as axl

__all__ = [
    "CATALOGUE",
    "Catalogue",
    "MatchTable",
    "Strategy",
    "axelrod_game",
    "canonical",
    "import_axelrod",
    "is_stochastic",
    "payoff_table",
    "strategy",
    "strategy_class",
    "strategy_names",
    "symmetric",
]


CATALOGUE = Path(__file__).with_name("axelrod_strategies.json")


@contextlib.contextmanager
def _sources_read_once() -> Iterator[None]:
    """`inspect.getsource` answering each function, class or module once (a bound method as its function), the same
    text or the same kind of error again, for as long as the block runs; then the library's own again."""
    read = inspect.getsource
    known: dict[Any, str | tuple[type[Exception], tuple[Any, ...]]] = {}

    def getsource(obj: Any) -> str:
        key = getattr(obj, "__func__", obj)
        if key not in known:
            try:
                known[key] = read(obj)
            except (OSError, TypeError) as error:  # what inspect raises for a class made at run time, or a builtin
                known[key] = (type(error), error.args)
        found = known[key]
        if isinstance(found, str):
            return found
        raise found[0](*found[1])

    setattr(inspect, "getsource", getsource)  # noqa: B010 (for the import's length; mypy types the module's own)
    try:
        yield
    finally:
        setattr(inspect, "getsource", read)  # noqa: B010


def import_axelrod() -> ModuleType:
    """The `axelrod` module, imported in about a third of its own time (9.5 s to 3.2 s of CPU on this project's
    machines).

    Importing axelrod 4 classifies every strategy and every transformed strategy by the match attributes its methods
    use (`axelrod.makes_use_of`), reading each method's source with `inspect.getsource`: about 14,800 reads of 38
    functions and classes, which re-tokenise the method or re-parse its whole file each time. Here the reads are
    kept for the import's length, so each is made once; the classifications are the same
    (`tests/test_population.py` compares them with a plain import's)."""
    if "axelrod" not in sys.modules:
        with _sources_read_once():
            import axelrod  # noqa: F401
    return sys.modules["axelrod"]


class Strategy(NamedTuple):
    """An axelrod strategy as the catalogue holds it: its display name, its class's name, and whether it draws random
    moves (axelrod's `stochastic` classifier of a default instance)."""

    name: str
    cls: str
    stochastic: bool


class Catalogue(TypedDict):
    """The catalogue (`axelrod_strategies.json`): the axelrod version it was read from, and each strategy as its
    display name, its class's name and whether it is stochastic."""

    axelrod: str
    strategies: list[list[str | bool]]  # [name, class name, stochastic], as JSON reads them back


def catalogue_from_axelrod() -> Catalogue:
    """The catalogue of the installed axelrod's strategies, read from the library (imports it)."""
    axl = import_axelrod()

    return {
        "axelrod": metadata.version("axelrod"),
        "strategies": [
            [cls.name, cls.__name__, bool(axl.Classifiers["stochastic"](cls()))] for cls in axl.all_strategies
        ],
    }


@functools.cache
def _catalogue() -> dict[str, Strategy]:
    """Every strategy by display name and by class name (the display name first, as axelrod lists them): from the
    catalogue when it is the installed version's, else from the library."""
    data = json.loads(CATALOGUE.read_text(encoding="utf-8")) if CATALOGUE.is_file() else {}
    if data.get("axelrod") != metadata.version("axelrod"):
        data = catalogue_from_axelrod()
    found: dict[str, Strategy] = {}
    for name, cls, stochastic in data["strategies"]:
        strategy = Strategy(name, cls, stochastic)
        found.setdefault(name, strategy)
        found.setdefault(cls, strategy)
    return found


def strategy_names() -> list[str]:
    """Every axelrod strategy's display name (`axl.TitForTat.name == "Tit For Tat"`)."""
    return sorted({s.name for s in _catalogue().values()})


def strategy(name: str) -> Strategy:
    """The catalogue's strategy called `name` (its display name or its class name); ValueError, with the closest
    names, for an unknown one. Does not import axelrod."""
    try:
        return _catalogue()[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_catalogue()), n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"unknown axelrod strategy {name!r}{hint}") from None


def strategy_class(name: str) -> type[axl.Player]:
    """The axelrod strategy class called `name` (its display name or its class name); imports axelrod."""
    return getattr(import_axelrod(), strategy(name).cls)


def canonical(name: str) -> str:
    """The display name of the strategy `name` names."""
    return strategy(name).name


def payoff_table(name: str, temptation: float | None = None) -> PayoffTable:
    """The 2x2 table a population plays: a registered matrix game or the weak prisoner's dilemma (T = b)."""
    if name == "weak_prisoners_dilemma":
        b = float(temptation if temptation is not None else 1.5)
        return PayoffTable.from_rows(name, [[[1, 1], [0, b]], [[b, 0], [0, 0]]])
    return MATRIX_GAMES.get(name)


def symmetric(table: PayoffTable) -> bool:
    """Whether both players face the same payoffs (what `axelrod.Game` describes)."""
    return all(table.payoffs(a, b) == table.payoffs(b, a)[::-1] for a in MOVES for b in MOVES)


def is_stochastic(name: str) -> bool:
    """Whether the strategy `name` draws random moves (axelrod's `stochastic` classifier)."""
    return strategy(name).stochastic


def axelrod_game(table: PayoffTable) -> axl.Game:
    """The table as an `axelrod.Game(r, s, t, p)`; a table that is not symmetric is refused."""
    axl = import_axelrod()
    if not symmetric(table):
        raise ValueError(f"game {table.name!r} is not symmetric; a population plays symmetric games")
    r, s = table.payoffs("C", "C")[0], table.payoffs("C", "D")[0]
    t, p = table.payoffs("D", "C")[0], table.payoffs("D", "D")[0]
    return axl.Game(r=r, s=s, t=t, p=p)


class MatchTable:
    """Payoffs and cooperation of `turns`-turn matches between the population's strategies.

    `payoff[i, j]` is what strategy i scores in total against strategy j, and
    `cooperation[i, j]` the share of i's moves that were C; both exact for two
    deterministic strategies (one match stands for all of them).
    """

    def __init__(self, names: list[str], table: PayoffTable, turns: int) -> None:

        self.names, self.turns, self.game = names, turns, axelrod_game(table)
        self.classes = [strategy_class(n) for n in names]
        self.stochastic = np.array([is_stochastic(n) for n in names])
        k = len(names)
        self.payoff = np.full((k, k), np.nan)
        self.cooperation = np.full((k, k), np.nan)
        for i in range(k):
            for j in range(k):
                if not (self.stochastic[i] or self.stochastic[j]):
                    self.payoff[i, j], self.cooperation[i, j], _, _ = self.play(i, j, seed=0)

    def play(self, i: int, j: int, seed: int) -> tuple[float, float, float, float]:
        """One match of strategy i against strategy j: i's total payoff and share of C moves, then j's."""
        axl = import_axelrod()
        match = axl.Match((self.classes[i](), self.classes[j]()), turns=self.turns, game=self.game, seed=seed)
        moves = match.play()
        scores = match.scores()
        own = sum(a for a, _ in scores), sum(b for _, b in scores)
        cooperated = [sum(1 for m in moves if m[side] == axl.Action.C) / len(moves) for side in (0, 1)]
        return float(own[0]), cooperated[0], float(own[1]), cooperated[1]


if __name__ == "__main__":  # rewrite the catalogue from the installed axelrod (after upgrading it)
    data = catalogue_from_axelrod()
    lines = ",\n".join(f"  {json.dumps(row)}" for row in data["strategies"])
    CATALOGUE.write_text(f'{{"axelrod": "{data["axelrod"]}", "strategies": [\n{lines}\n]}}\n', encoding="utf-8")
    print(f"{CATALOGUE}: {len(_catalogue.__wrapped__())} names")
