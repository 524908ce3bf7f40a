"""Reinforcement learning on a model's weights, shared by moral fine-tuning and distillation.

The trainer and what it plays, apart from any one method:

* `environment`: the contract a game keeps for the trainer (`Environment`), and `reset`;
* `schedule`: which reward is in force by episode (`RewardSchedule`);
* `rollout`: the rollout loop of any environment, its `metrics.csv` rows, and the PPO training loop;
* `ppo_config`, `ppo`: the project's own PPO trainer (LoRA policy, value head, adaptive KL) and its settings;
* `sampling`: a prompt as the model's chat turn, and plain sampling from the policy;
* `lora`: the LoRA adapter of a PPO configuration (PPO and TRL alike);
* `trl_trainers`: TRL's GRPO and RLOO behind the same environments and rewards;
* `checkpoints`: a run's progress on disk (metrics rows, whole checkpoints, status);
* `hooks`: a training run's progress callbacks;
* `scenario_block`: the pieces of a scenario's `training:` block (PPO fields, TRL checks);
* `ultimatum_env`: the ultimatum game as a training environment.

Moral fine-tuning (`sandbox.moral`) adds the iterated matrix games and their
rewards; distillation (`sandbox.distill`) trains on the ultimatum game. This
package imports neither; nor does it import its own modules (import each where
it is used, so that the rewards and schedules stay cheap to import).
"""

from __future__ import annotations

__all__: list[str] = []
