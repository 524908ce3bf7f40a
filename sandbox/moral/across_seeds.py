"""One training scenario over several seeds, aggregated with 95% CIs across seeds (as the paper's figures are).

`sandbox train FILE --seeds N --out DIR` trains seeds SEED, SEED+1, ...,
SEED+N-1 (SEED is the scenario's) one after another, each its own run
directory; `sandbox resume DIR` finishes what a kill left (finished seeds are
skipped, a half-trained one resumes from its checkpoint) and the aggregate is
the same as an uninterrupted run's; `sandbox evaluate-moral DIR` evaluates
every seed and aggregates its regret.

Layout:
    seeds.json            the seeds (marks the directory as a group of seeds)
    scenario.yaml         the scenario, at its own seed
    seed-K/               the training run of seed K (a run directory of its own)
    seeds.csv             one row per seed: final action rates, illegal rate, final rewards, seconds per episode
    action_types.csv      per action type: the mean over seeds and its 95% CI across seeds
    training_actions.png  action types over training, the mean over seeds with its 95% CI band
    summary.json          the above as headline figures
  after `sandbox evaluate-moral DIR`:
    moral_regret.csv      per policy, condition, order, game, metric and kind: the mean over seeds of each
                          seed's mean regret, and its 95% CI across seeds
    test_action_types.csv per policy, condition, order and game: the mean over seeds of each action type's
                          share, and its 95% CI across seeds (NAME_ci_low, NAME_ci_high)
    moral_regret[_COND][_ORDER].png, test_action_types[_COND][_ORDER].png   Fig. 4 and 5 style, across seeds
    summary.json          gains an `evaluation` entry (the above)

The intervals across seeds are the authors' (`training.seed_ci: normal`,
1.96 x sd / sqrt(n), `plotting.py`), or Student's t (`seed_ci: t`, wider and
right for few seeds). On CUDA a resumed group is statistically, not bitwise,
the same as an uninterrupted one (see `sandbox.moral.run`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from sandbox.base.errors import UsageError
from sandbox.base.files import read_csv, read_json
from sandbox.base.stats import json_number, json_records, mean_ci
from sandbox.core.run_dir import SCENARIO, RunDirectory, atomic_write_text, default_out, hold, holding, run_status
from sandbox.core.summary import write_summary
from sandbox.moral.scenario import TrainingScenario
from sandbox.rewards.intrinsic import ACTION_TYPES

__all__ = [
    "SEEDS",
    "aggregate_evaluations",
    "aggregate_seeds",
    "evaluate_seeds",
    "is_seed_group",
    "resume_seeds",
    "seed_dir",
    "train_seeds",
]

SEEDS = "seeds.json"
ACTIONS = (*ACTION_TYPES, "illegal")


def is_seed_group(path: Path | str) -> bool:
    """Whether `path` is a group of seeds (it holds `seeds.json`)."""
    return (Path(path) / SEEDS).is_file()


def seed_dir(path: Path | str, seed: int) -> Path:
    """The run directory of one seed of a group."""
    return Path(path) / f"seed-{seed}"


def _scenario(path: Path) -> TrainingScenario:
    from sandbox.core.scenario_files import load_scenario

    return load_scenario(path / SCENARIO, kind="training")


def group_seeds(path: Path) -> list[int]:
    """The seeds of a group, from its `seeds.json`."""
    try:
        return [int(s) for s in read_json(path / SEEDS)["seeds"]]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UsageError(f"{path / SEEDS} is not a list of seeds: {error}") from None


def train_seeds(
    scenario: TrainingScenario,
    seeds: int,
    out: Path | str | None = None,
    *,
    hooks: Callable[[int], Any] | None = None,
    **kwargs: Any,
) -> Path:
    """Train `scenario` at `seeds` seeds (its own seed and the next ones) into a new directory; return its path.

    Args:
        scenario: The training scenario.
        seeds: How many seeds (at least 2).
        out: The directory (default `runs/<name>-<time>`); it must not hold files.
        hooks: The progress callbacks of each seed's run (`seed -> TrainHooks`).
        kwargs: Passed to `train_scenario` (`model`, `tokenizer`, `judge`).
    """
    if seeds < 2:
        raise UsageError(f"--seeds takes 2 or more seeds, got {seeds}; train one seed without it")
    path = Path(out) if out is not None else default_out(scenario)
    RunDirectory.check_new(path)
    created = not path.exists()
    with hold(path):
        atomic_write_text(path / SCENARIO, yaml.safe_dump(scenario.model_dump(mode="json"), sort_keys=False))
        atomic_write_text(path / SEEDS, json.dumps({"seeds": [scenario.seed + k for k in range(seeds)]}))
        try:
            return resume_seeds(path, hooks=hooks, **kwargs)
        except BaseException:
            if not any(seed_dir(path, s).exists() for s in group_seeds(path)):  # the first model never loaded
                if created:
                    shutil.rmtree(path, ignore_errors=True)
                else:  # a directory the user made stays, as empty as it came
                    for name in (SCENARIO, SEEDS):
                        (path / name).unlink(missing_ok=True)
            raise


@holding
def resume_seeds(
    path: Path | str, *, hooks: Callable[[int], Any] | None = None, device: str | None = None, **kwargs: Any
) -> Path:
    """Train the seeds a group still lacks (finished ones are skipped, a started one resumes), then aggregate.

    `device` overrides the scenario's `models.device` (a group started on a GPU, finished on a CPU).
    """
    from sandbox.moral.run import on_device, resume_training, train_scenario

    path = Path(path)
    scenario = on_device(_scenario(path), device)
    for seed in group_seeds(path):
        run = seed_dir(path, seed)
        own = scenario.model_copy(update={"seed": seed})
        if run_status(run) == "complete":
            continue
        if (run / SCENARIO).is_file():
            resume_training(run, hooks=hooks(seed) if hooks else None, device=device, **kwargs)
        else:
            shutil.rmtree(run, ignore_errors=True)  # a kill before the run wrote its scenario
            train_scenario(own, run, hooks=hooks(seed) if hooks else None, **kwargs)
    aggregate_seeds(path)
    return path


def aggregate_seeds(path: Path | str) -> dict[str, Any]:
    """Write `seeds.csv`, `action_types.csv`, `training_actions.png` and `summary.json` from the seeds' runs."""
    from sandbox.moral.plots import plot_seed_actions

    path = Path(path)
    scenario = _scenario(path)
    rows, metrics = [], {}
    for seed in group_seeds(path):
        summary = read_json(seed_dir(path, seed) / "summary.json")
        rates = {**summary["final_action_rates"], "illegal": summary["final_illegal_rate"]}
        rows.append(
            {
                "seed": seed,
                **rates,
                **{f"reward_{k}": v for k, v in summary["final_rewards"].items()},
                "seconds_per_episode": summary["seconds_per_episode"],
            }
        )
        metrics[seed] = read_csv(seed_dir(path, seed) / "metrics.csv")
    table = pd.DataFrame(rows)
    table.to_csv(path / "seeds.csv", index=False)
    training = scenario.training
    actions = pd.DataFrame(
        [
            dict(
                zip(
                    ("action_type", "mean", "ci_low", "ci_high", "seeds"),
                    (name, *mean_ci(table[name], bounds=(0.0, 1.0), method=training.seed_ci)),
                )
            )
            for name in ACTIONS
        ]
    )
    actions.to_csv(path / "action_types.csv", index=False)
    title = f"{scenario.name}: {training.reward} vs {training.opponent}, {len(rows)} seeds"
    plot_seed_actions(metrics, title, method=training.seed_ci).savefig(path / "training_actions.png", dpi=120)
    summary = {
        "scenario": scenario.name,
        "reward": training.reward,
        "opponent": training.opponent,
        "episodes": training.episodes,
        "seeds": [r["seed"] for r in rows],
        "final_action_rates": {
            r["action_type"]: {k: json_number(r[k]) for k in ("mean", "ci_low", "ci_high")}
            for r in actions.to_dict("records")
        },
        "final_action_rates_from": f"last tenth of training, per seed; 95% CI across seeds ({training.seed_ci})",
        "seconds_per_episode": float(table["seconds_per_episode"].mean()),
    }
    write_summary(path, summary, kind="training")
    return summary


@holding
def evaluate_seeds(
    path: Path | str,
    *,
    device: str | None = None,
    on_start: Callable[[int], None] | None = None,
    on_game: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Evaluate every seed's adapter (`evaluate_run`; a seed already evaluated is kept), then aggregate; return
    the group's `evaluation` entry (as `evaluate_run` returns a run's)."""
    from sandbox.moral.evaluation import evaluate_run

    path = Path(path)
    seeds = group_seeds(path)
    missing = [s for s in seeds if not (seed_dir(path, s) / "summary.json").is_file()]
    if missing:
        raise UsageError(f"{path}: seeds {missing} are not trained yet; finish them with `sandbox resume {path}`")
    for seed in seeds:
        run = seed_dir(path, seed)
        if "evaluation" in read_json(run / "summary.json") and (run / "moral_regret.csv").is_file():
            continue
        evaluate_run(run, device=device, on_start=on_start, on_game=on_game)
    return aggregate_evaluations(path)


def aggregate_evaluations(path: Path | str) -> dict[str, Any]:
    """`moral_regret.csv`, `test_action_types.csv`, the plots and the summary's `evaluation` entry of a group,
    across its seeds; return that entry."""
    from sandbox.moral.evaluation import GROUPS, plot_suffix
    from sandbox.moral.plots import plot_action_types, plot_regret
    from sandbox.moral.regret import regret_bounds
    from sandbox.rewards.intrinsic import RewardParams

    path = Path(path)
    scenario = _scenario(path)
    method = scenario.training.seed_ci
    params = RewardParams(xi=scenario.training.xi, illegal=scenario.training.illegal)
    seeds = group_seeds(path)
    per_seed = pd.concat([read_csv(seed_dir(path, s) / "moral_regret.csv").assign(seed=s) for s in seeds])
    keys = [*GROUPS, "metric", "kind"]
    rows = []
    for values, frame in per_seed.groupby(keys, sort=False):
        key = dict(zip(keys, values))
        bounds = regret_bounds(key["metric"], key["kind"], params)
        mean, low, high, n = mean_ci(frame["mean"], bounds=bounds, method=method)
        rows.append({**key, "mean": mean, "ci_low": low, "ci_high": high, "seeds": n})
    regret = pd.DataFrame(rows)
    regret.to_csv(path / "moral_regret.csv", index=False)
    per_seed = pd.concat([read_csv(seed_dir(path, s) / "test_action_types.csv") for s in seeds])
    rows = []
    for values, frame in per_seed.groupby(GROUPS, sort=False):
        row: dict[str, Any] = dict(zip(GROUPS, values))
        for name in ACTIONS:
            row[name], row[f"{name}_ci_low"], row[f"{name}_ci_high"], row["seeds"] = mean_ci(
                frame[name], bounds=(0.0, 1.0), method=method
            )
        rows.append(row)
    actions = pd.DataFrame(rows)
    actions.to_csv(path / "test_action_types.csv", index=False)
    for (condition, order), frame in regret.groupby(["condition", "order"], sort=False):
        title = (
            f"{scenario.name}, {condition} tokens, table {order}: mean of {len(seeds)} seeds, 95% CI across "
            f"seeds ({method})"
        )
        plot_regret(frame.reset_index(drop=True), title, params).savefig(
            path / f"moral_regret{plot_suffix(condition, order)}.png", dpi=120
        )
        chosen = (actions["condition"] == condition) & (actions["order"] == order)
        plot_action_types(
            actions[chosen].reset_index(drop=True),
            f"{scenario.name}, {condition} tokens, table {order}: mean of {len(seeds)} seeds",
        ).savefig(path / f"test_action_types{plot_suffix(condition, order)}.png", dpi=120)
    first = read_json(seed_dir(path, seeds[0]) / "summary.json")["evaluation"]
    entry = {
        **first,
        "seeds": seeds,
        "ci": f"95% across seeds ({method})",
        "regret": json_records(regret),
        "action_types": json_records(actions),
    }
    summary = (
        read_json(path / "summary.json") if (path / "summary.json").is_file() else {"scenario": _scenario(path).name}
    )
    write_summary(path, {**summary, "evaluation": entry}, kind="training")
    return entry
