"""Social Contract AI's part of a scenario: the `assistant:` block, and `ScaiScenario`, the society scenario with that
block as SCAI's runtime (its layer, nodes, finalizer and inline solve) reads it.

The runtime is typed on `ScaiScenario`, not on the file model `sandbox.scai.scenario.Scenario`, so that the model,
whose hooks build the runtime (`Scenario.graph_layer`, `Scenario.guided_policy`), is imported by nothing it imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol

from pydantic import Field, field_validator, model_validator

from sandbox.base.scenario_model import AmountRange, StrictModel

if TYPE_CHECKING:
    from sandbox.core.scenario import Models
    from sandbox.society.scenario import Game
    from societies.society_block import Society


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
    prior: str | None = Field(
        None,
        min_length=1,
        description='A prior stated at test time, before the learned principle: "Before even playing the game, '
        "your prior was that you must <prior> ...\" (the SCAI authors' generalisation test, Fig. 3b); none: no prior.",
    )
    learned_on: bool = Field(
        False,
        description="After the principle, say what it was learned on (the training currencies and amounts) and ask "
        "the assistant to consider how relevant it is here, as the authors' test did.",
    )
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


class RevisionStrategy(StrictModel):
    """How the MetaLM's policy for the next epoch is chosen (`assistant.revision`).

    single (the paper's): one draw from the MetaLM is the next policy.
    search: K draws (at `temperature`) and the current policy are each replayed
    by a fresh, memoryless assistant on the epoch's observed stakes and user
    proposals; the one whose offers and answers are closest to the users' is
    kept (`select: best`, ties to the current policy), or drawn with
    probability proportional to exp(-distance / tau) (`select: softmax`, the
    paper's posterior-sampling reading of a MetaLM draw, reweighted by how
    well it explains the users). Best-of-K selection by a score on replayed
    behaviour follows OPRO (Yang et al. 2023) and APO (Pryzant et al. 2023);
    a small model's proposals alone rarely improve (Zhang et al. 2024,
    "Revisiting OPRO").
    """

    strategy: Literal["single", "search"] = Field("single", description="single (the paper's) or search.")
    candidates: int = Field(4, ge=1, le=32, description="search: principles the MetaLM samples (K).")
    temperature: float = Field(0.9, ge=0.0, le=2.0, description="search: the MetaLM's temperature for candidates.")
    replays: int = Field(
        8, ge=1, le=100, description="search: most distinct user proposals, and most user answers, replayed."
    )
    select: Literal["best", "softmax"] = Field("best", description="search: the closest candidate, or a draw.")
    tau: float = Field(0.05, gt=0.0, le=10.0, description="search, softmax: the temperature of the draw.")
    previous: Literal["show", "hide"] = Field(
        "show",
        description="show the previous principle to the MetaLM (the paper's Appendix C), or hide it (its Algorithm "
        "2 conditions on the meta-principle and the interactions only; a small model copies what it is shown).",
    )
    critique: bool = Field(
        False, description="Ask for a critique of the previous principle before the new one (the authors' code)."
    )
    copy_gap: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="Ask once more when the answer repeats the previous principle while the assistant's offered "
        "share differs from the users' by at least this much; none: never.",
    )


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
        None,
        min_length=1,
        description="What the MetaLM is asked to write; default: the paper's (prompts/scai/revision.j2).",
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
    revision: RevisionStrategy = Field(default_factory=RevisionStrategy)
    oracle: bool = Field(
        False,
        description="The oracle bound: the assistant plays every epoch under the users' own norm text (the norm "
        "of the largest share) and the MetaLM is not asked; it tells 'the MetaLM could not infer the norm' from "
        "'the assistant could not follow a principle'.",
    )
    revise: bool = Field(
        True,
        description="false: the policy is held fixed from the first epoch and the MetaLM is not asked (a learned "
        "policy evaluated in the society: the chain's assistant subject).",
    )
    final_proposals: int = Field(
        4,
        ge=0,
        le=1000,
        description="After the last epoch, the final policy proposes this many times (seeded stakes); each run's "
        "final bin is read from their mean offered share. 0: from the last epoch's proposals.",
    )
    reading: Literal["scored", "lead_in", "none"] = Field(
        "scored",
        description="How the assistant's proposal follows its policy on a backend that takes grammars. scored: the "
        "policy is read first (the likeliest of five statements of a split, after few-shot principles), and the "
        "proposal states that split in words and stays in its band; lead_in: the model completes 'of what we split "
        "I keep ___' itself (it copies the principle's salient word: 'give everything' keeps everything); none: the "
        "paper's, any legal split. Measured by `sandbox bench principles`.",
    )
    responder: Literal["paper", "guided", "rule"] = Field(
        "paper",
        description="paper: the assistant decides from its policy alone, as the SCAI authors asked it; guided: the "
        "policy's reading is stated too, with the decision examples of the library norm of that reading (the help "
        "users get; not in the paper); rule: the policy is read, and the decision is the rule of the library norm "
        "of that reading applied to the offer, with no call (the model reads; it does not decide; where nothing is read, the "
        "paper's decision). Measured by "
        "`sandbox bench principles`.",
    )
    evaluation: Evaluation = Field(default_factory=Evaluation)
    prompt: Literal["policy", "none"] = Field(
        "policy",
        description="policy: the assistant plays under its policy, which the MetaLM rewrites (SCAI); none: no policy "
        "and no system prompt, and no MetaLM (a distilled student, whose norm is in its weights: prompts/student/).",
    )
    answer: Literal["sentence", "number", "share"] = Field(
        "sentence",
        description="prompt none: the student's answer form, sentence (the society's), number (the amount it "
        "keeps, the tiny model's) or share (the tenths it offers), handed to the society as its sentence.",
    )

    @model_validator(mode="after")
    def _one_start(self) -> Assistant:
        if self.initial_policy is not None and self.initial_policies is not None:
            raise ValueError("give initial_policy or initial_policies, not both")
        if self.prompt == "none" and (self.initial_policy is not None or self.initial_policies is not None):
            raise ValueError("prompt none plays with no policy; drop initial_policy and initial_policies")
        if self.answer != "sentence" and self.prompt != "none":
            raise ValueError(f"answer {self.answer} is a distilled student's form: it needs prompt none")
        if self.oracle and (
            self.initial_policy is not None or self.initial_policies is not None or self.prompt == "none"
        ):
            raise ValueError(
                "oracle plays under the users' norm text: drop initial_policy, initial_policies and prompt none"
            )
        if self.digest and self.revision.critique:
            raise ValueError("digest and revision.critique each set how the MetaLM's answer starts; choose one")
        return self

    @model_validator(mode="after")
    def _revision_fits(self) -> Assistant:
        r = self.revision
        if not self.revise and r != RevisionStrategy():
            raise ValueError("revise false asks no MetaLM: drop revision")
        if self.oracle and r != RevisionStrategy():  # compared by value: a scenario read back from a run holds defaults
            raise ValueError("oracle plays the users' norm text and asks no MetaLM: drop revision")
        if r.copy_gap is not None and r.strategy == "search":
            raise ValueError(
                "revision.copy_gap re-asks a single draw; a search keeps the current policy among its "
                "candidates: drop copy_gap"
            )
        if r.copy_gap is not None and r.previous == "hide":
            raise ValueError(
                "revision.copy_gap re-asks when the answer repeats the previous principle, which "
                "previous: hide does not show: drop one"
            )
        if r.strategy == "search" and r.temperature == 0 and r.candidates > 1:
            raise ValueError("revision.temperature 0 makes every candidate the same draw: sample them warmer")
        return self


class ScaiScenario(Protocol):
    """A society scenario with SCAI's `assistant:` block (`sandbox.scai.scenario.Scenario` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def society(self) -> Society: ...
    @property
    def game(self) -> Game: ...
    @property
    def models(self) -> Models: ...
    @property
    def assistant(self) -> Assistant | None: ...
