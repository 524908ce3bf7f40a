"""A training run's progress callbacks (moral fine-tuning and distillation alike)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["TrainHooks"]


@dataclass
class TrainHooks:
    """Progress callbacks: `on_start(total, done)` once, `on_episode(row)` after each episode."""

    on_start: Callable[[int, int], None] | None = None
    on_episode: Callable[[dict[str, Any]], None] | None = None
