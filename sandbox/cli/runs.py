"""The command line: run, resume and evaluate any kind of run (validate, schema, models, bench:
`sandbox.cli.tools`); each registered kind adds its own commands (`sandbox.core.kinds.RunKind.commands`: train,
label, distill, solve, sweep, compare, ...).

Exit codes: 0 success; 2 invalid input (nothing written, no run directory
created), or a run directory another process holds; 1 runtime failure (the
run directory stays resumable); 3 a budget's cap reached (the run stopped
cleanly; resume it with a higher cap); 130 interrupted (resumable too).
"""

from __future__ import annotations

import functools
import importlib
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

import typer

from sandbox.base.collector import during_run
from sandbox.base.errors import SandboxError, UsageError
from sandbox.base.extras import MissingExtraError, extra_of, install_line
from sandbox.cli.costs import print_costs
from sandbox.core import kinds
from sandbox.core.commands import RootSeed, RunOut, app, model_option, scenario_argument, set_option
from sandbox.core.commands import fail as _fail
from sandbox.core.scenario_files import with_sets, with_tracking

MaxCalls = Annotated[
    int | None, typer.Option("--max-calls", min=0, help="Budget: most LLM calls that reach a model (budget.calls).")
]
MaxTokens = Annotated[
    int | None, typer.Option("--max-tokens", min=0, help="Budget: most prompt + answer tokens (budget.tokens).")
]
MaxCost = Annotated[
    float | None,
    typer.Option("--max-cost", min=0.0, help="Budget: most US dollars, at models.<role>.price (budget.usd)."),
]


def _given(**options: Any) -> dict[str, Any]:
    """The options given on the command line (not None, not False, not empty)."""
    return {k: v for k, v in options.items() if v is not None and v is not False and v != []}


@app.command()
def run(
    file: Annotated[
        Path,
        scenario_argument(
            "A scenario file (YAML) of any kind: a society, training, labeling, distillation, dialogue game or sweep."
        ),
    ],
    out: RunOut = None,
    runs: Annotated[int | None, typer.Option("--runs", help="Society runs: independent runs.")] = None,
    epochs: Annotated[int | None, typer.Option("--epochs", help="Society runs: epochs per run.")] = None,
    seed: RootSeed = None,
    model: Annotated[
        list[str] | None, model_option("ROLE=SPEC, e.g. user=openai:gpt-4o-mini; ROLE may be all. Repeatable.")
    ] = None,
    max_calls: MaxCalls = None,
    max_tokens: MaxTokens = None,
    max_cost: MaxCost = None,
    sets: Annotated[list[str] | None, set_option()] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Print the LLM calls and tokens per role a run would take, and call no model."),
    ] = False,
    track: Annotated[
        str | None,
        typer.Option(
            "--track",
            help="Log the run to MLflow at this tracking URI (e.g. file:./mlruns), as a tracking: block does; needs the tracking extra.",
        ),
    ] = None,
) -> None:
    """Run a scenario of any kind and write a run directory."""
    from sandbox.core.scenario_files import load_scenario

    try:
        scenario = load_scenario(file)
        if sets:
            scenario = with_sets(scenario, sets, f"{file} (--set)")
        kind = kinds.kind_of_scenario(scenario)
        options = _given(
            seed=seed,
            models=model,
            runs=runs,
            epochs=epochs,
            max_calls=max_calls,
            max_tokens=max_tokens,
            max_cost=max_cost,
        )
        if options:
            if not kind.has("overrides"):
                raise UsageError(
                    f"{file} is {kind.title or 'a ' + kind.name + ' scenario'}: give its options with "
                    f"`sandbox {kind.command}`"
                )
            kinds.by_option(
                options, kind.run_options, f"{kind.name} runs (`sandbox {kind.command}` has the kind's own)"
            )
            scenario = kind.call("overrides", scenario, source="<command line>", **options)
        if track is not None:
            scenario = with_tracking(scenario, track)
        kind.require(scenario)  # the extras it needs (a dry run's too), before anything is written
        if dry_run:
            from sandbox.core.dry_run import dry_run_table

            runs = kind.call("expand", scenario, str(file)) if kind.has("expand") else [(kind.name, scenario)]
            what = (
                kind.call("dry_run_size", scenario)
                if kind.has("dry_run_size")
                else f" of {len(runs)} runs"
                if kind.has("expand")
                else ""
            )
            dry_run_table(runs, f"{scenario.name}: a dry run{what}, no model called")
            return
        if not kind.has("cli_run"):
            raise UsageError(f"{kind.name} runs have no `sandbox run`; use `sandbox {kind.command}`")
    except SandboxError as error:
        raise _fail(error) from None
    path = kind.call("cli_run", scenario, out, source=str(file))
    print_costs(path if isinstance(path, Path) else None)


@app.command()
def resume(
    run_dir: Annotated[Path, typer.Argument(help="A run directory left by an interrupted run.")],
    device: Annotated[
        str | None,
        typer.Option("--device", help="Training runs: cpu, cuda, cuda:N instead of the run's models.device."),
    ] = None,
    max_calls: MaxCalls = None,
    max_tokens: MaxTokens = None,
    max_cost: MaxCost = None,
    executor: Annotated[
        str | None, typer.Option("--executor", help="Sweeps: local or ray, instead of the sweep's.")
    ] = None,
    address: Annotated[str | None, typer.Option("--address", help="Sweeps: a Ray cluster's address.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Sweeps: runs at once.")] = None,
) -> None:
    """Continue an interrupted run of any kind (a society, training, labeling, distillation, solve run or a sweep)
    from its last checkpoint."""
    from sandbox.core.run_dir import hold

    with ExitStack() as held:
        try:
            kind = kinds.kind_of_dir(run_dir)
            options = _given(
                device=device,
                max_calls=max_calls,
                max_tokens=max_tokens,
                max_cost=max_cost,
                executor=executor,
                address=address,
                workers=workers,
            )
            held.enter_context(
                hold(run_dir, create=False)
            )  # for the whole command: a second resume exits 2, naming this one
            kind.call("cli_resume", run_dir, **options)
            print_costs(run_dir)
        except SandboxError as error:
            raise _fail(error) from None


@app.command()
def evaluate(
    run_dir: Annotated[Path, typer.Argument(help="A finished SCAI run directory, or a distillation run directory.")],
    trials: Annotated[int | None, typer.Option("--trials", help="Proposals per condition and run.")] = None,
    currency: Annotated[
        list[str] | None,
        typer.Option("--currency", help="SCAI: test on this currency, e.g. 'grams of medicine'. Repeatable."),
    ] = None,
    amount: Annotated[
        list[int] | None,
        typer.Option("--amount", help="SCAI: test on this amount, e.g. 2220000000. Repeatable."),
    ] = None,
    reason: Annotated[
        bool, typer.Option("--reason", help="SCAI: ask the assistant for the reason of each proposal.")
    ] = False,
    prior: Annotated[
        str | None,
        typer.Option("--prior", help='SCAI: state this prior at test time, before the principle (Fig. 3b); "": none.'),
    ] = None,
    learned_on: Annotated[
        bool | None,
        typer.Option(
            "--learned-on/--no-learned-on", help="SCAI: say what the principle was learned on, and ask to weigh it."
        ),
    ] = None,
) -> None:
    """Evaluate a finished run as its kind does: a SCAI run's final policy on new currencies and amounts
    (generalisation); a distillation's student, policy-prompted assistant, users and base model."""
    try:
        kind = kinds.kind_of_dir(run_dir)
        if not kind.has("cli_evaluate"):
            takes = ", ".join(k.name for k in kinds.kinds().values() if k.has("cli_evaluate"))
            raise UsageError(f"`sandbox evaluate` takes {takes} runs; {run_dir} is a {kind.label(run_dir)} run")
        options = {
            k: v
            for k, v in dict(
                trials=trials, currency=currency, amount=amount, reason=reason, prior=prior, learned_on=learned_on
            ).items()
            if v is not None
        }
        kind.call("cli_evaluate", run_dir, **options)
    except SandboxError as error:
        raise _fail(error) from None


def load_commands() -> None:
    """Import every registered kind's command modules, so their commands join `app`; each of a kind's commands
    checks the kind's extras (`RunKind.extras`) before it starts (exit 2 with the `pip install` line)."""
    importlib.import_module("sandbox.cli.tools")
    importlib.import_module("sandbox.cli.branches")
    importlib.import_module("sandbox.viewer.commands")
    for kind in kinds.kinds().values():
        for module in kind.commands:
            importlib.import_module(module)
        if kind.extras:
            for command in app.registered_commands:
                callback = command.callback
                if getattr(callback, "__module__", None) in kind.commands and not hasattr(callback, "__wrapped__"):
                    command.callback = _requiring(kind, callback)


def _requiring(kind: kinds.RunKind, callback: Any) -> Any:
    """`callback` (a command), checking `kind`'s extras first; Typer reads the wrapped function's parameters."""

    @functools.wraps(callback)
    def command(*args: Any, **kwargs: Any) -> Any:
        try:
            kind.require()
        except SandboxError as error:
            raise _fail(error) from None
        return callback(*args, **kwargs)

    return command


def main() -> None:
    """Entry point of the `sandbox` command (and of `python -m sandbox`)."""
    if _LOAD_ERROR is not None:  # a kind that cannot be loaded: exit 2 with the reason, not a traceback
        raise SystemExit(_fail(_LOAD_ERROR).exit_code)
    try:
        with during_run(keep=True):  # the collector's full collections skip the run's live state (its module)
            app()
    except SandboxError as error:  # one a command left uncaught: its message and exit code, not a traceback
        raise SystemExit(_fail(error).exit_code) from None
    except ModuleNotFoundError as error:  # an optional extra's module that a command reached: name the extra
        extra = extra_of(error.name or "")
        if extra is None:
            raise
        raise SystemExit(
            _fail(
                MissingExtraError(
                    f"this command needs the {extra} extra ({error.name} is not installed): {install_line([extra])}"
                )
            ).exit_code
        ) from None


_LOAD_ERROR: SandboxError | None = None
try:
    load_commands()  # the kinds' commands join `app` when this module is imported (tests invoke `app` directly)
except SandboxError as error:
    _LOAD_ERROR = error

if __name__ == "__main__":
    main()
