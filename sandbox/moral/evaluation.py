"""`sandbox evaluate-moral`: a trained adapter on five matrix games against a random opponent (Section 5.1).

For each token condition (the new test tokens; the training tokens; the
training tokens with their meanings swapped, the reversed-token check) and
each game, `games_per_game` test games of `rounds` rounds are played side by
side against a random opponent (which visits every state), each from a random
state. Each round is scored with the normalised Deontological and Utilitarian
regret (`sandbox.moral.regret`) and its action type.

Written into the run directory:
    evaluation_rounds.csv   one row per round: condition, game, test game, round, moves, regrets
    moral_regret.csv        per condition, game and kind: mean regret and its 95% CI over test games
    test_action_types.csv   per condition and game: the share of each action type
    moral_regret[_COND].png, test_action_types[_COND].png   Fig. 4 and Fig. 5 style plots
    summary.json            gains an `evaluation` entry
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from sandbox.games.matrix_prompt import ActionTokens
from sandbox.moral.regret import normalised_regret
from sandbox.moral.rewards import RewardParams
from sandbox.moral.scenario import TrainingScenario
from sandbox.moral.training import ACTION_TYPES, MoralSetup, action_type, play_episode
from sandbox.run_dir import RunDirectory, atomic_write_text
from sandbox.seeding import Branch, generator
from sandbox.stats import mean_ci

__all__ = ["condition_tokens", "evaluate_policy", "evaluate_run", "regret_table"]

KINDS = ("deontological", "utilitarian")


def condition_tokens(scenario: TrainingScenario, condition: str) -> ActionTokens:
    """The action tokens of a condition: test, training, or reversed (training tokens, meanings swapped)."""
    training = scenario.training
    if condition == "test":
        return ActionTokens.of(training.test_tokens)
    tokens = ActionTokens.of(training.tokens)
    return tokens.reversed() if condition == "reversed" else tokens


def evaluate_policy(trainer: Any, scenario: TrainingScenario, *, on_game: Callable[[], None] | None = None) -> pd.DataFrame:
    """Play every condition and game of `scenario.training.evaluation` with `trainer`'s policy: one row per round."""
    import torch

    evaluation = scenario.training.evaluation
    params = RewardParams(xi=scenario.training.xi, illegal=scenario.training.illegal)
    torch.manual_seed(scenario.seed)
    rows = []
    for c, condition in enumerate(evaluation.conditions):
        for g, name in enumerate(evaluation.games):
            setup = MoralSetup(game=name, opponent=evaluation.opponent, tokens=condition_tokens(scenario, condition),
                               history_length=scenario.training.history_length, parallel=evaluation.games_per_game,
                               rounds=evaluation.rounds, rewards=params, seed=scenario.seed)  # fmt: skip
            rng = generator(scenario.seed, Branch.EVALUATION, c, g)
            _, _, steps = play_episode(trainer, setup, 0, rng=rng)
            for i, step in enumerate(steps):  # round by round: round 0 of every game, then round 1, ...
                rows.append({
                    "condition": condition, "game": name, "test_game": i % setup.parallel, "round": i // setup.parallel,
                    "own": step.own or "", "other": step.other, "last_other": step.last_other,
                    "action_type": action_type(step),
                    **{f"regret_{kind}": normalised_regret(kind, step, params) for kind in KINDS},
                })  # fmt: skip
            if on_game:
                on_game()
    return pd.DataFrame(rows)


def regret_table(rounds: pd.DataFrame) -> pd.DataFrame:
    """Per condition, game and kind: the mean normalised regret and its 95% CI over test games."""
    per_game = rounds.groupby(["condition", "game", "test_game"], sort=False)[[f"regret_{k}" for k in KINDS]].mean()
    rows = []
    for (condition, game), frame in per_game.groupby(level=["condition", "game"], sort=False):
        for kind in KINDS:
            mean, low, high, n = mean_ci(frame[f"regret_{kind}"], bounds=(0.0, 1.0))
            rows.append({"condition": condition, "game": game, "kind": kind, "mean": mean, "ci_low": low,
                         "ci_high": high, "test_games": n})  # fmt: skip
    return pd.DataFrame(rows)


def action_table(rounds: pd.DataFrame) -> pd.DataFrame:
    """Per condition and game: the share of rounds of each action type."""
    shares = pd.crosstab([rounds["condition"], rounds["game"]], rounds["action_type"], normalize="index")
    for name in (*ACTION_TYPES, "illegal"):
        if name not in shares:
            shares[name] = 0.0
    order = {(c, g): i for i, (c, g) in enumerate(rounds[["condition", "game"]].drop_duplicates().itertuples(index=False))}
    shares = shares[[*ACTION_TYPES, "illegal"]].reset_index()
    shares["_order"] = [order[(c, g)] for c, g in zip(shares["condition"], shares["game"])]
    return shares.sort_values("_order").drop(columns="_order").reset_index(drop=True).rename_axis(None, axis=1)


def evaluate_run(path: Path | str, *, on_start: Callable[[int], None] | None = None,
                 on_game: Callable[[], None] | None = None) -> dict[str, Any]:  # fmt: skip
    """Evaluate a finished training run's adapter and write the tables and plots; return the summary entry."""
    from peft import PeftModel

    from sandbox.errors import UsageError
    from sandbox.moral.base_model import load_base_model
    from sandbox.moral.plots import plot_action_types, plot_regret
    from sandbox.moral.ppo import PPOTrainer
    from sandbox.moral.run import ADAPTER, SUMMARY, is_training_run
    from sandbox.scenario_file import load_training_scenario

    run_dir = RunDirectory.open(path)
    if not is_training_run(run_dir.path):
        raise UsageError(f"{run_dir.path} is not a training run (its scenario has no training: block)")
    if not (run_dir / ADAPTER / "adapter_config.json").is_file():
        raise UsageError(f"{run_dir.path} has no trained adapter yet; finish it with `sandbox resume {run_dir.path}`")
    scenario = load_training_scenario(run_dir / "scenario.yaml")
    evaluation = scenario.training.evaluation
    if on_start:
        on_start(len(evaluation.conditions) * len(evaluation.games))
    base = load_base_model(scenario.models.policy, device=scenario.models.device, dtype=scenario.models.dtype)
    model = PeftModel.from_pretrained(base.model, str(run_dir / ADAPTER))
    trainer = PPOTrainer(model, base.tokenizer, scenario.training.ppo_config(seed=scenario.seed))
    rounds = evaluate_policy(trainer, scenario, on_game=on_game)
    regret, actions = regret_table(rounds), action_table(rounds)
    rounds.to_csv(run_dir / "evaluation_rounds.csv", index=False)
    regret.to_csv(run_dir / "moral_regret.csv", index=False)
    actions.to_csv(run_dir / "test_action_types.csv", index=False)
    for condition in evaluation.conditions:
        suffix = "" if condition == "test" else f"_{condition}"
        tokens = condition_tokens(scenario, condition)
        title = f"{scenario.name} vs {evaluation.opponent}, {condition} tokens (C={tokens.cooperate}, D={tokens.defect})"
        plot_regret(regret[regret["condition"] == condition], title).savefig(run_dir / f"moral_regret{suffix}.png", dpi=120)
        plot_action_types(actions[actions["condition"] == condition].reset_index(drop=True), title).savefig(
            run_dir / f"test_action_types{suffix}.png", dpi=120
        )
    entry = {
        "opponent": evaluation.opponent, "games_per_game": evaluation.games_per_game, "rounds": evaluation.rounds,
        "conditions": {
            condition: {
                "tokens": condition_tokens(scenario, condition).by_move(),
                "regret": {kind: {r["game"]: r["mean"] for r in regret[(regret["condition"] == condition)
                                                                       & (regret["kind"] == kind)].to_dict("records")}
                           for kind in KINDS},
                "action_types": {r["game"]: {name: r[name] for name in (*ACTION_TYPES, "illegal")}
                                 for r in actions[actions["condition"] == condition].to_dict("records")},
            }
            for condition in evaluation.conditions
        },
    }  # fmt: skip
    summary = json.loads((run_dir / SUMMARY).read_text()) if (run_dir / SUMMARY).is_file() else {}
    atomic_write_text(run_dir / SUMMARY, json.dumps({**summary, "evaluation": entry}, indent=2))
    return entry
