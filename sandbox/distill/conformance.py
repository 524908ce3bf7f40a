"""The distill and judge kinds' conformance cases (`sandbox.core.conformance`): a tiny distillation of "give the other
player everything" into the tiny model, and a judge run that labels every move once, judged by a scripted judge
(tests only) that says Yes when the responder gets at least 90 of 100.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.core.conformance import ConformanceCase
from sandbox.llm.scripted import scripted

__all__ = ["DISTILL_CASE", "JUDGE_CASE", "generous_judge", "tiny_distillation"]

SOURCE = {"source": {"text": "Give the other player everything."}, "truth": "altruistic", "scoring": "binary"}


def generous_judge(at_least: int = 90) -> Any:
    """A judge that says Yes when the responder gets at least `at_least` of the 100, and counts its calls."""

    def verdict(messages: list[Any], kwargs: dict[str, Any]) -> str:
        given = re.search(r"the responder will get (\d+)\.", str(messages[-1].content))
        return "Yes" if given and int(given.group(1)) >= at_least else "No"

    return scripted([(r"Answer Yes or No", verdict)])


def tiny_distillation(name: str = "distill-conformance", **distill: Any) -> Any:
    """The case's distillation scenario (`distill`: more fields of its `distill:` block): six episodes of PPO with
    LoRA on the tiny model, a number of one token as the proposal, legal up to the amount, so the judge has moves
    to see."""
    from sandbox.core.scenario_files import parse_kind

    return parse_kind(
        "distill",
        {
            "name": name,
            "seed": 3,
            "models": {"student": "tiny"},
            "distill": {**SOURCE, "amounts": {"min": 10, "max": 30}, **distill},
            "training": {
                "episodes": 6,
                "parallel": 2,
                "rounds": 4,
                "checkpoint_every": 2,
                "ppo": {"learning_rate": 0.01, "lora_r": 4, "lora_alpha": 8, "max_new_tokens": 1},
            },
        },
    )


def _distill(tmp: Path) -> Any:
    return tiny_distillation(trials=2)


def _train_hooks(tick: Callable[[], None]) -> Any:
    from sandbox.training.hooks import TrainHooks

    return TrainHooks(on_episode=lambda _: tick())


def _distill_models() -> dict[str, Any]:
    from sandbox.society.benchmarks import fake_scai_models

    models = fake_scai_models(0.0)
    return {"judge": generous_judge(), "assistant": models["assistant"], "users": models["user"]}


def _judge(tmp: Path) -> Any:
    from sandbox.core.scenario_files import parse_kind

    return parse_kind(
        "judge",
        {
            "name": "judge-conformance",
            "seed": 2,
            "concurrency": 2,
            "models": {"judge": "embedded"},
            "distill": SOURCE,
            "label": {"roles": ["proposer", "responder"]},
        },
    )


DISTILL_CASE = ConformanceCase(
    scenario=_distill,
    hooks=_train_hooks,
    tables=("metrics.csv", "judge_table.csv", "evaluation.csv"),
    models=_distill_models,
)
JUDGE_CASE = ConformanceCase(
    scenario=_judge, hooks=lambda tick: tick, tables=("judge_table.csv",), models=lambda: {"judge": generous_judge()}
)
