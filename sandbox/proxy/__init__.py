"""LLM proxy rewards (Kwon et al., "Reward design with language models"): a reward from an LLM judge.

A researcher states what they want as a few labelled examples or a
description; the judge (the scenario's `judge` role) reads the task, that
statement, an episode rendered as text and a question, and its answer
becomes the reward: binary from the text, graded from P(yes) where the
backend returns log-probabilities. Ground-truth objectives measure how well
it labels.

    from sandbox.proxy import label_scenario
    from sandbox.core.scenario_files import load_scenario

    run_dir = label_scenario(load_scenario("scenarios/proxy/ultimatum/share30_10_examples.yaml", kind="proxy"))

Public modules for other methods (the only ones they may import; import-linter checks it): `judge` (the
judge: `ProxyJudge`, its verdicts), `reward` (judge-based reward functions for the trainers: moral
fine-tuning's `proxy:` rewards), `matrix_task` (a matrix game's labeling items and set scores).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Imported on first use, so that `sandbox.rewards.proxy` (which training scenarios load) stays light.
_LAZY = {
    "Judgement": "judge",
    "ProxyJudge": "judge",
    "SetJudgement": "judge",
    "is_label_run": "label",
    "label_scenario": "label",
    "resume_labeling": "label",
    "MATRIX_OBJECTIVES": "objectives",
    "NEGOTIATION_STYLES": "objectives",
    "ULTIMATUM_OBJECTIVES": "objectives",
    "Offer": "objectives",
    "ProxyScenario": "scenario",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
