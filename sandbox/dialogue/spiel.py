"""The OpenSpiel binding: an expanded dialogue tree as a pyspiel game, so that OpenSpiel's C++ solvers run on it.

`DialogueSpielGame(tree)` is a Python game (OpenSpiel's Python game API);
its states walk the already expanded `Tree` and never call a model. It is
registered as `sandbox_dialogue`, so `pyspiel.load_game("sandbox_dialogue",
{"tree": key})` loads a tree put with `register_tree`. Solve it through
`pyspiel.convert_to_cached_tree` (C++ CFR walks that cache, not the Python
states).
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any

import pyspiel

from sandbox.dialogue.expand import Tree

SHORT_NAME = "sandbox_dialogue"
_MAX_PLAYERS = 10

# Trees by key, held weakly (a game holds its tree; PSRO makes many): states hold only a key and a node id, so
# cloning one is cheap.
_TREES: weakref.WeakValueDictionary[str, Tree] = weakref.WeakValueDictionary()
_LOCK = threading.Lock()
_KEYS = itertools.count()


def register_tree(tree: Tree) -> str:
    """Make `tree` loadable by `pyspiel.load_game(SHORT_NAME, {"tree": key})` while it lives; returns the key."""
    with _LOCK:
        key = f"tree-{next(_KEYS)}"
        _TREES[key] = tree
    return key


def _game_type(zero_sum: bool) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=SHORT_NAME,
        long_name="Sandbox dialogue game",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=_MAX_PLAYERS,
        min_num_players=1,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=False,
        provides_observation_tensor=False,
        parameter_specification={"tree": ""},
    )


class DialogueSpielGame(pyspiel.Game):
    """A pyspiel game over an expanded dialogue tree."""

    def __init__(self, params: dict[str, Any] | None = None, *, tree: Tree | None = None) -> None:
        if tree is None:
            key = (params or {}).get("tree", "")
            if key not in _TREES:
                raise ValueError(f"no dialogue tree registered as {key!r}; call register_tree(tree) first")
            tree = _TREES[key]
            params = {"tree": key}
        else:
            params = {"tree": register_tree(tree)}
        game = tree.game
        payoffs = [p for node in tree.terminals() for p in node.outcome.payoffs]  # type: ignore[union-attr]
        low, high = (min(payoffs), max(payoffs)) if payoffs else (0.0, 0.0)
        info = pyspiel.GameInfo(
            num_distinct_actions=max(len(own) for own in game.instructions),
            max_chance_outcomes=max(len(game.setups), len(game.seeds)),
            num_players=game.num_players,
            min_utility=float(low),
            max_utility=float(high) if high > low else float(low) + 1.0,
            utility_sum=0.0 if game.domain.zero_sum else None,
            max_game_length=game.max_messages,
        )
        super().__init__(_game_type(game.domain.zero_sum), info, params)
        self.tree = tree
        self.key = params["tree"]

    def new_initial_state(self) -> DialogueState:
        return DialogueState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> DialogueObserver:
        if iig_obs_type is not None and not iig_obs_type.perfect_recall:
            raise ValueError("dialogue games provide information states only (perfect recall)")
        return DialogueObserver(self.key)


class DialogueState(pyspiel.State):
    """A position in the tree: its node id (the history is pyspiel's own)."""

    def __init__(self, game: DialogueSpielGame) -> None:
        super().__init__(game)
        self._key = game.key
        self._node = 0

    @property
    def node(self) -> Any:
        return _TREES[self._key].nodes[self._node]

    def current_player(self) -> int:
        node = self.node
        if node.kind == "terminal":
            return pyspiel.PlayerId.TERMINAL
        if node.kind == "chance":
            return pyspiel.PlayerId.CHANCE
        return node.player

    def _legal_actions(self, player: int) -> list[int]:
        return list(range(len(self.node.children)))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        count = len(self.node.children)
        return [(k, 1.0 / count) for k in range(count)]

    def _apply_action(self, action: int) -> None:
        self._node = self.node.children[action]

    def _action_to_string(self, player: int, action: int) -> str:
        node = self.node
        tree = _TREES[self._key]
        if node.kind == "chance":
            return f"setup {action}" if node.id == 0 else f"seed {action}"
        return tree.game.choices(node.dialogue, player)[action]

    def is_terminal(self) -> bool:
        return self.node.kind == "terminal"

    def returns(self) -> list[float]:
        node = self.node
        if node.kind != "terminal":
            return [0.0] * _TREES[self._key].game.num_players
        return [float(p) for p in node.outcome.payoffs]

    def __str__(self) -> str:
        node = self.node
        return "\n".join(f"{m.speaker}[{m.instruction}]: {m.text}" for m in node.dialogue) or f"node {node.id}"


class DialogueObserver:
    """Information states as strings (`DialogueGame.infostate`); no tensors."""

    def __init__(self, key: str) -> None:
        self._key = key
        self.tensor = None
        self.dict: dict[str, Any] = {}

    def set_from(self, state: DialogueState, player: int) -> None:
        pass

    def string_from(self, state: DialogueState, player: int) -> str:
        node = state.node
        return _TREES[self._key].game.infostate(node.setup, node.dialogue, player)


pyspiel.register_game(_game_type(False), DialogueSpielGame)
