"""GRPO and RLOO (TRL) behind the same environments and rewards as PPO.

TRL's trainers learn from prompts, not from episodes: each step draws
`parallel x rounds / num_generations` prompts, samples `num_generations`
answers to each, and scores every answer with `EnvironmentReward`, a plain
TRL reward function `f(prompts, completions, **columns) -> list[float]` that
plays the answer in its prompt's state through the environment
(`sandbox.training.environment`) and scores it with the same rewards as PPO. A
prompt is the prompt of a random start state (every PPO game starts from one
too); in a matrix game the opponent's move is drawn from its strategy in that
state when the answer is scored.

Because the states are drawn at random rather than reached by play, the
action types logged during training are not those of play. After training,
the trained policy plays `max(1, episodes // 10)` episodes against the
training opponent, exactly as a PPO episode is played; `play.csv` holds
them and `final_action_rates` comes from them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from sandbox.base.seeding import Branch, generator
from sandbox.training.environment import Environment
from sandbox.training.lora import lora_config
from sandbox.training.rollout import episode_metrics

__all__ = [
    "ALGORITHMS",
    "RESERVED",
    "EnvironmentReward",
    "MoralRewardFunction",
    "check_trl_fields",
    "config_class",
    "play_rates",
    "state_dataset",
    "train_with_trl",
    "trl_config",
    "trl_trainer",
]

ALGORITHMS = ("grpo", "rloo")

# TRL fields the sandbox sets itself: one optimiser step per generation batch per episode, its own
# output directory, checkpoints and logging (so that an episode is one reward call and one metrics row).
RESERVED = frozenset(
    {
        "output_dir",
        "max_steps",
        "num_train_epochs",
        "per_device_train_batch_size",
        "generation_batch_size",
        "steps_per_generation",
        "num_iterations",
        "gradient_accumulation_steps",
        "save_strategy",
        "save_steps",
        "save_total_limit",
        "logging_steps",
        "report_to",
        "use_cpu",
        "bf16",
        "fp16",
        "seed",
        "data_seed",
        "learning_rate",
        "max_completion_length",
        "temperature",
        "remove_unused_columns",
        "disable_tqdm",
    }
)


def config_class(algorithm: str) -> type:
    from trl import GRPOConfig, RLOOConfig

    return {"grpo": GRPOConfig, "rloo": RLOOConfig}[algorithm]


def check_trl_fields(algorithm: str, given: dict[str, Any]) -> None:
    """Raise `ValueError` for a field the algorithm's TRL config lacks, or one the sandbox sets itself."""
    known = {f.name for f in fields(config_class(algorithm))}
    for key in given:
        if key in RESERVED:
            raise ValueError(
                f"training.trl.{key} is set by the sandbox (from episodes, parallel x rounds, "
                "checkpoint_every and the ppo block's learning_rate, max_new_tokens, temperature)"
            )
        if key not in known:
            raise ValueError(f"training.trl.{key}: not a field of TRL's {config_class(algorithm).__name__}")


def trl_config(algorithm: str, training: Any, out_dir: Path, seed: int, device: str, report_to: str = "none") -> Any:
    """The TRL config of a training block: its `trl:` fields, and the sandbox's own (see `RESERVED`; `report_to`:
    `mlflow` for a run logged to MLflow, whose MLflow run the environment names)."""
    ppo = training.ppo_config(seed=seed)
    batch = training.parallel * training.rounds
    options = {"lr_scheduler_type": "constant", **training.trl}  # a constant rate, as PPO's
    return config_class(algorithm)(
        output_dir=str(out_dir),
        max_steps=training.episodes,
        per_device_train_batch_size=batch,
        steps_per_generation=1,
        num_iterations=1,
        gradient_accumulation_steps=1,
        save_strategy="steps",
        save_steps=training.checkpoint_every,
        save_total_limit=1,
        logging_steps=1,
        report_to=report_to,
        use_cpu=device == "cpu",
        bf16=device != "cpu",
        seed=ppo.seed,
        data_seed=ppo.seed,
        learning_rate=ppo.learning_rate,
        max_completion_length=ppo.max_new_tokens,
        temperature=ppo.temperature,
        remove_unused_columns=False,
        disable_tqdm=True,
        **options,
    )


def chat_text(tokenizer: Any, prompt: str) -> str:
    """The prompt as the model's chat turn, as text (TRL tokenizes it)."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=False
        )
    return prompt


def state_dataset(setup: Environment, tokenizer: Any, size: int) -> Any:
    """`size` prompts of random start states: columns `prompt` (chat text) and `state` (the game's snapshot)."""
    from datasets import Dataset

    rng = generator(setup.seed, Branch.EPISODE, 1 << 20)  # a node of its own, apart from the episodes'
    rows = []
    for _ in range(size):
        game = setup.new_game(rng)
        rows.append({"prompt": chat_text(tokenizer, setup.prompt(game, rng)), "state": setup.snapshot(game)})
    return Dataset.from_list(rows)


def _text(completion: Any) -> str:
    return completion if isinstance(completion, str) else completion[-1]["content"]


class EnvironmentReward:
    """A TRL reward function: each answer played in the state of its prompt, scored by the scheduled reward.

    Each call is one training step (the sandbox sets one generation batch per
    step); `on_step(step, outcomes)` receives the scored outcomes.
    """

    __name__ = "moral_reward"  # TRL names a reward function's metrics after it

    def __init__(self, setup: Environment, on_step: Callable[[int, list[Any]], None] | None = None) -> None:
        self.setup, self.on_step = setup, on_step

    def __call__(
        self, prompts: list[Any], completions: list[Any], state: list[str], trainer_state: Any = None, **columns: Any
    ) -> list[float]:
        episode = int(trainer_state.global_step) if trainer_state is not None else 0
        rng = generator(self.setup.seed, episode)
        kind = self.setup.schedule.at(episode)
        outcomes = []
        for completion, snapshot in zip(completions, state):
            game = self.setup.restore(snapshot)
            outcomes += self.setup.step([game], [self.setup.parse(_text(completion), game)], rng)
        self.setup.prefetch(outcomes)
        if self.on_step:
            self.on_step(episode, outcomes)
        return [self.setup.score(kind, s) for s in outcomes]


MoralRewardFunction = EnvironmentReward  # its name before the ultimatum game joined the matrix games


def trl_trainer(
    algorithm: str,
    model: Any,
    tokenizer: Any,
    scenario: Any,
    out_dir: Path,
    device: str,
    on_row: Callable[[dict[str, Any]], None],
    proxies: Mapping[str, Any] | None = None,
    setup: Environment | None = None,
    report_to: str = "none",
) -> Any:
    """A GRPO or RLOO trainer for the scenario, whose every step hands `on_row` its `metrics.csv` row.

    `setup` is the environment (default: `scenario.training.setup(seed=, proxies=)`, moral fine-tuning's matrix
    game); `scenario.training` gives the episodes, batch, checkpoints, LoRA and TRL fields.
    """
    from transformers import PrinterCallback, TrainerCallback

    training, seed = scenario.training, scenario.seed
    setup = setup if setup is not None else training.setup(seed=seed, proxies=proxies)
    args = trl_config(algorithm, training, out_dir, seed, device, report_to)  # num_generations: checked by `Training`
    pending: dict[int, list[Any]] = {}

    class Rows(TrainerCallback):
        """Completes each step's row with TRL's logged statistics and hands it on."""

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kw: Any) -> None:
            episode = state.global_step - 1
            if logs is None or episode not in pending:
                return
            stats = {
                "kl": logs.get("kl", math.nan),
                "kl_coef": getattr(args, "beta", math.nan),  # no kl at beta 0
                "policy_loss": logs.get("loss", math.nan),
                "value_loss": math.nan,
                "clipfrac": logs.get("clip_ratio/region_mean", math.nan),
            }
            on_row(episode_metrics(episode, setup, pending.pop(episode), stats))

    from trl import GRPOTrainer, RLOOTrainer

    cls = {"grpo": GRPOTrainer, "rloo": RLOOTrainer}[algorithm]
    prompts = training.episodes * training.parallel * training.rounds // args.num_generations
    trainer = cls(
        model=model,
        reward_funcs=EnvironmentReward(setup, lambda e, s: pending.__setitem__(e, s)),
        args=args,
        train_dataset=state_dataset(setup, tokenizer, prompts),
        processing_class=tokenizer,
        peft_config=lora_config(training.ppo_config(seed=seed), model),
        callbacks=[Rows()],
    )
    trainer.remove_callback(PrinterCallback)  # the sandbox shows its own progress and writes its own rows
    return trainer


def play_rates(
    model: Any,
    tokenizer: Any,
    scenario: Any,
    proxies: Mapping[str, Any] | None = None,
    setup: Environment | None = None,
) -> list[dict[str, Any]]:
    """The trained policy plays `max(1, episodes // 10)` episodes of the environment (default: the scenario's
    matrix game against the training opponent): rows for `play.csv`."""
    import torch

    from sandbox.training.rollout import play_episode
    from sandbox.training.sampling import Sampler

    training, seed = scenario.training, scenario.seed
    setup = setup if setup is not None else training.setup(seed=seed, proxies=proxies)
    ppo = training.ppo_config(seed=seed)
    sampler = Sampler(model, tokenizer, ppo.max_new_tokens, ppo.temperature)
    torch.manual_seed(seed)
    rows = []
    nan_stats = dict.fromkeys(("kl", "kl_coef", "policy_loss", "value_loss", "clipfrac"), math.nan)
    for i in range(max(1, training.episodes // 10)):
        _, _, steps = play_episode(sampler, setup, i, rng=generator(seed, Branch.EVALUATION, 1 << 20, i))  # type: ignore[arg-type]
        setup.prefetch(steps)
        rows.append(episode_metrics(i, setup, steps, nan_stats))
    return rows


def train_with_trl(
    run_dir: Any,
    scenario: Any,
    base: Any,
    hooks: Any,
    *,
    resume: bool,
    proxies: Callable[[], Mapping[str, Any]] | None = None,
    setup: Environment | None = None,
    report_to: str = "none",
) -> Any:
    """A GRPO or RLOO run into `run_dir`: TRL's checkpoints (`trl/checkpoint-N`, resumed from the last), one
    `metrics.csv` row per step (with `seconds`), the adapter (`adapter/`), and the trained policy's play
    (`play.csv`, returned as a DataFrame).

    Args:
        run_dir: The run directory (`sandbox.core.run_dir.RunDirectory`).
        scenario: A scenario whose `training` block has algorithm, episodes, parallel, rounds, trl and ppo fields.
        base: The base model (`sandbox.llm.base_model.BaseModel`).
        hooks: `on_start(total, done)` and `on_episode(row)` callbacks (either may be None).
        resume: Continue from the last TRL checkpoint.
        proxies: Builds the run's table rewards once the rows are trimmed (matrix games).
        setup: The environment (default: the scenario's matrix game).
        report_to: TRL's `report_to` (`mlflow`: its step logs go to the run's MLflow run too).
    """
    import time

    import pandas as pd

    from sandbox.training.checkpoints import MetricsFile, keep_rows, running

    training = scenario.training
    out = run_dir / "trl"
    checkpoints = sorted(out.glob("checkpoint-*"), key=lambda p: int(p.name.rsplit("-", 1)[1])) if resume else []
    start = int(checkpoints[-1].name.rsplit("-", 1)[1]) if checkpoints else 0
    keep_rows(run_dir / "metrics.csv", start)
    tables = proxies() if proxies is not None else None
    if hooks.on_start:
        hooks.on_start(training.episodes, start)
    with running(run_dir, start), MetricsFile(run_dir / "metrics.csv") as rows:
        last = time.perf_counter()

        def on_row(row: dict[str, Any]) -> None:
            nonlocal last
            now = time.perf_counter()
            row["seconds"], last = now - last, now
            rows.append(row)
            if hooks.on_episode:
                hooks.on_episode(row)

        trainer = trl_trainer(
            training.algorithm,
            base.model,
            base.tokenizer,
            scenario,
            out,
            base.device,
            on_row,
            tables,
            setup=setup,
            report_to=report_to,
        )
        trainer.train(resume_from_checkpoint=str(checkpoints[-1]) if checkpoints else None)
    trainer.model.save_pretrained(run_dir / "adapter")
    play = pd.DataFrame(play_rates(trainer.model, base.tokenizer, scenario, tables, setup=setup))
    play.to_csv(run_dir / "play.csv", index=False)
    return play
