"""The command line's dialogue-game commands: `sandbox solve`, `play`, `reward-model`, `agreement` and `imitate`, and what
`sandbox resume` does with their run directories.

They are registered on `sandbox.core.commands.app` when `sandbox.cli.runs` imports this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from sandbox.base.errors import SandboxError
from sandbox.base.files import read_json
from sandbox.core.commands import (
    RootSeed,
    RunOut,
    app,
    console,
    model_option,
    out_console,
    progress_bar,
    scenario_argument,
    with_progress,
)
from sandbox.core.commands import fail as _fail

__all__ = [
    "agreement_summary",
    "resume_dialogue_run",
    "reward_model_table",
    "solve",
    "solve_table",
    "solve_with_progress",
]


def solve_with_progress(job: Any) -> Path:
    """Run a solve under a Rich progress display: LLM calls while expanding, iterations while solving."""
    from sandbox.dialogue.run import SolveHooks

    progress = progress_bar(None, eta=False)
    task: Any = None

    def on_phase(what: str, total: int | None) -> None:
        nonlocal task
        if task is not None:
            progress.update(task, total=progress.tasks[task].completed)
        task = progress.add_task(what + (" (LLM calls)" if total is None else ""), total=total)

    return with_progress(
        lambda: job(SolveHooks(on_phase=on_phase, on_advance=lambda n: progress.advance(task, n))),
        progress,
        "interrupted; the calls so far are cached: `sandbox resume DIR` finishes",
    )


def resume_dialogue_run(run_dir: Path) -> bool:
    """`sandbox resume` of a reward-model or agreement measurement or a solve (True), or of none (False: not
    handled)."""
    from sandbox.dialogue.agreement import is_agreement_run, resume_agreement
    from sandbox.dialogue.reward_error import is_reward_model_run, resume_reward_model
    from sandbox.dialogue.run import is_solve_run, resume_solve

    measurements = (
        (is_agreement_run, resume_agreement, agreement_summary, "playing and scoring dialogues"),
        (is_reward_model_run, resume_reward_model, reward_model_table, "scoring templated dialogues"),
    )
    for is_run, resume, show, doing in measurements:
        if is_run(run_dir):
            try:
                with console.status(doing):
                    show(resume(run_dir))
            except SandboxError as error:
                raise _fail(error) from None
            return True
    if is_solve_run(run_dir):
        solve_table(solve_with_progress(lambda hooks: resume_solve(run_dir, hooks=hooks)))
        return True
    return False


def solve_table(path: Path) -> None:
    """Print a solve's headline figures (the paper's Table 1 and the tree's cost)."""
    s = read_json(path / "summary.json")
    tree, calls = s["tree"], s["llm_calls"]
    out_console.print(
        f"{s['scenario']}: {tree['nodes']} nodes ({tree['decision_nodes']} decisions, "
        f"{tree['terminal_nodes']} terminals), {tree['infostates']} information states; LLM calls: "
        f"{calls['messages']} messages, {calls['judgments']} judgments, {calls['rewards']} rewards, "
        f"{calls['steering']} steering; {s['seconds']['total']:.0f} s",
        highlight=False,
    )
    table = Table(
        title=f"{s['solver']['algorithm']} x {s['solver']['iterations']}: NashConv {s['nash_conv']:.4g}, "
        f"CFR Gain (mean) {s['cfr_gain_mean']:.4g}",
        title_justify="left",
    )
    for column in ("player", "any vs any", "solver vs any", "CFR Gain", "solver vs solver"):
        table.add_column(column, justify="left" if column == "player" else "right")
    for p, name in enumerate(s["players"]):
        table.add_row(
            name,
            f"{s['any_vs_any'][p]:.3f}",
            f"{s['solver_vs_any'][p]:.3f}",
            f"{s['cfr_gain'][p]:.3f}",
            f"{s['values'][p]:.3f}",
        )
    out_console.print(table)
    if s["steering_rate"] is not None:
        rows = ", ".join(f"{r['instruction']} {r['follows']}/{r['messages']}" for r in s["steering"])
        out_console.print(f"instruction following: {s['steering_rate']:.0%} ({rows})", highlight=False)
    out_console.print(
        f"results in [bold]{escape(str(path))}[/]: policy.csv, dialogues.csv, steering.csv, policy.png, payoffs.png"
    )


@app.command()
def solve(
    file: Annotated[Path, scenario_argument("A dialogue-game scenario (YAML with a dialogue: block).")],
    out: RunOut = None,
    seed: RootSeed = None,
    iterations: Annotated[int | None, typer.Option("--iterations", help="Solver iterations.")] = None,
    model: Annotated[
        list[str] | None, model_option("ROLE=SPEC with ROLE players, judge or all, e.g. players=openai:gpt-4o-mini.")
    ] = None,
) -> None:
    """Expand a dialogue game once on the LLM, solve it with CFR, and report NashConv, CFR Gain and steering."""
    from sandbox.core.scenario_files import load_scenario
    from sandbox.dialogue.run import solve_scenario
    from sandbox.dialogue.scenario import apply_dialogue_overrides

    try:
        scenario = apply_dialogue_overrides(
            load_scenario(file, kind="dialogue"), seed=seed, iterations=iterations, models=model
        )
    except SandboxError as error:
        raise _fail(error) from None
    solve_table(solve_with_progress(lambda hooks: solve_scenario(scenario, out, hooks=hooks)))


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _modes(text: str, *, both: tuple[str, ...]) -> tuple[str, ...]:
    """`--mode`: `both` (the two judge modes), or modes separated by commas."""
    from sandbox.base.errors import UsageError
    from sandbox.dialogue.reward import REWARD_MODES

    modes = both if text == "both" else tuple(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))
    unknown = [m for m in modes if m not in REWARD_MODES]
    if unknown or not modes:
        raise UsageError(f"--mode {text!r}: choose both, or of {', '.join(REWARD_MODES)} separated by commas")
    return modes


def reward_model_table(path: Path) -> None:
    """Print a reward-model measurement (the paper's Table 8)."""
    s = read_json(path / "summary.json")
    cases = s.get("cases", "templated")
    readers = f"reward model {s['judge']}" + (f", selection by {s['players']}" if "players" in s else "")
    table = Table(
        title=f"{s['scenario']}: {readers} on {s['dialogues']} {cases} dialogues "
        f"(payoffs {s['payoff_range'][0]:g} to {s['payoff_range'][1]:g})",
        title_justify="left",
    )
    for column in ("mode", "outcome", "n", "Norm", "Sgn", "illegal"):
        table.add_column(column, justify="left" if column in ("mode", "outcome") else "right")
    for row in s["table"]:
        table.add_row(
            row["mode"], row["outcome"], str(row["n"]), f"{row['norm']:.2f}", f"{row['sgn']:.2f}", str(row["illegal"])
        )
    out_console.print(table)
    files = "reward_model.csv, reward_model_error.csv"
    for row in s.get("reading") or []:
        out_console.print(
            f"{row.get('mode', 'outcome')} reading against the truth: {row['agreements']} agreements, {row['read']} read, "
            f"{row['read_right']} read right: precision {_rate(row['precision'])}, recall "
            f"{_rate(row['recall'])}, accuracy {_rate(row['accuracy'])} of {row['n']}"
        )
        files += ", reward_model_reading.csv"
    out_console.print(f"results in [bold]{escape(str(path))}[/]: {files}")


@app.command("reward-model")
def reward_model(
    file: Annotated[Path, scenario_argument("A dialogue-game scenario of the meeting or fruit domain.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Run directory (default runs/<name>-reward-<time>).")
    ] = None,
    dialogues: Annotated[
        int,
        typer.Option(
            "--dialogues", min=1, max=1000, help="Setups; three templated dialogues each (not with --labelled)."
        ),
    ] = 10,
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            help="value (the paper's), outcome, selection (the players say what "
            "was agreed), several by commas, or both (value,outcome).",
        ),
    ] = "both",
    model: Annotated[
        list[str] | None, model_option("ROLE=SPEC, e.g. judge=openai:gpt-4o-mini (players=SPEC for selection).")
    ] = None,
    labelled: Annotated[
        Path | None,
        typer.Option(
            "--labelled",
            help="A labelled set of real dialogues (JSON lines) instead of templates, e.g. "
            "scenarios/dialogue/labelled/meeting.jsonl.",
        ),
    ] = None,
) -> None:
    """Measure the LLM reward model's error on templated dialogues with known payoffs (the paper's Table 8), or on
    dialogues labelled by hand (--labelled)."""
    import time

    from sandbox.core.scenario_files import load_scenario
    from sandbox.dialogue.reward_error import measure_reward_model
    from sandbox.dialogue.scenario import apply_dialogue_overrides

    try:
        modes = _modes(mode, both=("value", "outcome"))
        scenario = apply_dialogue_overrides(load_scenario(file, kind="dialogue"), models=model)
        target = out or Path("runs") / f"{scenario.name}-reward-{time.strftime('%Y%m%d-%H%M%S')}"
        with console.status("scoring labelled dialogues" if labelled else "scoring templated dialogues"):
            path = measure_reward_model(scenario, target, dialogues=dialogues, modes=modes, labelled=labelled)
    except SandboxError as error:
        raise _fail(error) from None
    reward_model_table(path)


def agreement_summary(path: Path) -> None:
    """Print an agreement measurement: the agreement rate and mean payoffs by dialogue length."""
    s = read_json(path / "summary.json")
    table = Table(
        title=f'{s["scenario"]}: {s["dialogues"]} dialogues on "any", scored after each length', title_justify="left"
    )
    players = s["players"]
    from sandbox.dialogue.agreement import agreement_readers

    readers = agreement_readers(s["table"][0] if s["table"] else {})
    columns = [
        "messages",
        *[f"agreements by {m}: rate (95% CI)" for m, _ in readers],
        *[f"{m} payoff {name}" for m in s["modes"] for name in players],
    ]
    for column in columns:
        table.add_column(column, justify="right")
    for row in s["table"]:
        rates = [
            f"{row[f'{p}agreements']}: {row[f'{p}agreement_rate']:.0%} "
            f"({row[f'{p}ci_low']:.0%}–{row[f'{p}ci_high']:.0%})"
            for _, p in readers
        ]
        table.add_row(
            str(row["length"]),
            *rates,
            *[f"{row[f'{m}_payoff_{p}']:.2f}" for m in s["modes"] for p in range(len(players))],
        )
    out_console.print(table)
    out_console.print(
        f"results in [bold]{escape(str(path))}[/]: agreement.csv, agreement_by_length.csv, agreement_dialogues.csv, "
        "agreement_prefixes.jsonl (to label by hand), agreement.png"
    )


@app.command()
def agreement(
    file: Annotated[Path, scenario_argument("A dialogue-game scenario of the meeting or fruit domain.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Run directory (default runs/<name>-agreement-<time>).")
    ] = None,
    lengths: Annotated[str, typer.Option("--lengths", help="Dialogue lengths to score, comma-separated.")] = "2,4,6,8",
    dialogues: Annotated[int, typer.Option("--dialogues", min=1, max=1000, help="Dialogues (setups).")] = 10,
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            help="outcome, selection (the players say what was agreed), value "
            "(the paper's), several by commas, or both (outcome,value).",
        ),
    ] = "both",
    model: Annotated[
        list[str] | None, model_option("ROLE=SPEC with ROLE players, judge or all, e.g. judge=openai:gpt-4o-mini.")
    ] = None,
) -> None:
    """Play dialogues on "any" and score them after each length: the agreement rate against the number of
    messages."""
    import time

    from sandbox.base.errors import UsageError
    from sandbox.core.scenario_files import load_scenario
    from sandbox.dialogue.agreement import measure_agreement
    from sandbox.dialogue.scenario import apply_dialogue_overrides

    try:
        try:
            counts = [int(n) for n in lengths.split(",") if n.strip()]
        except ValueError:
            raise UsageError(f"--lengths {lengths!r}: give whole numbers separated by commas, e.g. 2,4,6,8") from None
        modes = _modes(mode, both=("outcome", "value"))
        scenario = apply_dialogue_overrides(load_scenario(file, kind="dialogue"), models=model)
        target = out or Path("runs") / f"{scenario.name}-agreement-{time.strftime('%Y%m%d-%H%M%S')}"
        with console.status("playing and scoring dialogues"):
            path = measure_agreement(scenario, target, lengths=counts, dialogues=dialogues, modes=modes)
    except SandboxError as error:
        raise _fail(error) from None
    agreement_summary(path)


@app.command()
def play(
    run_dir: Annotated[Path, typer.Argument(help="A finished `sandbox solve` run directory.")],
    episodes: Annotated[int, typer.Option("--episodes", min=1, max=10_000, help="Dialogues per pairing.")] = 20,
) -> None:
    """Play solver-guided agents against the baseline ("any") in new dialogues; payoffs with 95% CIs beside the
    solver's prediction."""
    from sandbox.dialogue.play import play as play_run

    try:
        with console.status(f"playing {episodes} dialogues per pairing"):
            path = play_run(run_dir, episodes=episodes)
    except SandboxError as error:
        raise _fail(error) from None
    s = read_json(path / "summary.json")
    table = Table(title=f"{s['scenario']}: {s['play']['episodes']} new dialogues per pairing", title_justify="left")
    for column in ("pairing", "player", "plays", "payoff", "95% CI", "solver's prediction", "fallback", "illegal"):
        table.add_column(column, justify="left" if column in ("pairing", "plays") else "right")
    for r in s["play"]["rows"]:
        ci = "n/a" if r["ci_low"] is None else f"{r['ci_low']:.2f} – {r['ci_high']:.2f}"
        table.add_row(
            r["pairing"],
            s["players"][r["player"]],
            r["plays"],
            f"{r['mean']:.2f}",
            ci,
            f"{r['predicted']:.2f}",
            f"{r['fallback_rate']:.2f}",
            str(r["illegal"]),
        )
    out_console.print(table)
    out_console.print(f"results in [bold]{escape(str(path))}[/]: play.csv, play_summary.csv")


@app.command()
def imitate(
    run_dirs: Annotated[list[Path], typer.Argument(help="Solved dialogue runs (their policy.csv).")],
    out: Annotated[Path, typer.Option("--out", help="Directory for imitation.csv and imitation.json.")],
    holdout: Annotated[float, typer.Option("--holdout", min=0.01, max=0.99, help="Share of games held out.")] = 0.25,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the split and the network.")] = 0,
    steps: Annotated[int, typer.Option("--steps", min=1, max=100_000, help="Adam steps.")] = 500,
    features: Annotated[
        str,
        typer.Option(
            "--features",
            help="The network's input: embedding (the paper's), "
            "parameters (the private information as numbers) or both.",
        ),
    ] = "embedding",
) -> None:
    """Fit a small network on embedded information states to CFR's policies; its agreement on held-out games."""
    from sandbox.dialogue.imitation import imitate as fit_imitation

    try:
        with console.status("embedding information states and fitting"):
            s = fit_imitation(run_dirs, out, holdout=holdout, seed=seed, steps=steps, features=features)  # type: ignore[arg-type]
    except SandboxError as error:
        raise _fail(error) from None
    out_console.print(
        f"trained on {s['train_states']} states of {s['train_games']} games; on {s['test_states']} "
        f"states of {s['test_games']} held-out games the network agrees with CFR's choice "
        f"{s['agreement']:.0%} of the time (mean policy {s['agreement_mean_policy']:.0%}); total "
        f"variation to CFR {s['tv_network']:.3f} (mean policy {s['tv_mean_policy']:.3f})",
        highlight=False,
    )
    out_console.print(f"results in [bold]{escape(str(out))}[/]: imitation.csv, imitation.json")
