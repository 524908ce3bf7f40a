"""Moral fine-tuning (Tennant et al.): intrinsic rewards on iterated matrix games."""

from sandbox.moral.rewards import REWARDS, RewardParams, Schedule, Step, reward

__all__ = ["REWARDS", "RewardParams", "Schedule", "Step", "reward"]
