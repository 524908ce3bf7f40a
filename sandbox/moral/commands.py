"""The command line's moral fine-tuning commands: `sandbox train` (one seed or `--seeds N`) and `sandbox evaluate-moral`.

They are registered on `sandbox.core.commands.app` when `sandbox.cli.runs` imports this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from sandbox.base.errors import SandboxError, UsageError
from sandbox.base.files import read_csv, read_json
from sandbox.core.commands import RootSeed, RunOut, app, out_console, progress_bar, scenario_argument, with_progress
from sandbox.core.commands import fail as _fail

__all__ = ["evaluate_moral", "evaluation_tables", "seeds_table", "train", "train_table", "train_with_progress"]


def train_with_progress(job: Any) -> Path:
    """Run a training job under a Rich progress bar over episodes, with the last episode's action types."""
    from sandbox.training.progress import episodes_with_progress

    return episodes_with_progress(
        job,
        "training",
        lambda row: (
            f"C|C {row['C|C']:.0%} C|D {row['C|D']:.0%} D|C {row['D|C']:.0%} D|D {row['D|D']:.0%} "
            f"illegal {row['illegal']:.0%} kl {row['kl']:.2f}"
        ),
    )


def train_table(path: Path) -> None:
    summary = read_json(path / "summary.json")
    table = Table(
        title=f"{summary['scenario']}: {summary['reward']} vs {summary['opponent']}, action types over "
        f"the last tenth of {summary['episodes']} episodes",
        title_justify="left",
    )
    for column in ("C|C", "C|D", "D|C", "D|D", "illegal"):
        table.add_column(column, justify="right")
    rates = summary["final_action_rates"]
    table.add_row(
        *(f"{rates[name]:.1%}" for name in ("C|C", "C|D", "D|C", "D|D")), f"{summary['final_illegal_rate']:.1%}"
    )
    out_console.print(table)
    rewards = ", ".join(f"{kind} {value:+.2f}" for kind, value in summary["final_rewards"].items())
    out_console.print(f"rewards per round: {rewards}; {summary['seconds_per_episode']:.2f} s per episode")
    if "proxy" in summary:
        proxy = summary["proxy"]
        for name, figures in proxy["objectives"].items():
            out_console.print(
                f"proxy:{name}: the judge named {figures['judge_options']}, the truth is "
                f"{figures['true_options']} (score {figures['labeling_score']:.2f}); agent accuracy "
                f"on the truth {figures['agent_accuracy']:.1%}"
            )
        out_console.print(
            f"judge calls {proxy['judge_calls']} for {proxy['distinct_episodes']} distinct episodes "
            f"({proxy['judge_cache_hits']} cache hits), none during training"
        )
    out_console.print(f"results in [bold]{escape(str(path))}[/] (adapter in {escape(str(path / summary['adapter']))})")


@app.command()
def train(
    file: Annotated[Path | None, scenario_argument("A training scenario (YAML with a training: block).")] = None,
    out: RunOut = None,
    episodes: Annotated[int | None, typer.Option("--episodes", help="Episodes (training steps).")] = None,
    seed: RootSeed = None,
    policy: Annotated[
        str | None, typer.Option("--policy", help="Base model: tiny, hf:PATH, gguf:FILE, embedded, smollm2.")
    ] = None,
    ppo: Annotated[
        list[str] | None,
        typer.Option(
            "--ppo", help="FIELD=VALUE of training.ppo, e.g. learning_rate=1e-4 (see --help-ppo). Repeatable."
        ),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", help="ROLE=SPEC: policy=... (as --policy) or judge=openai:MODEL (judges proxy rewards)."
        ),
    ] = None,
    device: Annotated[
        str | None, typer.Option("--device", help="cpu, cuda, cuda:N (models.device); an absent device is an error.")
    ] = None,
    seeds: Annotated[
        int | None,
        typer.Option("--seeds", help="Train N runs, seeds SEED..SEED+N-1, into OUT/seed-K, aggregated with 95% CIs."),
    ] = None,
    help_ppo: Annotated[
        bool, typer.Option("--help-ppo", help="List the PPO fields with their help text and exit.")
    ] = False,
) -> None:
    """Fine-tune a model on an iterated matrix game with an intrinsic moral reward (PPO, GRPO or RLOO; LoRA)."""
    from sandbox.core.scenario_files import load_scenario
    from sandbox.moral.run import train_scenario
    from sandbox.moral.scenario import apply_training_overrides

    if help_ppo:
        from sandbox.training.ppo_config import PPOConfig

        table = Table(title="training.ppo fields (--ppo FIELD=VALUE)", title_justify="left")
        for column in ("field", "default", "help"):
            table.add_column(column)
        defaults = PPOConfig()
        for name, text in PPOConfig.help().items():
            table.add_row(name, repr(getattr(defaults, name)), text)
        out_console.print(table)
        out_console.print("In a scenario, batch_size defaults to parallel x rounds and mini_batch_size to batch_size.")
        return
    if file is None:
        raise _fail(UsageError("give a training scenario file: sandbox train FILE"))
    try:
        scenario = apply_training_overrides(
            load_scenario(file, kind="training"),
            episodes=episodes,
            seed=seed,
            policy=policy,
            ppo=ppo,
            models=model,
            device=device,
        )
    except SandboxError as error:
        raise _fail(error) from None
    if seeds is not None:
        from sandbox.moral.across_seeds import train_seeds

        seeds_table(train_with_progress(lambda hooks: train_seeds(scenario, seeds, out, hooks=lambda _: hooks)))
        return
    train_table(train_with_progress(lambda hooks: train_scenario(scenario, out, hooks=hooks)))


def seeds_table(path: Path) -> None:
    """The action types of a group of seeds: each seed's, and their mean with the 95% CI across seeds."""
    summary = read_json(path / "summary.json")
    seeds = read_csv(path / "seeds.csv")
    table = Table(
        title=f"{summary['scenario']}: {summary['reward']} vs {summary['opponent']}, action types over the "
        f"last tenth of {summary['episodes']} episodes, {len(seeds)} seeds",
        title_justify="left",
    )
    from sandbox.moral.across_seeds import ACTIONS as names

    for column in ("seed", *names):
        table.add_column(column, justify="right")
    for row in seeds.to_dict("records"):
        table.add_row(str(row["seed"]), *(f"{row[name]:.1%}" for name in names))
    rates = summary["final_action_rates"]

    def cell(name: str) -> str:
        r = rates[name]
        return f"{r['mean']:.1%}" + ("" if r["ci_low"] is None else f" [{r['ci_low']:.1%}, {r['ci_high']:.1%}]")

    table.add_row("mean [95% CI]", *(cell(name) for name in names))
    out_console.print(table)
    out_console.print(
        f"{summary['seconds_per_episode']:.2f} s per episode; results in [bold]{escape(str(path))}[/] "
        "(seeds.csv, action_types.csv, seed-K/)"
    )


@app.command("evaluate-moral")
def evaluate_moral(
    run_dir: Annotated[Path, typer.Argument(help="A finished training run directory, or a group of seeds.")],
    device: Annotated[
        str | None, typer.Option("--device", help="cpu, cuda, cuda:N: instead of the scenario's models.device.")
    ] = None,
) -> None:
    """Play the trained adapter on five games against a random opponent: moral regret and action types."""
    from sandbox.moral.across_seeds import evaluate_seeds, is_seed_group
    from sandbox.moral.evaluation import evaluate_run

    progress = progress_bar("evaluating", "games", eta=False)
    task: Any = None

    def on_start(total: int) -> None:
        nonlocal task
        task = progress.add_task("evaluating", total=total)

    evaluate = evaluate_seeds if is_seed_group(run_dir) else evaluate_run
    entry = with_progress(
        lambda: evaluate(run_dir, device=device, on_start=on_start, on_game=lambda: progress.advance(task)),
        progress,
        "interrupted; the games played so far are lost: run `sandbox evaluate-moral DIR` again",
    )
    evaluation_tables(entry)
    out_console.print(
        f"results in [bold]{escape(str(run_dir))}[/]: moral_regret.csv, test_action_types.csv, evaluation_rounds.csv"
    )


def evaluation_tables(entry: dict[str, Any]) -> None:
    """Per token condition and table order: each game's regrets (both metrics) and action types, per policy."""
    import pandas as pd

    regret, actions = pd.DataFrame(entry["regret"]), pd.DataFrame(entry["action_types"])
    regret["column"] = regret["metric"] + " " + regret["kind"].str[:3]
    wide = regret.pivot_table(
        index=["condition", "order", "game", "policy"], columns="column", values="mean", sort=False
    )
    for (condition, order), block in actions.groupby(["condition", "order"], sort=False):
        tokens = entry["conditions"][condition]["tokens"]
        table = Table(
            title=f"{condition} tokens (C={tokens['C']}, D={tokens['D']}), table {order}, against "
            f"{entry['opponent']}: moral regret (deo in reward units, uti 0-1), counterfactual "
            "regret (0-1), action types",
            title_justify="left",
        )
        columns = ["moral deo", "moral uti", "counterfactual deo", "counterfactual uti"]
        for column in ("game", "policy", *columns, "C|C", "C|D", "D|C", "D|D", "illegal"):
            table.add_column(column, justify="left" if column in ("game", "policy") else "right")
        for row in block.to_dict("records"):
            regrets = wide.loc[(condition, order, row["game"], row["policy"])]
            table.add_row(
                row["game"],
                row["policy"],
                *(f"{regrets[c]:.2f}" for c in columns),
                *(f"{row[name]:.0%}" for name in ("C|C", "C|D", "D|C", "D|D", "illegal")),
            )
        out_console.print(table)
