"""The chain kind's conformance case (`sandbox.core.conformance`): a society of 8 selfish users with SCAI's assistant,
its judge, two tiny students distilled for 4 episodes and their evaluation, on the society kind's scripted models
(tests only; the judge plays as the assistant does).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.core.conformance import ConformanceCase

__all__ = ["CASE"]


def _scenario(tmp: Path) -> Any:
    from sandbox.core.scenario_files import parse_kind

    society = {
        "name": "chain-society",
        "seed": 5,
        "runs": 2,
        "epochs": 2,
        "society": {"size": 8, "norms": [{"norm": "selfish", "proportion": 1.0}]},
        "game": {"kind": "ultimatum", "amount": {"min": 10, "max": 20}},
        "assistant": {
            "initial_policy": "Put others first and give them nearly all.",
            "interactions": {"user_user": 4, "assistant_proposer": 1, "assistant_responder": 1},
        },
    }
    ppo = {"learning_rate": 0.01, "lora_r": 4, "lora_alpha": 8, "max_new_tokens": 1}
    chain = {
        "society": society,
        "models": {"student": "tiny", "judge": "embedded"},
        "distill": {"form": "share", "amounts": {"min": 10, "max": 20}, "currencies": ["dollars"]},
        "training": {"episodes": 4, "parallel": 2, "rounds": 2, "checkpoint_every": 2, "ppo": ppo},
        "seeds": 2,
        "evaluation": {
            "epochs": 1,
            "interactions": {"user_user": 0, "assistant_proposer": 2, "assistant_responder": 2},
        },
    }
    return parse_kind("chain", {"name": "chain-conformance", "seed": 1, "chain": chain})


def _hooks(tick: Callable[[], None]) -> Any:
    from sandbox.chain.run import ChainHooks

    return ChainHooks(on_step=tick)


def _models() -> dict[str, Any]:
    from sandbox.scai.conformance import scai_models

    models = scai_models()
    return {**models, "judge": models["assistant"]}  # the act judge plays as SCAI's assistant does


CASE = ConformanceCase(
    scenario=_scenario,
    hooks=_hooks,
    tables=("comparison.csv", "judge/judge_table.csv", "society/episodes.csv", "evaluate/base/episodes.csv"),
    models=_models,
)
