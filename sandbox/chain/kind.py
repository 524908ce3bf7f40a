"""The chain kind: a society's learned norm, judged, distilled into a student, and the student back in the society.

Registered under the entry-point group `sandbox.kinds`; importing this module
imports nothing else of the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.core.kinds import GivenModels, Ledgers, RunKind, by_option

if TYPE_CHECKING:
    from sandbox.chain.scenario import ChainScenario


__all__ = ["CHAIN", "load"]


def load(path: Path | str, data: Any = None) -> Any:
    """A chain file with its society read in (a relative `chain.society` is relative to the file). `data`: the
    scenario's fields written inside `path` (a sweep's base) instead of read from it."""
    from sandbox.base.files import read_yaml
    from sandbox.chain.scenario import with_society
    from sandbox.core.scenario_files import parse_kind

    data = read_yaml(path) if data is None else data
    parse_kind("chain", data, str(path))  # the chain's own fields first, its society still a file name
    return parse_kind("chain", with_society(data, Path(path)), str(path))


def _no_ledgers(ledgers: Ledgers) -> None:
    from sandbox.base.errors import UsageError

    if ledgers:
        raise UsageError("a chain's budget is chain.budget")


def run(
    scenario: ChainScenario,
    out: Path | str | None = None,
    *,
    models: GivenModels = None,
    hooks: Any = None,
    ledgers: Ledgers = (),
) -> Path:
    """Run every stage (`sandbox.chain.run.run_chain`); `models`: chat models by role (user, assistant, meta,
    judge) instead of the stages' specs (the students are the chain's own)."""
    from sandbox.chain.run import run_chain

    _no_ledgers(ledgers)
    return run_chain(scenario, out, hooks=hooks, models=models)


def resume(path: Path | str, *, models: GivenModels = None, hooks: Any = None, ledgers: Ledgers = ()) -> Path:
    """Go on from the first unfinished stage."""
    from sandbox.chain.run import resume_chain

    _no_ledgers(ledgers)
    return resume_chain(path, hooks=hooks, models=models)


def expand(scenario: ChainScenario, source: str) -> list[tuple[str, Any]]:
    """The runs the chain plays, for the dry run (`sandbox.chain.stages.dry_run_stages`)."""
    from sandbox.chain.stages import dry_run_stages

    return dry_run_stages(scenario)


def describe(scenario: ChainScenario, *, source: str = "<scenario>") -> str:
    block = scenario.chain
    return (
        f"a chain: {scenario.society().name} -> the {block.distill.judge} judge {block.models.judge} -> "
        f"{block.seeds} {block.models.student} students ({scenario.form()} form) -> the society again"
    )


def cli_run(scenario: ChainScenario, out: Path | None, *, source: str = "<scenario>") -> Path:
    from sandbox.chain.commands import chain_with_progress, print_chain
    from sandbox.chain.run import run_chain

    path = chain_with_progress(lambda hooks: run_chain(scenario, out, hooks=hooks, source=source))
    print_chain(path)
    return path


def cli_resume(path: Path, **options: Any) -> None:
    from sandbox.chain.commands import chain_with_progress, print_chain
    from sandbox.chain.run import resume_chain

    by_option(options, ("max_calls", "max_tokens", "max_cost"), f"{path}, a chain")
    print_chain(chain_with_progress(lambda hooks: resume_chain(path, hooks=hooks, **options)))


CHAIN = RunKind(
    name="chain",
    block="chain",
    precedence=5,
    title="a chain scenario",
    extras=("train",),  # the students train
    command="chain",
    description="The chain as one experiment: a society's assistant learns a norm in words (SCAI), a judge turns it "
    "into a reward, students are trained on it, and each student goes back into the society without the policy.",
    model="sandbox.chain.scenario:ChainScenario",
    load="sandbox.chain.kind:load",
    run="sandbox.chain.kind:run",
    resume="sandbox.chain.kind:resume",
    expand="sandbox.chain.kind:expand",
    describe="sandbox.chain.kind:describe",
    cli_run="sandbox.chain.kind:cli_run",
    cli_resume="sandbox.chain.kind:cli_resume",
    tables={
        "comparison": "comparison.csv",
        "judge_table": "judge/judge_table.csv",
        "society_episodes": "society/episodes.csv",
        "assistant_episodes": "evaluate/assistant/episodes.csv",
        "base_episodes": "evaluate/base/episodes.csv",
    },
    commands=("sandbox.chain.commands",),
    conformance="sandbox.chain.conformance:CASE",
    example="scenarios/chain/selfish_tiny.yaml",
    view="sandbox.chain.view:view",
)
