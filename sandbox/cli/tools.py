"""The command line's tools around runs: validate (scenario and sweep files), schema, models, bench, and the
shipped examples (`sandbox examples list`, `sandbox examples copy`).

Registered on `sandbox.core.commands.app` when `sandbox.cli.runs` imports this module.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from sandbox.base.errors import SandboxError, ScenarioError
from sandbox.core.commands import app, console, out_console, scenario_argument
from sandbox.core.commands import fail as _fail

__all__ = ["bench", "examples_app", "examples_copy", "examples_list", "models", "schema", "validate"]

examples_app = typer.Typer(
    help="The example scenarios and notebooks shipped with the package: list them, copy them out.", no_args_is_help=True
)
app.add_typer(examples_app, name="examples")


@examples_app.command("list")
def examples_list(
    kind: Annotated[str | None, typer.Option("--kind", help="Only scenario or notebook.")] = None,
    match: Annotated[str | None, typer.Option("--match", help="Only names that contain this text.")] = None,
) -> None:
    """List the shipped examples by name, with a line on each (`sandbox run NAME` runs a scenario)."""
    from sandbox.base.errors import UsageError
    from sandbox.examples import examples

    if kind not in (None, "scenario", "notebook"):
        raise _fail(UsageError(f"--kind is scenario or notebook, not {kind!r}")) from None
    table = Table("name", "kind", "description", title="shipped examples (sandbox examples copy NAME|all DIR)")
    for example in examples():
        if (kind is None or example.kind == kind) and (match is None or match in example.name):
            table.add_row(escape(example.name), example.kind, escape(example.description))
    out_console.print(table)


@examples_app.command("copy")
def examples_copy(
    names: Annotated[list[str], typer.Argument(help="Example names (sandbox examples list), or all.")],
    target: Annotated[Path, typer.Argument(help="The folder to write them into (scenarios/ and notebooks/ under it).")],
    force: Annotated[bool, typer.Option("--force", help="Overwrite files that exist.")] = False,
) -> None:
    """Write examples out to edit and run: a scenario with the files it names (a sweep's base, a chain's society,
    an edge list), so its relative paths still resolve."""
    from sandbox.examples import copy_examples

    try:
        written = copy_examples(names, target, force=force)
    except SandboxError as error:
        raise _fail(error) from None
    for path in written:
        out_console.print(str(path), highlight=False, markup=False, soft_wrap=True)
    console.print(f"{len(written)} file(s) written under {escape(str(target))}", highlight=False, soft_wrap=True)


@app.command()
def validate(files: Annotated[list[Path], scenario_argument("Scenario files of any kind (sweep files too).")]) -> None:
    """Check scenario files; print every problem with its field path."""
    from sandbox.base.extras import extra_of, install_line
    from sandbox.core.kinds import kind_of_scenario
    from sandbox.core.scenario_files import load_scenario

    bad = 0
    for file in files:
        try:
            scenario = load_scenario(file)
            kind = kind_of_scenario(scenario)
            what = kind.call("describe", scenario, source=str(file)) if kind.has("describe") else kind.name
        except ScenarioError as error:
            bad += 1
            console.print(str(error), highlight=False, markup=False, soft_wrap=True)
            continue
        except ModuleNotFoundError as error:  # its validation reads an extra's library (a trainer's, axelrod's)
            extra = extra_of(error.name or "")
            if extra is None:
                raise
            bad += 1
            console.print(
                f"{file}: cannot be checked without the {extra} extra: {install_line([extra])}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
            continue
        out_console.print(f"{file}: ok ({scenario.name}: {what})", highlight=False, markup=False, soft_wrap=True)
    if bad:
        raise typer.Exit(2)


@app.command()
def schema(
    kind: Annotated[
        str | None,
        typer.Argument(
            help="A run kind (society, training, proxy, distill, dialogue, sweep, ...); default: every kind."
        ),
    ] = None,
) -> None:
    """Print the JSON Schema of scenario files (for editor completion): one kind's, or any kind's."""
    from sandbox.core.scenario_files import scenario_json_schema

    try:
        sys.stdout.write(scenario_json_schema(kind) + "\n")
    except SandboxError as error:
        raise _fail(error) from None


@app.command()
def models() -> None:
    """List the model backends, whether the embedded model is installed, and which optional extras are."""
    from sandbox.llm.embedded_model import PARTS, status

    state = status()
    table = Table(title="Model backends", title_justify="left")
    table.add_column("spec")
    table.add_column("what")
    table.add_column("status")
    if state.missing:
        embedded = f"[red]{state.parts_found}/{PARTS} parts installed[/] (run make install)"
    elif state.assembled:
        embedded = f"[green]ready[/] ({escape(str(state.path))})"
    else:
        embedded = f"[yellow]parts installed[/]; joined on first use into {escape(str(state.path))}"
    from sandbox.llm.embedded_tuning import EmbeddedSettings

    chosen = EmbeddedSettings().resolve(str(state.path)).machine()
    machine = f"{chosen['slots']} slot(s), {chosen['threads']} threads on {chosen['usable_cores']} usable cores"
    table.add_row("embedded", f"Qwen2.5-Coder-1.5B-Instruct Q4_K_M, in-process (xllamacpp); here: {machine}", embedded)
    table.add_row(
        "openai:MODEL",
        "any OpenAI-compatible endpoint (OPENAI_BASE_URL, OPENAI_API_KEY); ?requests_per_minute=N&tokens_per_minute=N",
        "available",
    )
    from sandbox.base.extras import EXTRAS, install_line, missing

    def extra(name: str) -> str:
        return f"[yellow]not installed[/] ({escape(install_line([name]))})" if missing(name) else "available"

    table.add_row("hf:PATH", "a transformers model directory", extra("train"))
    table.add_row("vllm:MODEL", "in-process vLLM (GPU)", extra("vllm"))
    table.add_row(
        "rules:FILE.py:FUNCTION",
        "a Python function's answers, for a dry pipeline: not an LLM (docs/api.md)",
        "available",
    )
    table.add_row("scripted", "tests only, through the Python API", "-")
    out_console.print(table)
    extras = Table(title="Optional extras", title_justify="left")
    extras.add_column("extra")
    extras.add_column("modules")
    extras.add_column("status")
    for name, modules in EXTRAS.items():
        extras.add_row(name, ", ".join(modules), extra(name))
    out_console.print(extras)


@app.command()
def bench(
    which: Annotated[
        str,
        typer.Argument(
            help="A benchmark of a registered kind (concurrency, overhead, scai, embedded, pool, rollout, training, dialogue, sweep, ...) or all."
        ),
    ] = "all",
) -> None:
    """Benchmarks of every registered kind, each a ratio against a baseline measured in the same run."""
    from sandbox.core.bench import run_benchmarks

    try:
        run_benchmarks(which)
    except SandboxError as error:
        raise _fail(error) from None
