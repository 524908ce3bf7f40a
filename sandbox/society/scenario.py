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
    field_validator,
    model_validator,
)

from sandbox.base.scenario_model import AmountRange, ScenarioModel, StrictModel
from sandbox.llm.budget import Budget, Price
from sandbox.llm.embedded_tuning import EmbeddedSettings
from societies.society_block import Society

Role = Literal["user", "assistant", "meta", "judge", "policy"]
ROLES: tuple[str, ...] = ("user", "assistant", "meta", "judge", "policy")


class Sampling(StrictModel):
    """Sampling parameters sent with every call of a role."""

    temperature: float = Field(0.2, ge=0.0, le=2.0, description="Sampling temperature.")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    max_tokens: int = Field(96, ge=1, le=8192, description="Most new tokens per answer.")


class ModelConfig(StrictModel):
    """Which model plays a role, and how it samples."""

    spec: str = Field(
        "embedded",
        description="Backend spec: embedded, openai:MODEL, openai:MODEL@URL1,URL2 (a pool "
        "of endpoints), hf:PATH, vllm:MODEL.",
    )
    sampling: Sampling = Field(default_factory=Sampling)
    price: Price | None = Field(None, description="US dollars per million tokens ({input, output}), for budget.usd.")

    @model_validator(mode="before")
    @classmethod
    def _endpoints(cls, data: Any) -> Any:
        """`endpoints: [URL1, URL2]` (with `spec: openai:MODEL`) is written into the spec: openai:MODEL@URL1,URL2."""
        if not isinstance(data, dict) or "endpoints" not in data:
            return data
        data = dict(data)
        urls = data.pop("endpoints")
        spec = str(data.get("spec", ""))
        if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
            raise ValueError(
                "endpoints is a list of base URLs, e.g. [http://10.0.0.1:8000/v1, http://10.0.0.2:8000/v1]"
            )
        if not spec.startswith("openai:") or "@" in spec:
            raise ValueError(f"endpoints go with spec: openai:MODEL (without @URLs), not {spec!r}")
        model, _, options = spec.partition("?")
        data["spec"] = f"{model}@{','.join(urls)}" + (f"?{options}" if options else "")
        return data

    @field_validator("spec")
    @classmethod
    def _known_backend(cls, spec: str) -> str:
        from sandbox.llm.resolve import (
            check_spec,  # late import: the LLM layer imports this module
        )

        check_spec(spec)
        return spec


def model_config_from_shorthand(value: Any) -> Any:
    return {"spec": value} if isinstance(value, str) else value


class Models(StrictModel):
    """Models per role. A role may be given as a bare spec string."""

    user: ModelConfig = Field(default_factory=ModelConfig)
    assistant: ModelConfig = Field(default_factory=ModelConfig)
    meta: ModelConfig = Field(default_factory=ModelConfig)
    judge: ModelConfig = Field(default_factory=ModelConfig)
    policy: ModelConfig = Field(default_factory=ModelConfig)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {key: model_config_from_shorthand(value) for key, value in data.items()}
        return data


class UltimatumGame(StrictModel):
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
Game = Annotated[Union[UltimatumGame], Field(discriminator="kind")]  # noqa: UP007


class SocietyScenario(ScenarioModel):
    """A society run, as written in a scenario file: users of given norms and manners playing a game.

    The society kind's own model (`sandbox.scai.scenario.Scenario`) adds Social Contract AI's `assistant:`
    block; the engine (`sandbox.society.runner`, `sandbox.society.graph`) reads only these fields, `roles()` and
    `graph_layer()`.
    """

    name: str = Field(..., pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Used in run directory names.")
    description: str = ""
    seed: int = Field(0, ge=0, description="Root of the run's seed tree.")
    runs: int = Field(1, ge=1, le=1000, description="Independent runs.")
    epochs: int = Field(1, ge=1, le=10_000)
    interactions_per_epoch: int | None = Field(
        None, ge=1, description="Episodes per epoch; default: one maximal matching of the population."
    )
    concurrency: int = Field(8, ge=1, le=4096, description="Most LLM calls in flight at once.")
    budget: Budget = Field(
        default_factory=Budget,
        description="Caps on the run's LLM calls, tokens and dollars; a run that reaches one stops, resumable.",
    )
    models: Models = Field(default_factory=Models)
    embedded: EmbeddedSettings = Field(
        default_factory=EmbeddedSettings, description="Slots, threads and prompt cache of the embedded model."
    )
    society: Society
    game: Game = Field(default_factory=UltimatumGame)

    def roles(self) -> tuple[str, ...]:
        """The model roles this scenario calls."""
        return ("user",)

    def guided_policy(self, run_dir: Any, models: Any = None, ledgers: Any = (), hooks: Any = None) -> Any | None:
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
