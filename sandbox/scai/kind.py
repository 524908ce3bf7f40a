"""The society kind: users of fixed norms playing a game, and Social Contract AI's assistant when there is one.

Registered under the entry-point group `sandbox.kinds` (`pyproject.toml`);
importing this module imports nothing else of the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.core.kinds import GivenModels, Ledgers, RunKind

if TYPE_CHECKING:
    from sandbox.scai.scenario import Scenario


__all__ = ["SOCIETY", "load", "resume", "run"]


def load(path: Path | str, data: Any = None) -> Any:
    """A society file with `society.guided`'s paths read relative to it (a `solve:` file read in), its solved
    policy checked. A run directory's own `scenario.yaml` is read as stored (its paths are already absolute, and
    its policy is checked when it resumes), so a finished run loads even after its policy has moved. `data`: the
    scenario's fields written inside `path` (a sweep's base) instead of read from it."""
    from sandbox.base.errors import ScenarioError
    from sandbox.base.files import read_yaml
    from sandbox.core.scenario_files import parse_kind
    from sandbox.society.scenario import with_guided_paths

    stored = data is None and (Path(path).parent / "run.json").is_file()
    data = read_yaml(path) if data is None else data
    if not stored:
        try:
            data = with_guided_paths(data, Path(path).parent)
        except ValueError as error:
            raise ScenarioError(str(path), [error.args]) from None  # (field, message)
    scenario = parse_kind("society", data, str(path))
    guided = scenario.society.guided
    if guided is not None and guided.policy is not None and not stored:
        from societies.guided_policy import GuidedPolicy

        try:
            GuidedPolicy.load(guided.policy).check_play(guided.play)
        except ValueError as error:
            raise ScenarioError(str(path), [("society.guided.policy", str(error))]) from None
    return scenario


def run(
    scenario: Scenario,
    out: Path | str | None = None,
    *,
    models: GivenModels = None,
    hooks: Any = None,
    ledgers: Ledgers = (),
) -> Path:
    """Play a society scenario into `out` (`sandbox.society.runner.arun`, from synchronous code)."""
    from sandbox.base.sync import run_sync
    from sandbox.society.runner import arun

    return run_sync(arun(scenario, out=out, models=models, hooks=hooks, ledgers=ledgers))


def resume(path: Path | str, *, models: GivenModels = None, hooks: Any = None, ledgers: Ledgers = ()) -> Path:
    """Finish an interrupted society run (`sandbox.society.runner.aresume`, from synchronous code)."""
    from sandbox.base.sync import run_sync
    from sandbox.society.runner import aresume

    return run_sync(aresume(path, models=models, hooks=hooks, ledgers=ledgers))


def describe(scenario: Scenario, *, source: str = "<scenario>") -> str:
    """One line for `sandbox validate`."""
    guided = scenario.society.guided
    members = f" and {guided.count} solver-guided members" if guided is not None else ""
    return f"{scenario.society.size} users{members}, {scenario.game.kind}"


def dry_run_size(scenario: Scenario) -> str:
    """A society's size in the dry-run table's title: its independent runs and epochs."""
    return f" ({scenario.runs} runs x {scenario.epochs} epochs)"


def requires(scenario: Scenario) -> list[str]:
    """OpenSpiel (the solve extra) when solver-guided members' game is solved inline (`society.guided.solve`)."""
    guided = scenario.society.guided
    return ["solve"] if guided is not None and guided.solve is not None else []


SOCIETY = RunKind(
    name="society",
    block=None,  # the default: a file with none of the other kinds' blocks
    title="a society scenario",
    requires="sandbox.scai.kind:requires",
    command="run",
    description="Users of fixed norms and manners play a game on a network; with an assistant: block, Social "
    "Contract AI's assistant learns their norms (a MetaLM rewrites its policy each epoch).",
    model="sandbox.scai.scenario:Scenario",
    load="sandbox.scai.kind:load",
    run="sandbox.scai.kind:run",
    resume="sandbox.scai.kind:resume",
    overrides="sandbox.scai.society_cli:apply_overrides",
    run_options=("seed", "models", "runs", "epochs", "max_calls", "max_tokens", "max_cost"),
    describe="sandbox.scai.kind:describe",
    dry_run="sandbox.scai.dry_run:dry_run",
    dry_run_size="sandbox.scai.kind:dry_run_size",
    cli_run="sandbox.scai.society_cli:cli_run",
    cli_resume="sandbox.scai.society_cli:cli_resume",
    cli_evaluate="sandbox.scai.society_cli:cli_evaluate",
    cli_compare="sandbox.scai.society_cli:cli_compare",
    result="sandbox.scai.result:SocietyResult",
    tables={
        "episodes": "episodes.csv",
        "metrics": "metrics.csv",
        "payoffs": "payoffs.csv",
        "agents": "agents.csv",
        "epochs": "epochs.csv",
        "epoch_summary": "epoch_summary.csv",
        "final_policies": "final_policies.csv",
        "final_proposals": "final_proposals.csv",
        "evaluation": "evaluation.csv",
        "policies": "policies.jsonl",
        "transcripts": "transcripts.jsonl",
    },
    benchmarks={
        "concurrency": "sandbox.society.benchmarks:bench_concurrency",
        "overhead": "sandbox.society.benchmarks:bench_overhead",
        "scai": "sandbox.scai.bench:bench_scai",
        "embedded": "sandbox.society.benchmarks:bench_embedded",
        "pool": "sandbox.scai.pool_bench:bench_pool",
        "principles": "sandbox.scai.principles:bench_principles",
    },
    steps="sandbox.scai.steps:STEPS",
    conformance="sandbox.scai.conformance:CASE",
    example="scenarios/default.yaml",
    view="sandbox.scai.view:view",
    headline=(
        "acceptance_rate",
        *(f"offered_share_by_norm.{norm}.mean" for norm in ("assistant", "selfish", "fair", "altruistic")),
    ),
    budget=True,
)
