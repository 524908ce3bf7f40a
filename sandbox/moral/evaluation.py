"""`sandbox evaluate-moral`: a trained adapter on five matrix games against a random opponent (Section 5.1).

For each token condition (the new test tokens; the training tokens; the
training tokens with their meanings swapped, the reversed-token check), each
order of the payoff table's rows and columns (the paper's, and the authors'
permuted-matrix check) and each game, `games_per_game` test games of `rounds`
rounds are played side by side against a random opponent (which visits every
state), each from a random state. The same games are played by the base model
with the adapter off ("no fine-tuning", the paper's baseline), on the same
draws. Each round is scored with both regret metrics (`sandbox.moral.regret`:
the paper's moral regret, and the counterfactual regret against the
opponent's actual move) and its action type.

Written into the run directory:
    evaluation_rounds.csv   one row per round: policy, condition, order, game, test game, round, moves, regrets
    moral_regret.csv        per policy, condition, order, game, metric and kind: the mean regret, 95% CI over test games
    test_action_types.csv   per policy, condition, order and game: the share of each action type
    moral_regret[_COND][_ORDER].png, test_action_types[_COND][_ORDER].png   Fig. 4 and Fig. 5 style plots
    summary.json            gains an `evaluation` entry
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from sandbox.base.files import read_json
from sandbox.base.seeding import Branch, generator
from sandbox.base.stats import json_records, mean_ci
from sandbox.core.run_dir import RunDirectory, holding
from sandbox.core.summary import write_summary
from sandbox.moral.environment import MoralSetup, action_type
from sandbox.moral.regret import KINDS, METRICS, counterfactual_regret, moral_regret, regret_bounds
from sandbox.moral.scenario import TrainingScenario
from sandbox.rewards.intrinsic import ACTION_TYPES, RewardParams
from sandbox.rules.matrix_prompt import ActionTokens
from sandbox.training.rollout import play_episode

__all__ = [
    "FINE_TUNED",
    "NO_FINE_TUNING",
    "action_table",
    "condition_tokens",
    "evaluate_policy",
    "evaluate_run",
    "plot_suffix",
    "regret_column",
    "regret_table",
]

FINE_TUNED, NO_FINE_TUNING = "fine-tuned", "no fine-tuning"
GROUPS = ["policy", "condition", "order", "game"]


def regret_column(metric: str, kind: str) -> str:
    """The column of `evaluation_rounds.csv` that holds a round's regret: regret_KIND (the paper's moral regret)
    or counterfactual_regret_KIND."""
    return f"regret_{kind}" if metric == "moral" else f"{metric}_regret_{kind}"


def condition_tokens(scenario: TrainingScenario, condition: str) -> ActionTokens:
    """The action tokens of a condition: test, training, or reversed (training tokens, meanings swapped)."""
    training = scenario.training
    if condition == "test":
        return ActionTokens.of(training.test_tokens)
    tokens = ActionTokens.of(training.tokens)
    return tokens.reversed() if condition == "reversed" else tokens


def evaluate_policy(
    policy: Any, scenario: TrainingScenario, *, name: str = FINE_TUNED, on_game: Callable[[], None] | None = None
) -> pd.DataFrame:
    """Play every condition, table order and game of `scenario.training.evaluation` with `policy` (anything with
    `generate(queries)` and `tokenizer`; a `PPOTrainer`): one row per round, labelled `name`.

    Every policy, and every order of the table, meets the same draws (states, the opponent's moves, prompt
    orders), so their rows pair up.
    """
    import torch

    evaluation = scenario.training.evaluation
    params = RewardParams(xi=scenario.training.xi, illegal=scenario.training.illegal)
    torch.manual_seed(scenario.seed)
    rows = []
    for c, condition in enumerate(evaluation.conditions):
        for order in evaluation.orders:
            for g, game in enumerate(evaluation.games):
                setup = MoralSetup(
                    game=game,
                    opponent=evaluation.opponent,
                    tokens=condition_tokens(scenario, condition),
                    history_length=scenario.training.history_length,
                    parallel=evaluation.games_per_game,
                    rounds=evaluation.rounds,
                    rewards=params,
                    seed=scenario.seed,
                    table_order=order,
                )
                rng = generator(scenario.seed, Branch.EVALUATION, c, g)  # not `o`: the orders pair up too
                _, _, steps = play_episode(policy, setup, 0, rng=rng)
                for i, step in enumerate(steps):  # round by round: round 0 of every game, then round 1, ...
                    rows.append(
                        {
                            "policy": name,
                            "condition": condition,
                            "order": order,
                            "game": game,
                            "test_game": i % setup.parallel,
                            "round": i // setup.parallel,
                            "own": step.own or "",
                            "other": step.other,
                            "last_other": step.last_other,
                            "action_type": action_type(step),
                            **{regret_column("moral", kind): moral_regret(kind, step, params) for kind in KINDS},
                            **{
                                regret_column("counterfactual", kind): counterfactual_regret(kind, step, params)
                                for kind in KINDS
                            },
                        }
                    )
                if on_game:
                    on_game()
    return pd.DataFrame(rows)


def regret_table(rounds: pd.DataFrame, params: RewardParams = RewardParams()) -> pd.DataFrame:
    """Per policy, condition, order, game, metric and kind: the mean regret and its 95% CI over test games."""
    columns = [regret_column(metric, kind) for metric in METRICS for kind in KINDS]
    per_game = rounds.groupby([*GROUPS, "test_game"], sort=False)[columns].mean()
    rows = []
    for keys, frame in per_game.groupby(level=GROUPS, sort=False):
        for metric in METRICS:
            for kind in KINDS:
                mean, low, high, n = mean_ci(
                    frame[regret_column(metric, kind)], bounds=regret_bounds(metric, kind, params)
                )
                rows.append(
                    {
                        **dict(zip(GROUPS, keys)),
                        "metric": metric,
                        "kind": kind,
                        "mean": mean,
                        "ci_low": low,
                        "ci_high": high,
                        "test_games": n,
                    }
                )
    return pd.DataFrame(rows)


def action_table(rounds: pd.DataFrame) -> pd.DataFrame:
    """Per policy, condition, order and game: the share of rounds of each action type."""
    shares = pd.crosstab([rounds[g] for g in GROUPS], rounds["action_type"], normalize="index")
    for name in (*ACTION_TYPES, "illegal"):
        if name not in shares:
            shares[name] = 0.0
    order = {keys: i for i, keys in enumerate(rounds[GROUPS].drop_duplicates().itertuples(index=False, name=None))}
    shares = shares[[*ACTION_TYPES, "illegal"]].reset_index()
    shares["_order"] = [order[tuple(keys)] for keys in shares[GROUPS].itertuples(index=False, name=None)]
    return shares.sort_values("_order").drop(columns="_order").reset_index(drop=True).rename_axis(None, axis=1)


def plot_suffix(condition: str, order: str) -> str:
    """The file suffix of a condition's and order's plots: none for the test tokens in the paper's order."""
    return ("" if condition == "test" else f"_{condition}") + ("" if order == "CD-CD" else f"_{order}")


@holding
def evaluate_run(
    path: Path | str,
    *,
    device: str | None = None,
    on_start: Callable[[int], None] | None = None,
    on_game: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Evaluate a finished training run's adapter (and the base model) and write the tables and plots; return
    the summary entry. `device` overrides the scenario's `models.device` (a GPU-trained run on a CPU)."""
    from peft import PeftModel

    from sandbox.base.errors import UsageError
    from sandbox.core.scenario_files import load_scenario
    from sandbox.llm.base_model import load_base_model
    from sandbox.moral.opponents import BaseOfAdapter
    from sandbox.moral.plots import plot_action_types, plot_regret
    from sandbox.moral.run import ADAPTER, SUMMARY, is_training_run
    from sandbox.training.ppo import PPOTrainer

    run_dir = RunDirectory.open(path)
    if not is_training_run(run_dir.path):
        raise UsageError(f"{run_dir.path} is not a training run (its scenario has no training: block)")
    if not (run_dir / ADAPTER / "adapter_config.json").is_file():
        raise UsageError(f"{run_dir.path} has no trained adapter yet; finish it with `sandbox resume {run_dir.path}`")
    scenario = load_scenario(run_dir / "scenario.yaml", kind="training")
    evaluation = scenario.training.evaluation
    params = RewardParams(xi=scenario.training.xi, illegal=scenario.training.illegal)
    policies = (FINE_TUNED, NO_FINE_TUNING) if evaluation.baseline else (FINE_TUNED,)
    if on_start:
        on_start(len(policies) * len(evaluation.conditions) * len(evaluation.orders) * len(evaluation.games))
    base = load_base_model(scenario.models.policy, device=device or scenario.models.device, dtype=scenario.models.dtype)
    model = PeftModel.from_pretrained(base.model, str(run_dir / ADAPTER))
    trainer = PPOTrainer(model, base.tokenizer, scenario.training.ppo_config(seed=scenario.seed))
    players = {FINE_TUNED: trainer, NO_FINE_TUNING: BaseOfAdapter(trainer)}  # the base model: the adapter off
    rounds = pd.concat(
        [evaluate_policy(players[name], scenario, name=name, on_game=on_game) for name in policies], ignore_index=True
    )
    regret, actions = regret_table(rounds, params), action_table(rounds)
    rounds.to_csv(run_dir / "evaluation_rounds.csv", index=False)
    regret.to_csv(run_dir / "moral_regret.csv", index=False)
    actions.to_csv(run_dir / "test_action_types.csv", index=False)
    for condition in evaluation.conditions:
        tokens = condition_tokens(scenario, condition)
        for order in evaluation.orders:
            title = (
                f"{scenario.name} vs {evaluation.opponent}, {condition} tokens (C={tokens.cooperate}, "
                f"D={tokens.defect}), table {order}"
            )
            chosen = (regret["condition"] == condition) & (regret["order"] == order)
            plot_regret(regret[chosen].reset_index(drop=True), title, params).savefig(
                run_dir / f"moral_regret{plot_suffix(condition, order)}.png", dpi=120
            )
            chosen = (actions["condition"] == condition) & (actions["order"] == order)
            plot_action_types(actions[chosen].reset_index(drop=True), title).savefig(
                run_dir / f"test_action_types{plot_suffix(condition, order)}.png", dpi=120
            )
    entry = {
        "opponent": evaluation.opponent,
        "games_per_game": evaluation.games_per_game,
        "rounds": evaluation.rounds,
        "policies": list(policies),
        "orders": list(evaluation.orders),
        "conditions": {
            condition: {"tokens": condition_tokens(scenario, condition).by_move()}
            for condition in evaluation.conditions
        },
        "regret": json_records(regret),  # NaN CI ends (one test game) as null, not a bare NaN
        "action_types": json_records(actions),
    }
    summary = read_json(run_dir / SUMMARY) if (run_dir / SUMMARY).is_file() else {"scenario": scenario.name}
    write_summary(run_dir, {**summary, "evaluation": entry}, kind="training")
    return entry
