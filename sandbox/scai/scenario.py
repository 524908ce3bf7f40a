"""The society kind's scenario file: a society (`sandbox.society.scenario.SocietyScenario`) and SCAI's `assistant:` block.

With an assistant, the society graph gets SCAI's layer (`sandbox.scai.layer`)
and the game's stakes and rules default to the SCAI paper's protocol.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, ValidationError, model_validator

from sandbox.core.kinds import GivenModels, Ledgers
from sandbox.scai.assistant_block import Assistant
from sandbox.society.scenario import SocietyScenario

if TYPE_CHECKING:
    from sandbox.dialogue.scenario import DialogueScenario

__all__ = ["SCAI_GAME_DEFAULTS", "Scenario", "guided_game"]

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
            guided_game(self)  # the inline game validates, and is the instructed ultimatum game
        return self

    def guided_policy(
        self, run_dir: Any, models: GivenModels = None, ledgers: Ledgers = (), hooks: Any = None
    ) -> Any | None:
        """Where the guided members' solved policy is: `society.guided.policy`, or the inline game solved now into
        the run's `guided/` folder (`sandbox.scai.inline_solve.solve_guided`)."""
        guided = self.society.guided
        if guided is None or guided.solve is None:
            return super().guided_policy(run_dir, models, ledgers, hooks)
        from sandbox.scai.inline_solve import solve_guided

        return solve_guided(guided_game(self), run_dir, models, ledgers, hooks)

    def roles(self) -> tuple[str, ...]:
        """The model roles this scenario calls."""
        return ("user", "assistant", "meta") if self.assistant is not None else ("user",)

    def graph_layer(self, models: dict[str, Any], on_policy: Any = None) -> Any | None:
        """SCAI's layer (the assistant and its MetaLM) when the scenario has an assistant; None otherwise."""
        if self.assistant is None:
            return None
        from sandbox.scai.layer import ScaiLayer

        return ScaiLayer.build(self, models, on_policy=on_policy)


def guided_game(scenario: SocietyScenario) -> DialogueScenario:
    """The dialogue scenario of `society.guided.solve`, its players and judge the society's user model unless set.

    Raises:
        ValueError: the game does not validate, or is not the instructed ultimatum game (the message names the
            field under `society.guided.solve`).
    """
    from sandbox.base.files import read_yaml
    from sandbox.core.scenario_files import scenario_problems
    from sandbox.dialogue.scenario import DialogueScenario

    block = scenario.society.guided
    assert block is not None and block.solve is not None
    if isinstance(block.solve, str) and not Path(block.solve).is_file():
        raise ValueError(f"society.guided.solve: {block.solve} is not a file")
    data = read_yaml(Path(block.solve)) if isinstance(block.solve, str) else block.solve
    try:
        game = DialogueScenario.model_validate(data)
    except ValidationError as error:
        field, message = scenario_problems(error, DialogueScenario)[0]
        raise ValueError(f"society.guided.solve.{field}: {message}") from None
    if game.dialogue.domain.kind != "ultimatum" or len(game.dialogue.players) != 2:
        raise ValueError(
            "society.guided.solve.dialogue.domain.kind: guided members play the instructed ultimatum "
            f"game of two players, not {game.dialogue.domain.kind!r}"
        )
    if block.play == "any" and not all("any" in role for role in game.dialogue.instructions):
        raise ValueError(
            "society.guided.play: any plays the baseline style, and the game's instructions have no "
            '"any" for each role'
        )
    if isinstance(data, dict) and "models" not in data:
        user = scenario.models.user.spec
        models = game.models.model_copy(
            update={
                "players": game.models.players.model_copy(update={"spec": user}),
                "judge": game.models.judge.model_copy(update={"spec": user}),
            }
        )
        game = game.model_copy(update={"models": models})
    return game
