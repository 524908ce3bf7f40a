"""SCAI's layer of the society graph: the one hook through which the society engine runs Social Contract AI.

The society engine (`sandbox.society.graph`, `sandbox.society.runner`) calls a `GraphLayer`; this is
SCAI's: it adds the `init_policy` and `meta` nodes and their router, the
assistant's pairs of each epoch, the assistant as a player under the epoch's
policy, its rows in the agent table, and the SCAI tables when a run ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd
from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph

from agents.assistant import PolicyFollowingAssistant
from agents.meta import MetaLM
from agents.student import PolicylessAssistant
from sandbox.rules.ultimatum import UltimatumPlayer
from sandbox.scai.assistant_block import Assistant
from sandbox.scai.nodes import ASSISTANT, COPIES, ScaiState, final, init_policy, meta

if TYPE_CHECKING:
    from sandbox.scai.assistant_block import ScaiScenario


@dataclass
class ScaiLayer:
    """The assistant and its MetaLM in a society run.

    Attributes:
        scenario: The scenario (with an `assistant:` block).
        assistant_model: The assistant role's chat model.
        meta: The MetaLM.
        on_policy: Called with each policy record the graph writes.
    """

    scenario: ScaiScenario
    assistant_model: BaseChatModel
    meta: MetaLM
    on_policy: Callable[[dict[str, Any]], None] = field(default=lambda *_: None)
    name = "scai"  # the summary's section
    state = ScaiState

    @classmethod
    def build(cls, scenario: ScaiScenario, models: dict[str, BaseChatModel], on_policy: Any = None) -> ScaiLayer:
        """The layer of `scenario`, over the run's models per role."""
        c = scenario.assistant
        assert c is not None, "a SCAI layer needs a scenario with an assistant"
        r = c.revision
        meta_lm = MetaLM(
            models["meta"],
            c.meta_principle,
            c.revision_instruction,
            c.max_reasks,
            c.digest,
            show_previous=r.previous == "show",
            critique=r.critique,
            copy_gap=r.copy_gap,
        )
        return cls(scenario, models["assistant"], meta_lm, on_policy or (lambda *_: None))

    @property
    def config(self) -> Assistant:
        assert self.scenario.assistant is not None
        return self.scenario.assistant

    def add_nodes(self, builder: StateGraph) -> None:
        # SCAI's nodes read and write ScaiState, the society state with SCAI's channels, which the builder's own
        # state type does not name (mypy's overloads of add_node reject them, and say so differently cold and warm)
        nodes: dict[str, Any] = {"init_policy": init_policy, "meta": meta, "final": final}
        for name, node in nodes.items():
            builder.add_node(name, node)
        builder.add_edge(START, "init_policy")
        builder.add_edge("init_policy", "pair")
        builder.add_edge("meta", "pair")
        builder.add_edge("final", END)
        builder.add_conditional_edges("score", self.after_score, {"meta": "meta", "final": "final", "__end__": END})

    def _final_step(self) -> bool:
        return bool(self.config.final_proposals) and self.config.prompt == "policy"

    def after_score(self, state: dict[str, Any]) -> Literal["meta", "final", "__end__"]:
        """Router: the meta step before another epoch; after the last, the final policy's proposals, or the end."""
        if state["epoch"] < state["epochs"]:
            return "meta"
        return "final" if self._final_step() else "__end__"

    def finished(self, state: dict[str, Any]) -> bool:
        """Whether a run whose epochs are all played is done (its final proposals made, when asked for)."""
        return not self._final_step() or bool(state.get("finals"))

    def user_pairs(self) -> int | None:
        return self.config.interactions.user_user

    def pairs(self, run: int, rng: Any) -> list[tuple[int | str, int | str, str]]:
        """The assistant's partners, drawn uniformly among the members (users and guided members) each epoch; two
        copies for assistant-assistant games."""
        mix, size = self.config.interactions, self.scenario.society.members()
        pairs: list[tuple[int | str, int | str, str]] = []
        pairs += [(ASSISTANT, int(u), "assistant-proposer") for u in rng.integers(size, size=mix.assistant_proposer)]
        pairs += [(int(u), ASSISTANT, "assistant-responder") for u in rng.integers(size, size=mix.assistant_responder)]
        pairs += [(f"{ASSISTANT}-0", f"{ASSISTANT}-1", "assistant-assistant")] * mix.assistant_assistant
        return pairs

    def task_fields(self, state: dict[str, Any]) -> dict[str, Any]:
        policy = state["policies"][-1] if state.get("policies") else None
        return {"policy": policy["policy"], "policy_version": policy["version"]} if policy else {}

    def player(self, task: dict[str, Any], who: str) -> UltimatumPlayer:
        """The assistant under the task's policy: memoryless, a new one per episode."""
        if "policy" not in task:
            raise ValueError(f"episode task names {who!r} but carries no policy")
        if self.config.prompt == "none":
            return PolicylessAssistant(model=self.assistant_model, form=self.config.answer, agent_id=who)
        return self.policy_assistant(task["policy"], who)

    def policy_assistant(self, policy: str, agent_id: str = ASSISTANT) -> PolicyFollowingAssistant:
        """The assistant under `policy`, as the scenario plays it (rules, reading, responder)."""
        return PolicyFollowingAssistant(
            policy=policy,
            model=self.assistant_model,
            agent_id=agent_id,
            rules=self.scenario.game.rules,
            reading=self.config.reading,
            responder=self.config.responder,
        )

    def episodes_per_epoch(self) -> int:
        return self.config.interactions.total()

    def profiles(self) -> dict[str, dict[str, str]]:
        """The assistant's rows in the agent profiles (its two self-play copies included)."""
        return {agent: {"norm": ASSISTANT, "manner": "neutral"} for agent in (ASSISTANT, *COPIES)}

    def listed(self, agent: str) -> bool:
        """Whether `agent` gets a row of `agents.csv` (the two copies that meet are the one assistant)."""
        return agent not in COPIES

    def finalize(self, run_dir: Any, episodes: pd.DataFrame, states: list[dict[str, Any]]) -> dict[str, Any]:
        """Write the SCAI tables and plots; return the summary's `scai` section."""
        from sandbox.scai.finalize import finalize_scai

        policies = [policy for state in states for policy in state.get("policies", [])]
        finals = [row for state in states for row in state.get("finals", [])]
        return finalize_scai(run_dir, self.scenario, episodes, policies, finals)
