"""The labeling kind: an LLM judge labels episodes against a known objective (LLM proxy rewards).

Registered under the entry-point group `sandbox.kinds`; importing this module
imports nothing else of the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.core.kinds import GivenModels, Ledgers, RunKind

if TYPE_CHECKING:
    from sandbox.proxy.scenario import ProxyScenario


__all__ = ["PROXY"]


def run(
    scenario: ProxyScenario,
    out: Path | str | None = None,
    *,
    models: GivenModels = None,
    hooks: Any = None,
    ledgers: Ledgers = (),
) -> Path:
    """Label a scenario's test set (`sandbox.proxy.label_run.label_scenario`)."""
    from sandbox.proxy.label_run import label_scenario

    return label_scenario(scenario, out, models=models, hooks=hooks, ledgers=ledgers)


def resume(path: Path | str, *, models: GivenModels = None, hooks: Any = None, ledgers: Ledgers = ()) -> Path:
    """Ask the verdicts an interrupted labeling still lacks."""
    from sandbox.proxy.label_run import resume_labeling

    return resume_labeling(path, models=models, hooks=hooks, ledgers=ledgers)


def describe(scenario: ProxyScenario, *, source: str = "<scenario>") -> str:
    p = scenario.proxy
    return f"labeling {p.task}, {p.objective.name}, intent {p.intent.form}, judge {scenario.models.judge.spec}"


def cli_run(scenario: ProxyScenario, out: Path | None, *, source: str = "<scenario>") -> Path:
    """`sandbox run` of a labeling scenario (as `sandbox label`)."""
    from sandbox.proxy.commands import label_table, label_with_progress
    from sandbox.proxy.label_run import label_scenario

    path = label_with_progress(lambda hooks: label_scenario(scenario, out, hooks=hooks))
    label_table(path)
    return path


def cli_resume(path: Path, **options: Any) -> None:
    """`sandbox resume` of a labeling (the `--max-*` options raise its budget)."""
    from sandbox.core.budget import resume_options
    from sandbox.proxy.commands import label_table, label_with_progress
    from sandbox.proxy.label_run import resume_labeling

    resume_options(path, options, f"{path}, a label run")
    label_table(label_with_progress(lambda hooks: resume_labeling(path, hooks=hooks)))


def requires(scenario: ProxyScenario) -> list[str]:
    """torch (the train extra) for the negotiation task's REINFORCE negotiators (`proxy.negotiator_episodes`)."""
    block = scenario.proxy
    return ["train"] if block.task == "negotiation" and block.negotiator_episodes > 0 else []


PROXY = RunKind(
    name="proxy",
    block="proxy",
    precedence=40,
    title="a labeling scenario",
    requires="sandbox.proxy.kind:requires",
    command="label",
    description="LLM proxy rewards: a judge prompted with a user's examples or description of an objective labels "
    "episodes; its accuracy against the objective's ground truth.",
    model="sandbox.proxy.scenario:ProxyScenario",
    run="sandbox.proxy.kind:run",
    resume="sandbox.proxy.kind:resume",
    overrides="sandbox.proxy.scenario:apply_proxy_overrides",
    describe="sandbox.proxy.kind:describe",
    dir_label="sandbox.proxy.kind:label_dir",
    cli_run="sandbox.proxy.kind:cli_run",
    cli_resume="sandbox.proxy.kind:cli_resume",
    tables={
        "labels": "labels.csv",
        "accuracy": "accuracy.csv",
        "agents": "agents.csv",
        "calibration": "calibration.csv",
        "transcripts": "transcripts.jsonl",
    },
    commands=("sandbox.proxy.commands",),
    conformance="sandbox.proxy.conformance:CASE",
    example="scenarios/proxy/ultimatum/share30_10_examples.yaml",
    view="sandbox.proxy.view:view",
    budget=True,
)


def label_dir(path: Path) -> str:
    """A labeling's run directory: `label`, as the command that made it."""
    return "label"
