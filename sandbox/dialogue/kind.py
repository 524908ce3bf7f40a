"""The solve kind: a dialogue game expanded on an LLM and solved with OpenSpiel's CFR (and PSRO); a reward-model
or agreement measurement is a run directory of the same kind.

Registered under the entry-point group `sandbox.kinds`; importing this module
imports nothing else of the package (OpenSpiel loads when a run starts).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.core.kinds import GivenModels, Ledgers, RunKind

if TYPE_CHECKING:
    from sandbox.dialogue.scenario import DialogueScenario


__all__ = ["DIALOGUE"]


def run(
    scenario: DialogueScenario,
    out: Path | str | None = None,
    *,
    models: GivenModels = None,
    hooks: Any = None,
    ledgers: Ledgers = (),
) -> Path:
    """Expand and solve the game (`sandbox.dialogue.run.solve_scenario`)."""
    from sandbox.dialogue.run import solve_scenario

    return solve_scenario(scenario, out, models=models, hooks=hooks, ledgers=ledgers)


def resume(path: Path | str, *, models: GivenModels = None, hooks: Any = None, ledgers: Ledgers = ()) -> Path:
    """Finish an interrupted solve, or a reward-model or agreement measurement."""
    from sandbox.dialogue.agreement import is_agreement_run, resume_agreement
    from sandbox.dialogue.reward_error import is_reward_model_run, resume_reward_model
    from sandbox.dialogue.run import resume_solve

    if is_agreement_run(path):
        return resume_agreement(path, models=models)
    if is_reward_model_run(path):
        return resume_reward_model(path, judge=(models or {}).get("judge"))
    return resume_solve(path, models=models, hooks=hooks, ledgers=ledgers)


def dir_label(path: Path) -> str:
    """reward-model or agreement (a measurement), or solve."""
    from sandbox.dialogue.agreement import is_agreement_run
    from sandbox.dialogue.reward_error import is_reward_model_run

    return "reward-model" if is_reward_model_run(path) else "agreement" if is_agreement_run(path) else "solve"


def describe(scenario: DialogueScenario, *, source: str = "<scenario>") -> str:
    from sandbox.dialogue.scenario import estimate_messages

    g = scenario.dialogue
    return (
        f"dialogue game {g.domain.kind}, {len(g.players)} players, up to {g.max_messages} messages, "
        f"{g.seeds_per_message} seed(s), at most {estimate_messages(g)} messages in the tree"
    )


def cli_run(scenario: DialogueScenario, out: Path | None, *, source: str = "<scenario>") -> Path:
    """`sandbox run` of a dialogue game (as `sandbox solve`)."""
    from sandbox.dialogue.commands import solve_table, solve_with_progress
    from sandbox.dialogue.run import solve_scenario

    path = solve_with_progress(lambda hooks: solve_scenario(scenario, out, hooks=hooks))
    solve_table(path)
    return path


def cli_resume(path: Path, **options: Any) -> None:
    """`sandbox resume` of a solve (the `--max-*` options raise its budget) or a reward-model measurement."""
    from sandbox.core.budget import resume_options
    from sandbox.dialogue.commands import resume_dialogue_run

    label = dir_label(path)
    resume_options(path, options, f"{path}, a {label} run", budget=label == "solve")
    resume_dialogue_run(path)


DIALOGUE = RunKind(
    name="dialogue",
    block="dialogue",
    precedence=10,
    title="a dialogue game",
    extras=("solve",),
    command="solve",
    description="Solver-guided dialogue: a dialogue game whose actions are instructions, expanded once on the LLM "
    "and solved with CFR (and PSRO); NashConv, CFR Gain and steering.",
    model="sandbox.dialogue.scenario:DialogueScenario",
    run="sandbox.dialogue.kind:run",
    resume="sandbox.dialogue.kind:resume",
    overrides="sandbox.dialogue.scenario:apply_dialogue_overrides",
    describe="sandbox.dialogue.kind:describe",
    dir_label="sandbox.dialogue.kind:dir_label",
    cli_run="sandbox.dialogue.kind:cli_run",
    cli_resume="sandbox.dialogue.kind:cli_resume",
    tables={
        "dialogues": "dialogues.csv",
        "policy": "policy.csv",
        "steering": "steering.csv",
        "psro": "psro.csv",
        "psro_candidates": "psro_candidates.csv",
        "reward_model": "reward_model.csv",
        "reward_model_error": "reward_model_error.csv",
        "agreement": "agreement.csv",
        "agreement_by_length": "agreement_by_length.csv",
        "play": "play.csv",
        "play_summary": "play_summary.csv",
        "transcripts": "transcripts.jsonl",
    },
    commands=("sandbox.dialogue.commands",),
    benchmarks={"dialogue": "sandbox.dialogue.bench:bench_dialogue"},
    conformance="sandbox.dialogue.conformance:CASE",
    example="scenarios/dialogue/ultimatum_small.yaml",
    view="sandbox.dialogue.view:view",
    budget=True,
)
