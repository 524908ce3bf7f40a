"""A moral fine-tuning run on disk: train from a training scenario, checkpoint, resume, summarise.

Layout of the run directory:
    scenario.yaml       the resolved training scenario; resume reads it
    run.json            status (running, interrupted, failed, complete), timings
    metrics.csv         one row per episode: rewards by kind, action types, illegal rate, KL, seconds
    checkpoint/         every `checkpoint_every` episodes: adapter, value head, optimiser, KL
                        controller, reward moments, torch RNG, and `state.json` (episodes done)
    adapter/            the trained LoRA adapter (PEFT format), at the end
    summary.json        `final_action_rates` (last tenth of episodes) and headline figures
    proxy_table.csv     with training.proxies: the judge's reward table and the ground truth (asked once)
    training_actions.png, training_rewards.png   Fig. 2 and Fig. 3 style plots

A killed run resumes from its last checkpoint: the rows after it are dropped and
played again. Each episode draws from its own node of the seed tree and the
checkpoint holds torch's RNG, so on a CPU the resumed run ends with the same
metrics as an uninterrupted one (bar the `seconds` column; a test checks it).
On CUDA, kernels that are not deterministic by default (attention's backward
pass, cuBLAS reductions) make the two runs statistically alike, not equal
number for number. A checkpoint loads onto any device (`resume --device`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from sandbox.base.errors import UsageError
from sandbox.base.files import read_csv
from sandbox.base.stats import json_number
from sandbox.core.run_dir import SCENARIO, RunDirectory, default_out, hold, holding
from sandbox.core.summary import write_summary
from sandbox.moral.opponents import LearningLLM
from sandbox.moral.scenario import TrainingScenario
from sandbox.training.hooks import TrainHooks

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


__all__ = ["load_trainer", "on_device", "resume_training", "train_scenario"]

METRICS = "metrics.csv"
SUMMARY = "summary.json"
ADAPTER = "adapter"


def _scenario(run_dir: RunDirectory) -> TrainingScenario:
    from sandbox.core.scenario_files import load_scenario

    return load_scenario(run_dir / SCENARIO, kind="training")


def on_device(scenario: TrainingScenario, device: str | None) -> TrainingScenario:
    """`scenario` with `models.device` set to `device` (`--device`, validated as the field is), or as it is."""
    from sandbox.moral.scenario import apply_training_overrides

    return scenario if device is None else apply_training_overrides(scenario, device=device, source="--device")


def _base(scenario: TrainingScenario, model: Any, tokenizer: Any) -> Any:
    from sandbox.llm.base_model import BaseModel, load_base_model

    if model is not None:
        return BaseModel(model, tokenizer, "<object>", str(next(model.parameters()).device))
    return load_base_model(scenario.models.policy, device=scenario.models.device, dtype=scenario.models.dtype)


def load_trainer(scenario: TrainingScenario, *, model: Any = None, tokenizer: Any = None) -> Any:
    """A `PPOTrainer` on the scenario's base model (or on `model`/`tokenizer` passed in)."""
    from sandbox.training.ppo import PPOTrainer

    base = _base(scenario, model, tokenizer)
    return PPOTrainer(base.model, base.tokenizer, scenario.training.ppo_config(seed=scenario.seed))


def make_opponent(scenario: TrainingScenario, trainer: Any) -> Any:
    """The LLM opponent of `opponent: llm` (the learner's base model, adapter off) or `learner` (a second
    `PPOTrainer` on a fresh copy of the base model, seeded apart); None for a fixed strategy."""
    from sandbox.moral.opponents import BaseOfAdapter, FrozenLLM, LearningLLM
    from sandbox.rewards.intrinsic import RewardParams, Schedule
    from sandbox.rules.matrix_prompt import ActionTokens
    from sandbox.training.ppo import PPOTrainer

    training = scenario.training
    tokens = ActionTokens.of(training.tokens)
    if training.opponent == "llm":
        return FrozenLLM(BaseOfAdapter(trainer), tokens)
    if training.opponent == "learner":
        base = _base(scenario, None, None)
        # its own adapter initialisation, from a branch of the seed tree: not seed + 1, which is the next
        # seed of a group (`train --seeds`), whose learner would start from this opponent's weights
        config = training.ppo_config(seed=opponent_seed(scenario.seed))
        return LearningLLM(
            PPOTrainer(base.model, base.tokenizer, config),
            tokens,
            schedule=Schedule.parse(training.opponent_reward or training.reward),
            rewards=RewardParams(xi=training.xi, illegal=training.illegal),
        )
    return None


def opponent_seed(seed: int) -> int:
    """The torch seed of a learning opponent's `PPOTrainer`, drawn from the run's seed tree."""
    from sandbox.base.seeding import Branch, seed_node

    return int(seed_node(seed, Branch.POLICY, 1).generate_state(1)[0])


def train_scenario(
    scenario: TrainingScenario,
    out: Path | str | None = None,
    *,
    hooks: TrainHooks | None = None,
    model: Any = None,
    tokenizer: Any = None,
    judge: BaseChatModel | None = None,
) -> Path:
    """Train the scenario's model into a new run directory and return its path.

    Args:
        scenario: The training scenario.
        out: The run directory (default `runs/<name>-<time>`); it must not hold files.
        hooks: Progress callbacks.
        model: A transformers causal LM to train instead of `models.policy` (with `tokenizer`).
        tokenizer: Its tokenizer.
        judge: A chat model to judge `training.proxies` instead of `models.judge`.
    """
    from sandbox.core.kinds import get as kind_named

    kind_named("training").require(scenario)  # the extras it needs (a smollm2 student, an hf: judge), first
    path = Path(out) if out is not None else default_out(scenario)
    RunDirectory.check_new(path)
    if scenario.training.algorithm != "ppo":
        base = _base(scenario, model, tokenizer)  # before any file: a bad model writes nothing
        with hold(path):
            return _train_trl(
                RunDirectory.create(path, scenario),
                scenario,
                base,
                hooks or TrainHooks(),
                resume=False,
                judge=judge,
            )
    trainer = load_trainer(scenario, model=model, tokenizer=tokenizer)
    opponent = make_opponent(scenario, trainer)
    with hold(path):
        run_dir = RunDirectory.create(path, scenario)
        return _train(run_dir, scenario, trainer, 0, hooks or TrainHooks(), opponent, judge=judge)


@holding
def resume_training(
    path: Path | str,
    *,
    hooks: TrainHooks | None = None,
    model: Any = None,
    tokenizer: Any = None,
    judge: BaseChatModel | None = None,
    device: str | None = None,
) -> Path:
    """Continue an interrupted training run from its last checkpoint (or from the start without one).

    `device` overrides the scenario's `models.device`: a run started on a GPU resumes on a CPU or another GPU
    (the run's `scenario.yaml` keeps the device it was started with).
    """
    run_dir = RunDirectory.open(path)
    scenario = on_device(_scenario(run_dir), device)
    if scenario.training.algorithm != "ppo":
        return _train_trl(
            run_dir, scenario, _base(scenario, model, tokenizer), hooks or TrainHooks(), resume=True, judge=judge
        )
    from sandbox.training.ppo_run import resume_point

    trainer = load_trainer(scenario, model=model, tokenizer=tokenizer)
    opponent = make_opponent(scenario, trainer)
    start = resume_point(run_dir, trainer, run_dir / METRICS, _opponent_trainer(opponent))
    return _train(run_dir, scenario, trainer, start, hooks or TrainHooks(), opponent, judge=judge)


def _opponent_trainer(opponent: Any) -> dict[str, Any] | None:
    """A learning opponent's trainer, checkpointed inside the learner's (`checkpoint/opponent`)."""
    return {"opponent": opponent.policy} if isinstance(opponent, LearningLLM) else None


def _proxies(run_dir: RunDirectory, scenario: TrainingScenario, judge: BaseChatModel | None) -> dict[str, Any]:
    """The run's proxy and truth rewards: `proxy_table.csv`, the judge asked first where it is missing."""
    from sandbox.rewards.proxy import proxy_rewards

    training = scenario.training
    try:
        return proxy_rewards(
            training.proxies,
            training.game_table(),
            scenario.models.judge,
            run_dir.path,
            seed=scenario.seed,
            judge=judge,
        )
    except Exception as error:  # the judge failed, or answered nothing usable: nothing was trained
        run_dir.write_status("failed", error=f"{type(error).__name__}: {error}")
        raise


def _train(
    run_dir: RunDirectory,
    scenario: TrainingScenario,
    trainer: Any,
    start: int,
    hooks: TrainHooks,
    opponent: Any = None,
    judge: BaseChatModel | None = None,
) -> Path:
    from sandbox.training.ppo_run import train_ppo_run

    training = scenario.training
    setup = training.setup(seed=scenario.seed, opponent=opponent, proxies=_proxies(run_dir, scenario, judge))
    train_ppo_run(
        run_dir,
        trainer,
        setup,
        episodes=training.episodes,
        start=start,
        checkpoint_every=training.checkpoint_every,
        metrics=run_dir / METRICS,
        hooks=hooks,
        extra=_opponent_trainer(opponent),
    )
    trainer.model.save_pretrained(run_dir / ADAPTER)
    if isinstance(opponent, LearningLLM):
        opponent.policy.model.save_pretrained(run_dir / "opponent_adapter")
    finish(run_dir, scenario)
    return run_dir.path


def _train_trl(
    run_dir: RunDirectory,
    scenario: TrainingScenario,
    base: Any,
    hooks: TrainHooks,
    *,
    resume: bool,
    judge: BaseChatModel | None = None,
) -> Path:
    """GRPO or RLOO through TRL: its own checkpoints (`trl/checkpoint-N`) and resume, our rows and summary."""
    from sandbox.training.trl_trainers import train_with_trl
    from sandbox.viewer.tracking import report_to

    play = train_with_trl(
        run_dir,
        scenario,
        base,
        hooks,
        resume=resume,
        proxies=lambda: _proxies(run_dir, scenario, judge),
        report_to=report_to(run_dir.path),
    )
    finish(run_dir, scenario, play=play)
    return run_dir.path


def finish(run_dir: RunDirectory, scenario: TrainingScenario, play: pd.DataFrame | None = None) -> dict[str, Any]:
    """Write `summary.json` and the plots from `metrics.csv`; mark the run complete.

    `final_action_rates` are those of the last tenth of training episodes, or of
    `play` (episodes the trained policy played afterwards) when given.
    """
    from sandbox.moral.environment import action_rates, final_action_rates
    from sandbox.moral.plots import plot_training_actions, plot_training_rewards

    metrics = read_csv(run_dir / METRICS)
    if len(metrics) != scenario.training.episodes:
        raise UsageError(
            f"{run_dir.path}: {len(metrics)} of {scenario.training.episodes} episodes in {METRICS}; "
            f"resume it with `sandbox resume {run_dir.path}`"
        )
    rows = metrics.to_dict("records")
    rates = final_action_rates(rows) if play is None else action_rates(play.to_dict("records"))
    tail = metrics.tail(max(1, len(metrics) // 10)) if play is None else play
    training = scenario.training
    summary = {
        "scenario": scenario.name,
        "policy": scenario.models.policy,
        "algorithm": training.algorithm,
        "game": training.game if isinstance(training.game, str) else training.game.name,
        "opponent": training.opponent,
        "reward": training.reward,
        "episodes": len(metrics),
        "rounds_per_episode": training.parallel * training.rounds,
        "final_action_rates": {name: rates[name] for name in ("C|C", "C|D", "D|C", "D|D")},
        "final_action_rates_from": "last tenth of training" if play is None else "play after training (play.csv)",
        "final_illegal_rate": rates["illegal"],
        "final_rewards": {
            kind: float(tail[f"reward_{kind}"].mean())
            for kind in (
                "game",
                "deontological",
                "utilitarian",
                "game_deontological",
                *(f"{prefix}{name}" for name in training.proxies for prefix in ("proxy:", "truth:")),
            )
        },
        "final_kl": json_number(metrics.tail(max(1, len(metrics) // 10))["kl"].mean()),  # None: not computed
        "seconds_per_episode": float(metrics["seconds"].mean()) if "seconds" in metrics else None,
        "adapter": ADAPTER,
    }
    if training.proxies:
        summary["proxy"] = _proxy_summary(run_dir, summary["final_rewards"], rates["illegal"], training.illegal)
    write_summary(run_dir, summary, kind="training")
    title = f"{scenario.name}: {training.reward} vs {training.opponent}"
    plot_training_actions(metrics, title).savefig(run_dir / "training_actions.png", dpi=120)
    plot_training_rewards(metrics, title).savefig(run_dir / "training_rewards.png", dpi=120)
    run_dir.write_status("complete", finished=time.time())
    return summary


def _proxy_summary(
    run_dir: RunDirectory, final: dict[str, float], illegal_rate: float, illegal: float
) -> dict[str, Any]:
    """Per proxy reward: the judge's set scored as `sandbox label` scores it (`set_score`), the agent accuracy
    (the share of the final rounds whose joint outcome the ground truth accepts; an illegal round counts as
    wrong) and what the judge cost."""
    from sandbox.llm.accounting import TokenLedger
    from sandbox.llm.transcript import read_transcript
    from sandbox.rewards.matrix_task import set_score
    from sandbox.rewards.proxy import PROXY_TABLE

    table = read_csv(run_dir / PROXY_TABLE, dtype=str, keep_default_na=False)
    path = run_dir / "transcripts.jsonl"
    usage = TokenLedger.from_transcript(read_transcript(path) if path.is_file() else []).totals().get("judge", {})
    objectives = {}
    for name, rows in table.groupby("reward", sort=False):
        named = frozenset(rows.loc[rows["proxy"].astype(float) == 1, "option"])
        truth = frozenset(rows.loc[rows["truth"].astype(float) == 1, "option"])
        # the truth reward pays 1 or 0 on a legal round and `illegal` on an illegal one
        objectives[name] = {
            "labeling_score": set_score(named, truth),
            "judge_options": ",".join(sorted(named)) or "None",
            "true_options": ",".join(sorted(truth)) or "None",
            "agent_accuracy": final[f"truth:{name}"] - illegal_rate * illegal,
            "proxy_reward": final[f"proxy:{name}"],
        }
    return {
        "objectives": objectives,
        "distinct_episodes": len(objectives),  # one rendered game per proxy reward
        "judge_calls": int(usage.get("calls", 0)),
        "judge_cache_hits": int(usage.get("cache_hits", 0)),
        "judge_calls_in_training": 0,  # training reads the table
    }


def is_training_run(path: Path | str) -> bool:
    """Whether `path` is a run directory of a training scenario (`ScenarioError` when its scenario is unreadable)."""
    from sandbox.base.files import read_yaml
    from sandbox.core.kinds import kind_of_data

    scenario = Path(path) / SCENARIO
    return (
        scenario.is_file() and kind_of_data(read_yaml(scenario)).name == "training"
    )  # a distillation trains too, and is not one
