"""The society kind's scenario file: a society (`sandbox.scenario.SocietyScenario`) and SCAI's `assistant:` block.

With an assistant, the society graph gets SCAI's layer (`sandbox.scai.layer`)
and the game's stakes and rules default to the SCAI paper's protocol.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from sandbox.scai.config import Assistant
from sandbox.scenario import SocietyScenario

__all__ = ["SCAI_GAME_DEFAULTS", "Scenario"]

# The SCAI paper's protocol, the default of these game fields in a scenario with an assistant.
SCAI_GAME_DEFAULTS = {"stakes": "epoch", "rules": True}


class Scenario(SocietyScenario):
    """A whole society experiment, as written in a scenario file: users, and optionally SCAI's assistant."""

    assistant: Assistant | None = Field(
        None, description="Social Contract AI: an assistant that learns the society's norms (omit for users only)."
    )

    @model_validator(mode="before")
    @classmethod
    def _scai_protocol(cls, data: Any) -> Any:
        """With an assistant, the game's stakes and rules default to the SCAI paper's protocol."""
        if isinstance(data, dict) and data.get("assistant") is not None:
            game = data.get("game", {})
            if isinstance(game, dict) and game.get("kind", "ultimatum") == "ultimatum":
                data = {**data, "game": {"kind": "ultimatum", **SCAI_GAME_DEFAULTS, **game}}
        return data

    @model_validator(mode="after")
    def _one_interaction_count(self) -> Scenario:
        if self.assistant is not None and self.interactions_per_epoch is not None:
            raise ValueError(
                "with an assistant, interactions per epoch come from assistant.interactions; "
                "remove interactions_per_epoch"
            )
        return self

    @model_validator(mode="after")
    def _guided_game(self) -> Scenario:
        if self.society.guided is not None and self.society.guided.solve is not None:  # a file: read now
            from sandbox.scai.guided import guided_game

            guided_game(self)  # the inline game validates, and is the instructed ultimatum game
        return self

    def guided_policy(self, run_dir: Any, models: Any = None, ledgers: Any = (), hooks: Any = None) -> Any | None:
        """Where the guided members' solved policy is: `society.guided.policy`, or the inline game solved now into
        the run's `guided/` folder (`sandbox.scai.guided.solve_guided`)."""
        guided = self.society.guided
        if guided is None or guided.solve is None:
            return super().guided_policy(run_dir, models, ledgers, hooks)
        from sandbox.scai.guided import solve_guided

        return solve_guided(self, run_dir, models, ledgers, hooks)

    def roles(self) -> tuple[str, ...]:
        """The model roles this scenario calls."""
        return ("user", "assistant", "meta") if self.assistant is not None else ("user",)

    def graph_layer(self, models: dict[str, Any], on_policy: Any = None) -> Any | None:
        """SCAI's layer (the assistant and its MetaLM) when the scenario has an assistant; None otherwise."""
        if self.assistant is None:
            return None
        from sandbox.scai.layer import ScaiLayer

        return ScaiLayer.build(self, models, on_policy=on_policy)
