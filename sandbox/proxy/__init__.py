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

The judge, its parsers, the objectives, the matrix task and the judge's verdicts as a training reward are shared
with the other methods, in `sandbox.rewards` (`judge`, `parse`, `objectives`, `matrix_task`, `proxy`); this
package holds the labeling experiment (`label_run`, `negotiation_label`), its scenario and its tables.
"""

from __future__ import annotations

from typing import Any

from sandbox.base.lazy import lazy_attribute

# Imported on first use, so that importing the package stays light.
_LAZY = {
    "Judgement": "sandbox.rewards.judge",
    "ProxyJudge": "sandbox.rewards.judge",
    "SetJudgement": "sandbox.rewards.judge",
    "is_label_run": "sandbox.proxy.label_run",
    "label_scenario": "sandbox.proxy.label_run",
    "resume_labeling": "sandbox.proxy.label_run",
    "MATRIX_OBJECTIVES": "sandbox.rewards.objectives",
    "NEGOTIATION_STYLES": "sandbox.rewards.objectives",
    "ULTIMATUM_OBJECTIVES": "sandbox.rewards.objectives",
    "Offer": "sandbox.rewards.objectives",
    "ProxyScenario": "sandbox.proxy.scenario",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _LAZY, name)
