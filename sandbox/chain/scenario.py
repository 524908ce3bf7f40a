"""The chain's scenario file: a society, the judge of the norm its assistant learns, the student, the evaluation.

    name: chain-selfish-tiny
    seed: 0
    chain:
      society: ../scai/selfish_tiny.yaml      # a society scenario with an assistant (a file, or its mapping)
      models: {student: tiny, judge: embedded}
      distill: {judge: act, form: share, reward: judge, amounts: {min: 10, max: 20}}   # distill: block, no source
      training: {algorithm: ppo, episodes: 300, parallel: 4, rounds: 8}
      seeds: 3                                # students trained, one per seed
      evaluation: {runs: 4, epochs: 1}        # the society again, each subject as its assistant
      budget: {calls: 5000}                   # caps over every stage's LLM calls

Every check that two stages agree is made here, when the file is read,
before any model is loaded, with errors naming the field: the society has
an assistant whose policy is learned (the judge needs it), plays the
ultimatum game (the student answers nothing else), and a tiny student's
words cover the society's amounts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from sandbox.base.scenario_model import StrictModel
from sandbox.core.scenario import NamedScenario
from sandbox.distill.scenario import (
    TINY_MAX_AMOUNT,
    DistillBlock,
    DistillModels,
    DistillTraining,
    PrincipleSource,
    answer_form,
)
from sandbox.llm.budget import Budget
from sandbox.scai.assistant_block import InteractionMix
from sandbox.scai.scenario import Scenario

__all__ = ["STAGES", "ChainBlock", "ChainDistillBlock", "ChainEvaluation", "ChainScenario", "Subject"]

STAGES = ("society", "judge", "distill", "evaluate", "compare")
Subject = Literal["assistant", "student", "base"]


class ChainDistillBlock(DistillBlock):
    """A distillation's `distill:` block without its source: the chain's source is its society stage's run."""

    source: PrincipleSource | None = Field(None, description="Set by the chain: the society stage's run directory.")
    judge: Literal["verdict", "act"] = Field(
        "act",
        description="act (the chain's default): the judge's model plays under the learned policy and the reward is "
        "agreement with its play; verdict: the judge says whether a move follows the policy (the proxy-reward "
        "method's question; the embedded model's verdicts are flat in the offered share).",
    )

    @model_validator(mode="after")
    def _known_truth(self) -> ChainDistillBlock:  # the parent's check reads the source, which the chain sets later
        if self.source is not None:
            raise ValueError("source: the chain distils its society stage's policy; remove distill.source")
        if self.judge_table is not None:
            raise ValueError("judge_table: the chain's judge stage labels the table; remove distill.judge_table")
        return self


class ChainEvaluation(StrictModel):
    """Stage (d): the society again, with each subject as its assistant and nothing learning."""

    runs: int | None = Field(None, ge=1, le=10_000, description="Independent runs per subject; default: the society's.")
    epochs: int = Field(1, ge=1, le=1000, description="Epochs per run.")
    interactions: InteractionMix = Field(
        default_factory=lambda: InteractionMix(user_user=0, assistant_proposer=4, assistant_responder=4),
        description="Interactions per epoch (the users' own figures come from the society stage).",
    )
    subjects: list[Subject] = Field(
        default_factory=lambda: ["assistant", "student", "base"],
        min_length=1,
        description="assistant: the learned policy, held fixed; student: each seed's student with no policy and no "
        "MetaLM; base: the untrained base model the same way.",
    )

    @field_validator("subjects")
    @classmethod
    def _once(cls, subjects: list[str]) -> list[str]:
        if len(set(subjects)) != len(subjects):
            raise ValueError("name each subject once")
        return subjects


class ChainBlock(StrictModel):
    """The stages of a chain experiment."""

    society: Scenario | str = Field(
        ..., description="Stage (a): a society scenario with an assistant (a file relative to this one, or inline)."
    )
    models: DistillModels = Field(default_factory=DistillModels, description="The student and the judge.")
    distill: ChainDistillBlock = Field(
        default_factory=ChainDistillBlock, description="Stages (b, c): the distill: block."
    )
    training: DistillTraining = Field(default_factory=DistillTraining, description="Stage (c): how the student trains.")
    seeds: int = Field(3, ge=1, le=100, description="Students trained (chain seed, +1, ...), each evaluated.")
    evaluation: ChainEvaluation = Field(default_factory=ChainEvaluation)
    budget: Budget = Field(default_factory=Budget, description="Caps over every stage's LLM calls, tokens, dollars.")

    @model_validator(mode="after")
    def _stages_agree(self) -> ChainBlock:
        if isinstance(self.society, str):
            return self  # checked once the file is read in (`sandbox.chain.kind.load`, `run_chain`)
        check_society(self.society, self)
        return self


def check_society(society: Scenario, block: ChainBlock) -> None:
    """`ValueError` naming the field where the society stage and the others disagree."""
    assistant = society.assistant
    if assistant is None:
        raise ValueError(
            "society.assistant: the judge reads the policy the society's assistant learns; the society "
            "has no assistant: block"
        )
    if assistant.prompt == "none" or assistant.oracle or not assistant.revise:
        raise ValueError(
            "society.assistant: the judge needs a learned policy; the society's assistant learns none "
            "(prompt none, oracle or revise false)"
        )
    if society.game.kind != "ultimatum":
        raise ValueError(f"society.game.kind: the student answers the ultimatum game, not {society.game.kind}")
    student = block.models.student.partition(":")[0]
    form = answer_form(block.distill.form, block.models.student)
    amounts = block.distill.amounts
    if int(round((amounts.max - amounts.min + 1) * block.distill.held_out)) >= amounts.max - amounts.min + 1:
        raise ValueError(f"distill.held_out: holds out every amount of {amounts.min}..{amounts.max}")
    if block.distill.reward == "truth" and block.distill.truth is None:
        norms = {share.norm for share in society.society.norms if share.proportion > 0}
        if len(norms) != 1 or next(iter(norms)) not in ("selfish", "fair", "altruistic"):
            raise ValueError(
                "distill.truth: reward truth needs the true norm, and the society holds no single "
                "library norm: set distill.truth"
            )
    if student == "tiny":
        if form == "sentence":
            raise ValueError("distill.form: the tiny student answers in the number or share form, not sentences")
        highest = society.game.amount.max
        if highest > block.distill.amounts.max:
            raise ValueError(
                f"distill.amounts.max: the tiny student's words are the numbers up to "
                f"{block.distill.amounts.max}, and the society's game draws amounts up to {highest} "
                f"(society.game.amount.max): it could not read them"
            )
        if block.distill.amounts.max > TINY_MAX_AMOUNT:
            raise ValueError(f"distill.amounts.max: keep a tiny student's amounts up to {TINY_MAX_AMOUNT}")
    if "student" not in block.evaluation.subjects:
        raise ValueError("evaluation.subjects: the chain evaluates its student; keep student among the subjects")


class ChainScenario(NamedScenario):
    """A chain experiment, as written in a scenario file with a `chain:` block."""

    seed: int = Field(0, ge=0, description="The first student's seed (the others follow); the stages' own seeds stay.")
    chain: ChainBlock

    def society(self) -> Scenario:
        """The society stage's scenario (read from its file, relative to the working directory, if still a path)."""
        society = self.chain.society
        if isinstance(society, str):
            from sandbox.core.scenario_files import load_scenario

            return load_scenario(Path(society), kind="society")
        return society

    def form(self) -> Literal["sentence", "number", "share"]:
        return answer_form(self.chain.distill.form, self.chain.models.student)

    def stage_seed(self, index: int) -> int:
        """The seed of the `index`th student."""
        return self.seed + index


def with_society(data: Any, path: Path) -> Any:
    """A chain file's data with `chain.society` read in when it names a file (relative to `path`'s folder), and the
    society's own relative paths (its guided members' game) made relative to the file that holds them."""
    from sandbox.base.errors import ScenarioError
    from sandbox.base.files import read_yaml
    from sandbox.society.scenario import with_guided_paths

    if not (isinstance(data, dict) and isinstance(data.get("chain"), dict)):
        return data
    society, folder = data["chain"].get("society"), path.parent
    if isinstance(society, str):
        file = Path(society) if Path(society).is_absolute() else path.parent / society
        if not file.is_file():
            raise ScenarioError(str(path), [("chain.society", f"{file} is not a file")])
        society, folder = read_yaml(file), file.parent
        if not isinstance(society, dict):  # never left a file name, which would be read from the working directory
            raise ScenarioError(
                str(path), [("chain.society", f"{file} is not a society scenario: a scenario is a mapping of fields")]
            )
    if not isinstance(society, dict):
        return data  # missing or malformed: the model's own error names it
    try:
        society = with_guided_paths(society, folder)
    except ValueError as error:
        field, message = error.args
        raise ScenarioError(str(path), [(f"chain.{field}", message)]) from None
    return {**data, "chain": {**data["chain"], "society": society}}
