"""Scenario models: a whole experiment as strict pydantic models (read from YAML by `sandbox.scenario_file`).

A scenario holds a whole experiment: the society, the game, the models per
role, seeds and sizes. Every model forbids unknown fields, and every error
names the file and the field path (for example `society.norms[1].proportion`).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from sandbox.llm.embedded_tuning import EmbeddedSettings

Role = Literal["user", "assistant", "meta", "judge", "policy"]
ROLES: tuple[str, ...] = ("user", "assistant", "meta", "judge", "policy")


class StrictModel(BaseModel):
    """Base of every scenario model: unknown fields are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Sampling(StrictModel):
    """Sampling parameters sent with every call of a role."""

    temperature: float = Field(0.2, ge=0.0, le=2.0, description="Sampling temperature.")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    max_tokens: int = Field(96, ge=1, le=8192, description="Most new tokens per answer.")


class ModelConfig(StrictModel):
    """Which model plays a role, and how it samples."""

    spec: str = Field("embedded", description="Backend spec: embedded, openai:MODEL, hf:PATH, vllm:MODEL.")
    sampling: Sampling = Field(default_factory=Sampling)

    @field_validator("spec")
    @classmethod
    def _known_backend(cls, spec: str) -> str:
        from sandbox.llm.resolve import (
            check_spec,  # late import: the LLM layer imports this module
        )

        check_spec(spec)
        return spec


def _model_config_from_shorthand(value: Any) -> Any:
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
            return {key: _model_config_from_shorthand(value) for key, value in data.items()}
        return data


class NormShare(StrictModel):
    """A norm held by a share of the population: a library name, or any text with a label."""

    norm: str = Field(..., min_length=1, description="Library name (selfish, altruistic, fair) or a label.")
    text: str | None = Field(None, min_length=1, description="The norm's text, for a norm not in the library.")
    proportion: float = Field(..., ge=0.0, le=1.0, description="Share of the population holding it.")

    @model_validator(mode="after")
    def _resolvable(self) -> NormShare:
        from societies.norms import NORMS

        if self.text is None and self.norm not in NORMS:
            raise ValueError(
                f"unknown norm {self.norm!r} (library: {', '.join(NORMS.names())}); "
                "give `text:` to define a new one"
            )
        return self


class MannerShare(StrictModel):
    """A manner of speaking held by a share of the population."""

    manner: str = Field(..., min_length=1, description="Library name (neutral, rude, sycophantic) or a label.")
    text: str | None = Field(None, min_length=1, description="The manner's text, for one not in the library.")
    proportion: float = Field(..., ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _resolvable(self) -> MannerShare:
        from societies.manners import MANNERS

        if self.text is None and self.manner not in MANNERS:
            raise ValueError(
                f"unknown manner {self.manner!r} (library: {', '.join(MANNERS.names())}); "
                "give `text:` to define a new one"
            )
        return self


class Network(StrictModel):
    """The interaction network: who may meet whom."""

    kind: Literal["complete", "ring", "small_world", "edges"] = "complete"
    k: int = Field(4, ge=2, description="small_world: each node's nearest neighbours.")
    p: float = Field(0.1, ge=0.0, le=1.0, description="small_world: rewiring probability.")
    edges: list[tuple[int, int]] | None = Field(None, description="edges: the list of (agent, agent) pairs.")

    @model_validator(mode="after")
    def _edges_only_for_edges(self) -> Network:
        if self.kind == "edges" and not self.edges:
            raise ValueError("kind 'edges' needs a non-empty `edges` list")
        if self.kind != "edges" and self.edges is not None:
            raise ValueError(f"`edges` is only read when kind is 'edges', not {self.kind!r}")
        return self


class Matching(StrictModel):
    """How pairs are drawn along the network's edges each epoch."""

    kind: Literal["maximal", "random"] = Field(
        "maximal",
        description="maximal: rounds of random maximal matchings (each agent plays at most once a round); "
        "random: each interaction picks an edge at random.",
    )


def _check_proportions(items: list[Any], field: str) -> None:
    total = math.fsum(item.proportion for item in items)
    if not math.isclose(total, 1.0, abs_tol=1e-6):
        raise ValueError(f"{field} proportions add up to {total:g}, not 1")
    labels = [getattr(item, field.rstrip("s")) for item in items]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise ValueError(f"{field} named twice: {', '.join(duplicates)}")


class Society(StrictModel):
    """The population, its norms and manners by proportion, its network and matching."""

    size: int = Field(..., ge=2, le=1_000_000, description="Number of users.")
    norms: list[NormShare] = Field(..., min_length=1)
    manners: list[MannerShare] = Field(default_factory=lambda: [MannerShare(manner="neutral", proportion=1.0)])
    network: Network = Field(default_factory=Network)
    matching: Matching = Field(default_factory=Matching)

    @field_validator("norms", "manners")
    @classmethod
    def _proportions(cls, items: list[Any], info: Any) -> list[Any]:
        _check_proportions(items, info.field_name)
        return items

    @model_validator(mode="after")
    def _edges_inside(self) -> Society:
        if self.network.edges:
            for a, b in self.network.edges:
                for node in (a, b):
                    if not 0 <= node < self.size:
                        raise ValueError(f"network edge ({a}, {b}) names agent {node}, outside 0..{self.size - 1}")
                if a == b:
                    raise ValueError(f"network edge ({a}, {b}) joins an agent to itself")
        return self


class AmountRange(StrictModel):
    """The inclusive range the amount to split is drawn from."""

    min: int = Field(10, ge=1)
    max: int = Field(100, ge=1, le=1_000_000)

    @model_validator(mode="after")
    def _ordered(self) -> AmountRange:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is larger than max ({self.max})")
        return self


class UltimatumGame(StrictModel):
    """The ultimatum game: a proposer splits an amount, a responder accepts or rejects."""

    kind: Literal["ultimatum"] = "ultimatum"
    currencies: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=lambda: ["dollars", "apples"], min_length=1
    )
    amount: AmountRange = Field(default_factory=AmountRange)
    max_reasks: int = Field(1, ge=0, le=5, description="Times an unparseable answer is asked again.")


# A discriminated union on `kind`: matrix and dialogue games join it later.
Game = Annotated[Union[UltimatumGame], Field(discriminator="kind")]  # noqa: UP007


class InteractionMix(StrictModel):
    """The interactions of each SCAI epoch, by who meets whom.

    The paper's settings: 8 user-user + 1 assistant-proposer + 1
    assistant-responder, and 8 assistant-assistant + 1 + 1.
    """

    user_user: int = Field(8, ge=0, description="User-user interactions, drawn along the network.")
    assistant_proposer: int = Field(1, ge=0, description="The assistant proposes to a random user.")
    assistant_responder: int = Field(1, ge=0, description="A random user proposes to the assistant.")
    assistant_assistant: int = Field(0, ge=0, description="Two copies of the assistant play each other.")

    @model_validator(mode="after")
    def _some(self) -> InteractionMix:
        if self.total() == 0:
            raise ValueError("an epoch needs at least one interaction")
        return self

    def total(self) -> int:
        """Interactions per epoch."""
        return self.user_user + self.assistant_proposer + self.assistant_responder + self.assistant_assistant


class EvaluationCondition(StrictModel):
    """One generalisation condition: the assistant's final policy proposes under it."""

    name: str = Field(..., pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Label in tables and plots.")
    currency: str | None = Field(None, min_length=1, description="Currency; default: the game's currencies.")
    amount: AmountRange | int | None = Field(
        None, description="An amount or a range; default: the game's range. Up to 10^12."
    )
    reason: bool = Field(False, description="Ask the assistant for the reason of its proposal (Table A-1).")

    @field_validator("amount")
    @classmethod
    def _positive(cls, amount: Any) -> Any:
        if isinstance(amount, int) and not 1 <= amount <= 10**12:
            raise ValueError("an amount lies between 1 and 10^12")
        return amount


class Evaluation(StrictModel):
    """What `sandbox evaluate RUN_DIR` replays each run's final policy on."""

    trials: int = Field(4, ge=1, le=1000, description="Proposals per condition and run.")
    conditions: list[EvaluationCondition] = Field(
        default_factory=lambda: [
            EvaluationCondition(name="in-distribution"),
            EvaluationCondition(name="medicine", currency="grams of medicine"),
            EvaluationCondition(name="billions", amount=2_220_000_000),
        ],
        min_length=1,
    )

    @field_validator("conditions")
    @classmethod
    def _unique(cls, conditions: list[EvaluationCondition]) -> list[EvaluationCondition]:
        names = [c.name for c in conditions]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"condition names used twice: {', '.join(twice)}")
        return conditions


class Assistant(StrictModel):
    """Social Contract AI: an assistant whose policy a MetaLM rewrites after each epoch.

    The AssistantLM plays only from its current policy; the MetaLM reads the
    meta-principle, the observed interactions and the previous policy, and
    writes the next one. Defaults follow the paper (Appendix C).
    """

    initial_policy: str | None = Field(
        None, min_length=1, description="The first epoch's policy; default: drawn from `initial_policies`."
    )
    initial_policies: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, min_length=1, description="Policies the first one is drawn from per run (seeded); default: the library."
    )
    meta_principle: str | None = Field(
        None, min_length=1, description="The MetaLM's objective; default: the paper's (prompts/scai/meta_principle.j2)."
    )
    revision_instruction: str | None = Field(
        None, min_length=1, description="What the MetaLM is asked to write; default: the paper's (prompts/scai/revision.j2)."
    )
    history_epochs: int = Field(1, ge=0, description="Epochs of interactions the MetaLM reads: 1 = the last, 0 = all.")
    max_interactions: int = Field(
        40, ge=1, le=1000, description="Most interactions shown to the MetaLM (a seeded sample when more)."
    )
    max_reasks: int = Field(1, ge=0, le=5, description="Times an unusable policy is asked again.")
    digest: bool = Field(
        False,
        description="Show the MetaLM the numbers behind the interactions (mean share given away and acceptance, "
        "fixed against flex agents) before the previous policy; a scaffold for small models (the paper: off).",
    )
    interactions: InteractionMix = Field(default_factory=InteractionMix)
    evaluation: Evaluation = Field(default_factory=Evaluation)
    prompt: Literal["policy", "none"] = Field(
        "policy",
        description="policy: the assistant plays under its policy, which the MetaLM rewrites (SCAI); none: no policy "
        "and no system prompt, and no MetaLM (a distilled student, whose norm is in its weights: prompts/student/).",
    )
    answer: Literal["sentence", "number"] = Field(
        "sentence",
        description="prompt none: the student's answer form, sentence (the society's) or number (the amount it "
        "keeps, the tiny model's), handed to the society as its sentence.",
    )

    @model_validator(mode="after")
    def _one_start(self) -> Assistant:
        if self.initial_policy is not None and self.initial_policies is not None:
            raise ValueError("give initial_policy or initial_policies, not both")
        if self.prompt == "none" and (self.initial_policy is not None or self.initial_policies is not None):
            raise ValueError("prompt none plays with no policy; drop initial_policy and initial_policies")
        if self.answer == "number" and self.prompt != "none":
            raise ValueError("answer number is a distilled student's form: it needs prompt none")
        return self


class Scenario(StrictModel):
    """A whole experiment, as written in a scenario file."""

    name: str = Field(..., pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Used in run directory names.")
    description: str = ""
    seed: int = Field(0, ge=0, description="Root of the run's seed tree.")
    runs: int = Field(1, ge=1, le=1000, description="Independent runs.")
    epochs: int = Field(1, ge=1, le=10_000)
    interactions_per_epoch: int | None = Field(
        None, ge=1, description="Episodes per epoch; default: one maximal matching of the population."
    )
    concurrency: int = Field(8, ge=1, le=4096, description="Most LLM calls in flight at once.")
    models: Models = Field(default_factory=Models)
    embedded: EmbeddedSettings = Field(
        default_factory=EmbeddedSettings, description="Slots, threads and prompt cache of the embedded model."
    )
    society: Society
    game: Game = Field(default_factory=UltimatumGame)
    assistant: Assistant | None = Field(
        None, description="Social Contract AI: an assistant that learns the society's norms (omit for users only)."
    )

    @model_validator(mode="after")
    def _one_interaction_count(self) -> Scenario:
        if self.assistant is not None and self.interactions_per_epoch is not None:
            raise ValueError(
                "with an assistant, interactions per epoch come from assistant.interactions; "
                "remove interactions_per_epoch"
            )
        return self

    def roles(self) -> tuple[str, ...]:
        """The model roles this scenario calls."""
        return ("user", "assistant", "meta") if self.assistant is not None else ("user",)
