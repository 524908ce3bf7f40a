"""LLM proxy rewards (Kwon et al., "Reward design with language models"): a reward from an LLM judge.

A researcher states what they want as a few labelled examples or a
description; the judge (the scenario's `judge` role) reads the task, that
statement, an episode rendered as text and a question, and its answer
becomes the reward: binary from the text, graded from P(yes) where the
backend returns log-probabilities. Ground-truth objectives measure how well
it labels.

    from sandbox.proxy import label_scenario
    from sandbox.scenario_file import load_proxy_scenario

    run_dir = label_scenario(load_proxy_scenario("scenarios/proxy/ultimatum/share30_10_examples.yaml"))
"""

from __future__ import annotations

from sandbox.proxy.judge import Judgement, ProxyJudge, SetJudgement
from sandbox.proxy.label import is_label_run, label_scenario, resume_labeling
from sandbox.proxy.objectives import MATRIX_OBJECTIVES, ULTIMATUM_OBJECTIVES, Offer
from sandbox.proxy.scenario import ProxyScenario

__all__ = [
    "MATRIX_OBJECTIVES", "ULTIMATUM_OBJECTIVES", "Judgement", "Offer", "ProxyJudge", "ProxyScenario", "SetJudgement",
    "is_label_run", "label_scenario", "resume_labeling",
]  # fmt: skip
