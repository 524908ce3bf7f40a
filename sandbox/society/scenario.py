"""The society scenario's models: users, norms, manners, network, game, models per role (strict pydantic).

A society scenario holds a whole society run: the society, the game, the
models per role, seeds and sizes (`SocietyScenario`; the society kind's file
model, with SCAI's `assistant:` block, is `sandbox.scai.scenario.Scenario`). Every model forbids unknown fields, and every error
names the file and the field path (for example `society.norms[1].proportion`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import (
    Field,
)

from sandbox.base.scenario_model import AmountRange, StrictModel
from sandbox.core.kinds import GivenModels, Ledgers
from sandbox.core.scenario import LLMScenario
from societies.society_block import Society


class UltimatumSettings(StrictModel):
    """The ultimatum game: a proposer splits an amount, a responder accepts or rejects."""

    kind: Literal["ultimatum"] = "ultimatum"
    currencies: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=lambda: ["dollars", "apples"], min_length=1
    )
    amount: AmountRange = Field(default_factory=AmountRange)
    max_reasks: int = Field(1, ge=0, le=5, description="Times an unparseable answer is asked again.")
    stakes: Literal["episode", "epoch", "run"] = Field(
        "episode",
        description="How often the amount and currency are drawn. episode: a new amount and currency for every "
        "episode; epoch: one currency per run and one amount per epoch, shared by every interaction of the epoch "
        "(the SCAI authors' protocol, the default in scenarios with an assistant); run: one of each per run.",
    )
    rules: bool = Field(
        False,
        description="State the game's rules (the responder accepts or rejects; a rejection pays nothing) in every "
        "player's system prompt, so the proposer knows them, as the SCAI paper's players did (the default in "
        "scenarios with an assistant); false: only the responder's question says what a rejection means.",
    )


# A discriminated union on `kind`: matrix and dialogue games join it later.
Game = Annotated[Union[UltimatumSettings], Field(discriminator="kind")]  # noqa: UP007


class SocietyScenario(LLMScenario):
    """A society run, as written in a scenario file: users of given norms and manners playing a game.

    The society kind's own model (`sandbox.scai.scenario.Scenario`) adds Social Contract AI's `assistant:`
    block; the engine (`sandbox.society.runner`, `sandbox.society.graph`) reads only these fields, `roles()` and
    `graph_layer()`.
    """

    runs: int = Field(1, ge=1, le=1000, description="Independent runs.")
    epochs: int = Field(1, ge=1, le=10_000)
    interactions_per_epoch: int | None = Field(
        None, ge=1, description="Episodes per epoch; default: one maximal matching of the population."
    )
    society: Society
    game: Game = Field(default_factory=UltimatumSettings)

    def roles(self) -> tuple[str, ...]:
        """The model roles this scenario calls."""
        return ("user",)

    def guided_policy(
        self, run_dir: Any, models: GivenModels = None, ledgers: Ledgers = (), hooks: Any = None
    ) -> Any | None:
        """Where the guided members' solved policy is (a `sandbox solve` run directory); None: no guided members.

        A society kind that solves the game inline (`society.guided.solve`) overrides this."""
        guided = self.society.guided
        if guided is None:
            return None
        if guided.policy is None:
            raise ValueError(
                "society.guided.solve: this scenario model cannot solve a game; give society.guided.policy"
            )
        return guided.policy

    def graph_layer(self, models: dict[str, Any], on_policy: Any = None) -> Any | None:
        """What this scenario adds to the society graph (a `sandbox.society.context.GraphLayer`), over the run's
        models per role; None: users only."""
        return None


def with_guided_paths(data: Any, folder: Any) -> Any:
    """A society file's data with `society.guided`'s relative paths made relative to `folder` (the file's), and a
    `solve:` file read in, so the run's stored scenario stands alone.

    Raises:
        ValueError: `(field, message)` in its args where a named file or directory is missing.
    """
    from pathlib import Path

    from sandbox.base.files import read_yaml

    guided = (
        data.get("society", {}).get("guided")
        if isinstance(data, dict) and isinstance(data.get("society"), dict)
        else None
    )
    if not isinstance(guided, dict):
        return data
    guided = dict(guided)
    if isinstance(guided.get("policy"), str):
        policy = Path(guided["policy"])
        policy = policy if policy.is_absolute() else Path(folder) / policy
        if not policy.exists():
            raise ValueError("society.guided.policy", f"{policy} does not exist")
        guided["policy"] = str(policy.resolve())
    if isinstance(guided.get("solve"), str):
        game = Path(guided["solve"])
        game = game if game.is_absolute() else Path(folder) / game
        if not game.is_file():
            raise ValueError("society.guided.solve", f"{game} is not a file")
        guided["solve"] = read_yaml(game)
    return {**data, "society": {**data["society"], "guided": guided}}
