"""The command line's tools around runs: validate (scenario and sweep files), schema, models, bench.

Registered on `sandbox.cli_app.app` when `sandbox.cli` imports this module.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from sandbox.cli_app import app, console, out_console
from sandbox.cli_app import fail as _fail
from sandbox.errors import SandboxError, ScenarioError

__all__ = ["bench", "models", "schema", "validate"]


@app.command()
def validate(files: Annotated[list[Path], typer.Argument(help="Scenario files of any kind (sweep files too).")]) -> None:
    """Check scenario files; print every problem with its field path."""
    from sandbox.kinds import kind_of_scenario
    from sandbox.scenario_file import load_scenario

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
        out_console.print(f"{file}: ok ({scenario.name}: {what})", highlight=False, markup=False, soft_wrap=True)
    if bad:
        raise typer.Exit(2)


@app.command()
def schema(
    kind: Annotated[Optional[str], typer.Argument(help="A run kind (society, training, proxy, distill, dialogue, sweep, ...); default: every kind.")] = None,  # noqa: UP007
) -> None:
    """Print the JSON Schema of scenario files (for editor completion): one kind's, or any kind's."""
    from sandbox.scenario_file import scenario_json_schema

    try:
        sys.stdout.write(scenario_json_schema(kind) + "\n")
    except SandboxError as error:
        raise _fail(error) from None


@app.command()
def models() -> None:
    """List the model backends and whether the embedded model is installed."""
    from sandbox.llm.embedded_model import PARTS, status

    state = status()
    table = Table(title="Model backends", title_justify="left")
    table.add_column("spec")
    table.add_column("what")
    table.add_column("status")
    if state.missing:
        embedded = f"[red]{state.parts_found}/{PARTS} parts installed[/] (run make install)"
    elif state.assembled:
        embedded = f"[green]ready[/] ({state.path})"
    else:
        embedded = f"[yellow]parts installed[/]; joined on first use into {state.path}"
    from sandbox.llm.embedded_tuning import EmbeddedSettings

    chosen = EmbeddedSettings().resolve(str(state.path)).machine()
    machine = f"{chosen['slots']} slot(s), {chosen['threads']} threads on {chosen['usable_cores']} usable cores"
    table.add_row("embedded", f"Qwen2.5-Coder-1.5B-Instruct Q4_K_M, in-process (xllamacpp); here: {machine}", embedded)
    table.add_row("openai:MODEL", "any OpenAI-compatible endpoint (OPENAI_BASE_URL, OPENAI_API_KEY)", "available")
    table.add_row("hf:PATH", "a transformers model directory", "available")
    try:
        import importlib.util

        vllm = "installed" if importlib.util.find_spec("vllm") else "not installed (extra: vllm)"
    except ValueError:
        vllm = "not installed (extra: vllm)"
    table.add_row("vllm:MODEL", "in-process vLLM (GPU)", vllm)
    table.add_row("scripted", "tests only, through the Python API", "-")
    out_console.print(table)


@app.command()
def bench(
    which: Annotated[str, typer.Argument(help="A benchmark of a registered kind (concurrency, overhead, scai, embedded, pool, rollout, training, dialogue, sweep, ...) or all.")] = "all",
) -> None:
    """Benchmarks of every registered kind, each a ratio against a baseline measured in the same run."""
    from sandbox.bench import run_benchmarks

    try:
        run_benchmarks(which)
    except SandboxError as error:
        raise _fail(error) from None
