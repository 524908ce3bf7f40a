"""Distillation scenarios: a learned norm, judged as a reward, trained into an adapter (a file with `distill:`).

    name: distill-selfish-tiny
    models: {student: tiny, judge: embedded}
    distill:
      source: {run: runs/scai-selfish, pick: final, run_index: 0}   # or {text: "Keep as much as ..."}
      truth: selfish              # the library norm scoring the ground-truth control and the judge's accuracy
      reward: judge               # judge | truth | no_principle | flipped
      scoring: graded             # graded (P(yes)) or binary (the answer's label)
    training: {algorithm: ppo, episodes: 200, parallel: 4, rounds: 8, ppo: {learning_rate: 0.01}}

The fields that touch the file system (the source run directory) are checked
when the run starts (`sandbox.distill.source.resolve_principles`), before
anything is written, with errors that name `distill.source.*`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from sandbox.base.scenario_model import AmountRange, StrictModel
from sandbox.core.scenario import NamedScenario
from sandbox.scai.assistant_block import EvaluationCondition
from sandbox.training.ppo_config import PPOConfig
from sandbox.training.scenario_block import PPOFields, batch_ppo_config, check_trl_block

__all__ = [
    "TINY_MAX_AMOUNT",
    "DistillBlock",
    "DistillModels",
    "DistillScenario",
    "DistillTraining",
    "PrincipleSource",
    "answer_form",
]

LIBRARY_NORMS = ("selfish", "fair", "altruistic")
TINY_MAX_AMOUNT = 1000  # the tiny student's vocabulary holds every number up to the largest amount
REWARDS = ("judge", "truth", "no_principle", "flipped")


class PrincipleSource(StrictModel):
    """Where the norm comes from: a SCAI run directory, or a policy's text."""

    run: str | None = Field(None, min_length=1, description="A finished SCAI run directory (its policies.jsonl).")
    pick: Literal["final", "all", "bin"] = Field(
        "final",
        description="final: one run's final policy (run_index); all: every run's final policy; bin: the final "
        "policies of the runs in one norm bin (bin; default: the most common bin).",
    )
    run_index: int = Field(0, ge=0, description="pick final: which run of the directory.")
    bin: Literal["selfish", "fair", "altruistic"] | None = Field(None, description="pick bin: the bin.")
    text: str | None = Field(None, min_length=1, description="A policy's text, instead of a run directory.")

    @model_validator(mode="after")
    def _one_source(self) -> PrincipleSource:
        if (self.run is None) == (self.text is None):
            raise ValueError("give either run (a SCAI run directory) or text (a policy)")
        if self.text is not None and (self.pick != "final" or self.run_index != 0):
            raise ValueError("pick and run_index choose among a run directory's policies; a text is one policy")
        if self.bin is not None and self.pick != "bin":
            raise ValueError("bin is for pick: bin")
        return self


class DistillBlock(StrictModel):
    """What is distilled and how the judge turns it into a reward."""

    source: PrincipleSource
    truth: Literal["selfish", "fair", "altruistic"] | None = Field(
        None,
        description="The library norm behind the source (the ground truth of the truth control and of the "
        "judge's accuracy); default: the source run's society when it holds one library norm.",
    )
    reward: Literal["judge", "truth", "no_principle", "flipped"] = Field(
        "judge",
        description="judge: the judge asked whether a move follows the principle; controls: truth (the true norm's "
        "reward), no_principle (the judge without the principle), flipped (the judge's reward reversed).",
    )
    scoring: Literal["graded", "binary"] = Field(
        "graded", description="graded: P(yes) where the judge's backend gives log-probabilities; binary: its label."
    )
    resolution: float = Field(
        0.05,
        gt=0.0,
        le=0.5,
        description="The judge sees a move as the offered share rounded to this step, on a stake of 100 of the first "
        "currency: a finite table (21 proposals at 0.05), one judge call per distinct move.",
    )
    judge_temperature: float = Field(0.0, ge=0.0, le=2.0, description="The judge's temperature.")
    judge: Literal["verdict", "act"] = Field(
        "verdict",
        description="verdict: the judge says whether a move follows the principle (the proxy-reward method); act: "
        "the judge's model plays under the principle (SCAI's assistant) and the reward is agreement with its play "
        "(a small model follows a principle better than it judges one).",
    )
    judge_table: str | None = Field(
        None,
        min_length=1,
        description="A judge's table labelled before (a judge run's judge_table.csv: `sandbox label`, the chain's "
        "judge stage) of the same principles, judge and resolution, copied into the run at its start: a move it "
        "holds is not asked again.",
    )
    act_samples: int = Field(
        4, ge=1, le=100, description="judge act: the judge's proposals whose mean offered share is the target."
    )
    form: Literal["auto", "sentence", "number", "share"] = Field(
        "auto",
        description="The student's answer: sentence (the society's sentence and parser), number (the amount it "
        "keeps; the tiny model's form), share (the tenths of the amount it offers, 0 to 10: every library norm is "
        "one answer whatever the amount); auto: number for the tiny model, sentence otherwise.",
    )
    responder_share: float = Field(0.0, ge=0.0, le=1.0, description="Share of training moves made as responder.")
    amounts: AmountRange = Field(default_factory=AmountRange, description="The range training amounts come from.")
    held_out: float = Field(
        0.2, ge=0.0, lt=1.0, description="Share of the range's amounts kept out of training, for evaluation (seeded)."
    )
    currencies: list[str] | None = Field(
        None, min_length=1, description="Training currencies; default: the source run's game, else dollars and apples."
    )
    conditions: list[EvaluationCondition] = Field(
        default_factory=lambda: [
            EvaluationCondition(name="medicine", currency="grams of medicine"),
            EvaluationCondition(name="billions", amount=2_220_000_000),
        ],
        description="Evaluation conditions beyond the training and held-out amounts (SCAI's); an amount or a "
        "currency left out is the training one.",
    )
    trials: int = Field(
        20,
        ge=1,
        le=10_000,
        description="Evaluation trials per condition and subject: each one proposal and one answer to a proposal.",
    )

    @field_validator("currencies")
    @classmethod
    def _named(cls, currencies: list[str] | None) -> list[str] | None:
        if currencies is not None and any(not c.strip() for c in currencies):
            raise ValueError("a currency is a non-empty name")
        return currencies

    @model_validator(mode="after")
    def _known_truth(self) -> DistillBlock:
        if self.reward == "truth" and self.truth is None and self.source.run is None:
            raise ValueError("reward truth needs the true norm: set distill.truth (selfish, fair or altruistic)")
        return self


class DistillTraining(StrictModel):
    """How the student trains: the algorithm, the batch, checkpoints and the PPO fields (as in `training:`)."""

    algorithm: Literal["ppo", "grpo", "rloo"] = Field("ppo", description="ppo (the project's), TRL's grpo or rloo.")
    episodes: int = Field(200, ge=1, le=1_000_000, description="Training steps; each plays parallel x rounds moves.")
    parallel: int = Field(4, ge=1, le=4096, description="Games side by side per episode (batched).")
    rounds: int = Field(8, ge=1, le=1000, description="Moves each game makes per episode (a fresh stake each).")
    illegal: float = Field(-1.0, le=0, description="The reward of an answer that does not parse.")
    checkpoint_every: int = Field(50, ge=1, description="Episodes between checkpoints.")
    ppo: PPOFields = Field(default_factory=PPOFields, description="PPOConfig fields (see `sandbox train --help-ppo`).")
    trl: dict[str, Any] = Field(default_factory=dict, description="grpo/rloo: fields of TRL's GRPOConfig/RLOOConfig.")

    @model_validator(mode="after")
    def _consistent(self) -> DistillTraining:
        self.ppo_config(seed=0)
        check_trl_block(self.algorithm, self.trl, self.parallel, self.rounds)
        return self

    def ppo_config(self, seed: int) -> PPOConfig:
        """The `PPOConfig`: the fields given, `batch_size = parallel x rounds` and `seed` unless given."""
        return batch_ppo_config(self.ppo, self.parallel, self.rounds, seed)


class DistillModels(StrictModel):
    """The student that learns, the judge that rewards, and the models of the evaluation."""

    student: str = Field("tiny", description="Base model: tiny, tiny:SEED, hf:PATH, gguf:FILE, embedded, smollm2.")
    judge: str = Field("embedded", description="The judge: a model spec (embedded, openai:MODEL, hf:PATH, ...).")
    assistant: str | None = Field(
        None,
        description="The policy-prompted assistant of the evaluation; default: the source run's assistant, "
        "else the judge's spec.",
    )
    user: str | None = Field(
        None, description="The users who answer in the evaluation; default: the source run's users, else the judge's."
    )
    device: str | None = Field(None, description="cpu, cuda, cuda:1...; default: CUDA when present.")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field("auto", description="auto = bf16 on a GPU.")

    @field_validator("student")
    @classmethod
    def _student(cls, spec: str) -> str:
        from sandbox.llm.base_model import check_base_model_spec

        check_base_model_spec(spec)
        return spec

    @field_validator("judge", "assistant", "user")
    @classmethod
    def _chat_spec(cls, spec: str | None) -> str | None:
        from sandbox.llm.resolve import check_spec

        if spec is not None:
            check_spec(spec)
        return spec


class DistillScenario(NamedScenario):
    """A norm distillation, as written in a scenario file with a `distill:` block."""

    concurrency: int = Field(4, ge=1, le=4096, description="Most judge calls in flight at once.")
    models: DistillModels = Field(default_factory=DistillModels)
    distill: DistillBlock
    training: DistillTraining = Field(default_factory=DistillTraining)

    def form(self) -> Literal["sentence", "number", "share"]:
        """The student's answer form (`auto`: number for the tiny model)."""
        return answer_form(self.distill.form, self.models.student)


def answer_form(form: str, student: str) -> Literal["sentence", "number", "share"]:
    """A `distill.form` resolved for the student `student`: `auto` is number for the tiny model, sentence otherwise."""
    if form != "auto":
        return form  # type: ignore[return-value]
    return "number" if student.partition(":")[0] == "tiny" else "sentence"
