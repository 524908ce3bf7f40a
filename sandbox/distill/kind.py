"""The distillation kind: a learned norm, judged as a reward, trained into a student's weights.

Registered under the entry-point group `sandbox.kinds`; importing this module
imports nothing else of the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.core.kinds import GivenModels, Ledgers, RunKind, by_option

if TYPE_CHECKING:
    from sandbox.distill.scenario import DistillScenario


__all__ = ["DISTILL"]


def _models(models: GivenModels, ledgers: Ledgers) -> tuple[Any, Any]:
    """The judge, and the evaluation's chat models by subject (users, assistant, student, base), from `models`."""
    from sandbox.base.errors import UsageError

    if ledgers:
        raise UsageError("distillation runs count no budget")
    given = dict(models or {})
    unknown = sorted(set(given) - {"judge", "users", "assistant", "student", "base"})
    if unknown:
        raise UsageError(f"unknown roles in models: {', '.join(unknown)} (judge, users, assistant, student, base)")
    judge = given.pop("judge", None)
    return judge, given or None


def run(
    scenario: DistillScenario,
    out: Path | str | None = None,
    *,
    models: GivenModels = None,
    hooks: Any = None,
    ledgers: Ledgers = (),
) -> Path:
    """Distil the scenario's norm and evaluate the student (`sandbox.distill.run.distill_scenario`); `models`: the
    judge's chat model and the evaluation's by subject, instead of the scenario's specs."""
    from sandbox.distill.run import distill_scenario

    judge, evaluation = _models(models, ledgers)
    return distill_scenario(scenario, out, hooks=hooks, judge=judge, evaluation_models=evaluation)


def resume(path: Path | str, *, models: GivenModels = None, hooks: Any = None, ledgers: Ledgers = ()) -> Path:
    """Finish an interrupted distillation and its evaluation."""
    from sandbox.distill.run import resume_distill

    judge, evaluation = _models(models, ledgers)
    return resume_distill(path, hooks=hooks, judge=judge, evaluation_models=evaluation)


def describe(scenario: DistillScenario, *, source: str = "<scenario>") -> str:
    d = scenario.distill
    origin = f"the run {d.source.run}" if d.source.run else "a policy text"
    return f"distilling {origin} into {scenario.models.student}, {d.reward} reward, judge {scenario.models.judge}"


def cli_run(scenario: DistillScenario, out: Path | None, *, source: str = "<scenario>") -> Path:
    """`sandbox run` of a distillation scenario (as `sandbox distill`): training, its table, the evaluation."""
    from sandbox.distill.commands import distill_table, distill_with_progress, evaluate_with_progress
    from sandbox.distill.run import distill_scenario

    path = distill_with_progress(
        lambda hooks: distill_scenario(scenario, out, source=source, hooks=hooks, evaluate=False)
    )
    distill_table(path)
    evaluate_with_progress(path)
    return path


def cli_resume(path: Path, **options: Any) -> None:
    """`sandbox resume` of a distillation: the training, then the evaluation if it has not run."""
    from sandbox.distill.commands import distill_table, distill_with_progress, evaluate_with_progress
    from sandbox.distill.evaluate import RESULTS
    from sandbox.distill.run import resume_distill

    by_option(options, (), f"{path}, a distill run")
    done = distill_with_progress(lambda hooks: resume_distill(path, hooks=hooks, evaluate=False))
    distill_table(done)
    if not (done / RESULTS).is_file():
        evaluate_with_progress(done)


def cli_evaluate(path: Path, *, trials: int | None = None, **others: Any) -> None:
    """`sandbox evaluate` of a distillation: the student, the policy-prompted assistant, the users and the base
    model without a policy."""
    from sandbox.base.errors import UsageError
    from sandbox.distill.commands import evaluate_with_progress

    if any(v not in (None, False, []) or (k == "learned_on" and v is not None) for k, v in others.items()):
        raise UsageError("a distillation's conditions are its distill.conditions; --trials alone applies")
    evaluate_with_progress(path, trials)


DISTILL = RunKind(
    name="distill",
    block="distill",
    precedence=20,  # before training: a distillation has a training: block too
    title="a distillation scenario",
    extras=("train",),
    command="distill",
    description="A norm (a SCAI run's final policy, or a text) judged by an LLM as a reward and trained into a "
    "student's weights; the student then plays without the policy.",
    model="sandbox.distill.scenario:DistillScenario",
    run="sandbox.distill.kind:run",
    resume="sandbox.distill.kind:resume",
    describe="sandbox.distill.kind:describe",
    cli_run="sandbox.distill.kind:cli_run",
    cli_resume="sandbox.distill.kind:cli_resume",
    cli_evaluate="sandbox.distill.kind:cli_evaluate",
    tables={
        "metrics": "metrics.csv",
        "judge_table": "judge_table.csv",
        "evaluation": "evaluation.csv",
        "distillation": "distillation.csv",
    },
    commands=("sandbox.distill.commands",),
    conformance="sandbox.distill.conformance:DISTILL_CASE",
    example="scenarios/distill/tiny/selfish.yaml",
    view="sandbox.distill.view:view",
)
