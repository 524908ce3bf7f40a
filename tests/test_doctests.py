"""The examples in docstrings are tests too."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "agents.meta",
    "sandbox.games.matrix",
    "sandbox.games.matrix_prompt",
    "sandbox.dialogue.domains.ultimatum",
    "sandbox.games.ultimatum",
    "sandbox.scai.metrics",
    "sandbox.scai.nodes",
    "sandbox.llm.embedded_tuning",
    "sandbox.rewards.intrinsic",
    "sandbox.moral.regret",
    "sandbox.base.jobs",
    "sandbox.base.lazy",
    "sandbox.proxy.offers",
    "sandbox.llm.budget",
    "sandbox.base.stats",
    "sandbox.training.environment",
    "sandbox.training.ppo",
    "sandbox.training.schedule",
    "sandbox.training.ultimatum_env",
    "societies.population",
    "societies.contracts",
    "sandbox.proxy.plots",
    "sandbox.sweep.executors",
    "sandbox.games.donor",
    "sandbox.games.commons",
    "sandbox.games.naming",
    "sandbox.population.scenario",
    "sandbox.population.specs.common",
    "sandbox.population.norm_map",
    "sandbox.population.games.naming",
    "sandbox.population.commons_chat",
    "sandbox.population.llm_session",
    "sandbox.viewer.page",
    "sandbox.llm.moves",
    "sandbox.viewer.transcripts",
    "sandbox.base.seeding",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
