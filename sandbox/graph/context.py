"""What stays fixed while a society runs: scenario, populations, networks, players, models, hooks.

The context is rebuilt from the scenario on resume; only the state is checkpointed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel

from agents.assistant import PolicyFollowingAssistant
from agents.contracts import UltimatumPlayer
from agents.meta import MetaLM
from agents.student import PolicylessAssistant
from sandbox.scenario import Scenario
from societies.network import InteractionNetwork

# The assistant's agent id; two copies that meet are `assistant-0` and `assistant-1`.
ASSISTANT = "assistant"


def _ignore(*_: Any) -> None:
    return None


@dataclass
class SocietyContext:
    """The fixed inputs of every run of a scenario.

    Attributes:
        scenario: The validated scenario.
        players: Per run, the users by agent index.
        networks: Per run, the interaction network.
        assistant_model: The assistant role's model (SCAI only).
        meta: The MetaLM (SCAI only).
        on_epoch_start: Called with (run, epoch, episodes) when an epoch's pairs are drawn.
        on_episode: Called with each finished episode record.
        on_policy: Called with each policy record the meta node writes.
    """

    scenario: Scenario
    players: dict[int, list[UltimatumPlayer]]
    networks: dict[int, InteractionNetwork]
    assistant_model: BaseChatModel | None = None
    meta: MetaLM | None = None
    on_epoch_start: Callable[[int, int, int], None] = field(default=_ignore)
    on_episode: Callable[[dict[str, Any]], None] = field(default=_ignore)
    on_policy: Callable[[dict[str, Any]], None] = field(default=_ignore)

    def player(self, task: dict[str, Any], who: int | str) -> UltimatumPlayer:
        """The player `who` of an episode task: a user by index, or the assistant under the task's policy."""
        if isinstance(who, int):
            return self.players[task["run"]][who]
        if self.assistant_model is None or "policy" not in task:
            raise ValueError(f"episode task names {who!r} but the scenario has no assistant")
        config = self.scenario.assistant
        if config is not None and config.prompt == "none":
            return PolicylessAssistant(model=self.assistant_model, form=config.answer, agent_id=who)
        return PolicyFollowingAssistant(policy=task["policy"], model=self.assistant_model, agent_id=who)
