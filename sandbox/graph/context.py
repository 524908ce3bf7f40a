"""What stays fixed while a society runs: scenario, populations, networks, players, hooks.

The context is rebuilt from the scenario on resume; only the state is checkpointed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents.contracts import UltimatumPlayer
from sandbox.scenario import Scenario
from societies.network import InteractionNetwork


def _ignore(*_: Any) -> None:
    return None


@dataclass
class SocietyContext:
    """The fixed inputs of every run of a scenario.

    Attributes:
        scenario: The validated scenario.
        players: Per run, the players by agent index.
        networks: Per run, the interaction network.
        on_epoch_start: Called with (run, epoch, episodes) when an epoch's pairs are drawn.
        on_episode: Called with each finished episode record.
    """

    scenario: Scenario
    players: dict[int, list[UltimatumPlayer]]
    networks: dict[int, InteractionNetwork]
    on_epoch_start: Callable[[int, int, int], None] = field(default=_ignore)
    on_episode: Callable[[dict[str, Any]], None] = field(default=_ignore)
