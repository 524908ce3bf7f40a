"""The training kind: moral fine-tuning on iterated matrix games (one seed, or a group of seeds in one directory).

Registered under the entry-point group `sandbox.kinds`; importing this module
imports nothing else of the package (torch loads when a run starts).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.core.kinds import GivenModels, Ledgers, RunKind, by_option

if TYPE_CHECKING:
    from sandbox.moral.scenario import TrainingScenario


__all__ = ["TRAINING"]


def _no_models(models: GivenModels, ledgers: Ledgers) -> None:
    from sandbox.base.errors import UsageError

    if models or ledgers:
        raise UsageError("training runs take their base model from models.policy, and count no budget")


def run(
    scenario: TrainingScenario,
    out: Path | str | None = None,
    *,
    models: GivenModels = None,
    hooks: Any = None,
    ledgers: Ledgers = (),
) -> Path:
    """Train one seed (`sandbox.moral.run.train_scenario`)."""
    from sandbox.moral.run import train_scenario

    _no_models(models, ledgers)
    return train_scenario(scenario, out, hooks=hooks)


def resume(path: Path | str, *, models: GivenModels = None, hooks: Any = None, ledgers: Ledgers = ()) -> Path:
    """Finish a training run or a group of seeds from its last checkpoints."""
    from sandbox.moral.across_seeds import is_seed_group, resume_seeds
    from sandbox.moral.run import resume_training

    _no_models(models, ledgers)
    if is_seed_group(path):
        return resume_seeds(path, hooks=(lambda _: hooks) if hooks else None)
    return resume_training(path, hooks=hooks)


def dir_label(path: Path) -> str:
    """seeds (a group of seeds) or training."""
    from sandbox.moral.across_seeds import is_seed_group

    return "seeds" if is_seed_group(path) else "training"


def describe(scenario: TrainingScenario, *, source: str = "<scenario>") -> str:
    t = scenario.training
    return f"training {scenario.models.policy}, {t.reward} vs {t.opponent}, {t.episodes} episodes"


def cli_run(scenario: TrainingScenario, out: Path | None, *, source: str = "<scenario>") -> Path:
    """`sandbox run` of a training scenario: one seed under a progress bar, then its table (`sandbox train` has
    the kind's own options)."""
    from sandbox.moral.commands import train_table, train_with_progress
    from sandbox.moral.run import train_scenario

    path = train_with_progress(lambda hooks: train_scenario(scenario, out, hooks=hooks))
    train_table(path)
    return path


def cli_resume(path: Path, *, device: str | None = None, **others: Any) -> None:
    """`sandbox resume` of a training run or a group of seeds (`--device` finishes it on another device)."""
    from sandbox.moral.across_seeds import is_seed_group, resume_seeds
    from sandbox.moral.commands import seeds_table, train_table, train_with_progress
    from sandbox.moral.run import resume_training

    by_option(others, (), f"{path}, a {dir_label(path)} run")
    if is_seed_group(path):
        seeds_table(train_with_progress(lambda hooks: resume_seeds(path, hooks=lambda _: hooks, device=device)))
    else:
        train_table(train_with_progress(lambda hooks: resume_training(path, hooks=hooks, device=device)))


TRAINING = RunKind(
    name="training",
    block="training",
    precedence=30,
    title="a training scenario",
    extras=("train",),
    command="train",
    description="Moral fine-tuning: PPO (or TRL's GRPO, RLOO) with LoRA on an iterated matrix game with an intrinsic "
    "moral reward.",
    model="sandbox.moral.scenario:TrainingScenario",
    run="sandbox.moral.kind:run",
    resume="sandbox.moral.kind:resume",
    overrides="sandbox.moral.scenario:apply_training_overrides",
    describe="sandbox.moral.kind:describe",
    dir_label="sandbox.moral.kind:dir_label",
    cli_run="sandbox.moral.kind:cli_run",
    cli_resume="sandbox.moral.kind:cli_resume",
    tables={
        "metrics": "metrics.csv",
        "action_types": "action_types.csv",
        "seeds": "seeds.csv",
        "moral_regret": "moral_regret.csv",
        "test_action_types": "test_action_types.csv",
        "evaluation_rounds": "evaluation_rounds.csv",
    },
    commands=("sandbox.moral.commands",),
    benchmarks={"rollout": "sandbox.moral.bench:bench_rollout", "training": "sandbox.moral.bench:bench_training"},
    conformance="sandbox.moral.conformance:CASE",
    example="scenarios/moral/tiny/utilitarian_vs_tft.yaml",
    view="sandbox.moral.view:view",
)
