"""What stays fixed while a society runs: scenario, populations, networks, players, models, hooks.

The context is rebuilt from the scenario on resume; only the state is checkpointed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from langgraph.graph import StateGraph

from sandbox.rules.ultimatum import UltimatumPlayer
from sandbox.society.scenario import SocietyScenario
from societies.network import InteractionNetwork


def _ignore(*_: Any) -> None:
    return None


class GraphLayer(Protocol):
    """What a scenario adds to the society graph beyond users playing each other (SCAI's assistant is one).

    The engine calls these and knows nothing else of the layer.
    """

    name: str  # its section of summary.json
    state: type  # the graph's state: SocietyState and the layer's own keys

    def add_nodes(self, builder: StateGraph) -> None:
        """Add the layer's nodes, the edge from START and the router after `score`."""

    def user_pairs(self) -> int | None:
        """User-user episodes per epoch (None: one maximal matching), instead of the scenario's count."""

    def pairs(self, run: int, rng: Any) -> list[tuple[int | str, int | str, str]]:
        """The epoch's pairs beyond users' (proposer, responder, interaction), drawn after theirs from `rng`."""

    def episodes_per_epoch(self) -> int:
        """Episodes an epoch plays, for progress bars."""

    def profiles(self) -> dict[str, dict[str, str]]:
        """Profiles (norm, manner) of the players the layer adds, by agent id."""

    def listed(self, agent: str) -> bool:
        """Whether an added agent gets a row of `agents.csv`."""

    def finished(self, state: dict[str, Any]) -> bool:
        """Whether a run whose epochs are all played has nothing of the layer's left to do (resume asks)."""

    def finalize(self, run_dir: Any, episodes: Any, states: list[dict[str, Any]]) -> dict[str, Any]:
        """Write the layer's tables when the run ends; return the summary's section `name`."""

    def task_fields(self, state: dict[str, Any]) -> dict[str, Any]:
        """Fields every episode task of the coming epoch carries (SCAI: the policy played)."""

    def player(self, task: dict[str, Any], who: str) -> UltimatumPlayer:
        """The non-user player `who` of an episode task."""


@dataclass
class SocietyContext:
    """The fixed inputs of every run of a scenario.

    Attributes:
        scenario: The validated scenario.
        players: Per run, the users by agent index.
        networks: Per run, the interaction network.
        layer: What the scenario adds to the graph (SCAI's assistant and MetaLM), or None.
        on_epoch_start: Called with (run, epoch, episodes) when an epoch's pairs are drawn.
        on_episode: Called with each finished episode record.
        profiles: Per run, agent id -> {"norm", "manner"}: stamped on each episode as it is played, so that a fork
            that changes the users' norms from an epoch on leaves the earlier epochs' rows as they were played.
    """

    scenario: SocietyScenario
    players: dict[int, list[UltimatumPlayer]]
    networks: dict[int, InteractionNetwork]
    layer: Any | None = None  # a GraphLayer
    on_epoch_start: Callable[[int, int, int], None] = field(default=_ignore)
    on_episode: Callable[[dict[str, Any]], None] = field(default=_ignore)
    profiles: dict[int, dict[str, dict[str, str]]] = field(default_factory=dict)

    def player(self, task: dict[str, Any], who: int | str) -> UltimatumPlayer:
        """The player `who` of an episode task: a user by index, or one the layer adds."""
        if isinstance(who, int):
            return self.players[task["run"]][who]
        if self.layer is None:
            raise ValueError(f"episode task names {who!r} but the scenario adds no players to its users")
        return self.layer.player(task, who)
