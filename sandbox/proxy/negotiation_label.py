"""A negotiation labeling run's two parts (`sandbox label` with `task: negotiation`): the verdicts on the test
dialogues beside the supervised baseline, and the negotiators trained by REINFORCE on the judge's verdicts.

`sandbox.proxy.label_run` runs both and writes the run directory.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sandbox.base.seeding import generator, seed_node
from sandbox.llm.contracts import CallInfo
from sandbox.proxy import negotiation_task
from sandbox.proxy.label_steps import AGENT_SEEDS, TEST, LabelHooks, Partial, ask_all, call_seed, judge_conditions
from sandbox.proxy.scenario import ProxyScenario
from sandbox.proxy.supervised import fit_supervised
from sandbox.proxy.tables import negotiation_row
from sandbox.rewards.judge import ProxyJudge

__all__ = ["negotiation_agents", "negotiation_rows"]


async def negotiation_rows(
    scenario: ProxyScenario, judge: ProxyJudge, partial: Partial, hooks: LabelHooks
) -> list[dict[str, Any]]:
    block = scenario.proxy
    style = block.objective.name
    test = negotiation_task.draw_test_set(block.test_items, generator(scenario.seed, TEST), turn_limit=block.turn_limit)
    texts = [negotiation_task.render_episode(e) for e in test]

    async def ask(condition: str, index: int, episode: Any) -> dict[str, Any]:
        verdict = await _negotiation_verdict(
            scenario, judge, episode, condition, f"{condition}:{index}", call_seed(scenario, index)
        )
        return {"label": verdict.label, "p_yes": verdict.p_yes, "mass": verdict.mass, "answer": verdict.answer}

    conditions = judge_conditions(scenario)
    await ask_all(conditions, test, partial, hooks, ask)
    rows = []
    for condition in conditions:
        for index, (episode, text) in enumerate(zip(test, texts)):
            v = partial.done[f"{condition}:{index}"]
            rows.append(
                negotiation_row(
                    condition,
                    index,
                    episode,
                    text,
                    negotiation_task.truth(style, episode),
                    v["label"],
                    v["p_yes"],
                    v["mass"],
                    v["answer"],
                )
            )
    model = _negotiation_classifier(style)
    for index, (episode, text, p) in enumerate(
        zip(test, texts, model.probability([negotiation_task.features(e) for e in test]))
    ):
        rows.append(
            negotiation_row(
                "supervised", index, episode, text, negotiation_task.truth(style, episode), p >= 0.5, p, None, ""
            )
        )
    return rows


def _negotiation_classifier(style: str) -> Any:
    """The supervised baseline, fitted on the three example dialogues the judge saw."""
    examples = negotiation_task.examples_for(style)
    return fit_supervised(
        [negotiation_task.features(e.episode) for e in examples], [e.answers[style].startswith("Yes") for e in examples]
    )


async def _negotiation_verdict(
    scenario: ProxyScenario, judge: ProxyJudge, episode: Any, condition: str, key: str, seed: int
) -> Any:
    block = scenario.proxy
    prompt = negotiation_task.render_prompt(
        block.objective.name,
        episode,
        form=block.intent.form if condition == "llm" else "none",
        explanations=block.intent.explanations,
        description=block.intent.description,
        task_description=block.task_description,
        answer_instruction=block.answer_instruction,
    )
    call = CallInfo(role="judge", agent="judge", episode=key, step="verdict")
    return await judge.yes_no(prompt, step_by_step=False, call=call, seed=seed)


async def negotiation_agents(
    scenario: ProxyScenario, judge: ProxyJudge, hooks: LabelHooks
) -> tuple[pd.DataFrame, float, dict[str, Any]]:
    """Negotiators trained by REINFORCE on the judge's verdicts (every distinct dialogue asked once, through the
    cache), on the supervised baseline's and on the true style, scored on the truth; and an untrained policy's
    accuracy. Returns the agents' table, that accuracy and the judge's RL cost."""
    from sandbox.proxy.negotiator import Negotiator, style_accuracy, train_negotiator

    block = scenario.proxy
    style = block.objective.name
    classifier = _negotiation_classifier(style)
    asked: dict[str, tuple[float | None, bool]] = {}  # per distinct dialogue: the judge's reward, the truth

    async def llm(episode: Any) -> float | None:
        text = negotiation_task.render_episode(episode)
        if text not in asked:
            verdict = await _negotiation_verdict(
                scenario, judge, episode, "llm", f"rl:{len(asked)}", call_seed(scenario, 1 << 20)
            )
            asked[text] = (
                None if verdict.label is None else float(verdict.label),
                negotiation_task.truth(style, episode),
            )
        return asked[text][0]

    async def supervised(episode: Any) -> float:
        return float(classifier.predict([negotiation_task.features(episode)])[0])

    async def true_reward(episode: Any) -> float:
        return float(negotiation_task.truth(style, episode))

    sources = {"llm": llm, "supervised": supervised, "true_reward": true_reward}
    rows, skipped = [], 0
    if hooks.on_phase:
        hooks.on_phase("negotiator dialogues", len(sources) * block.negotiator_seeds * block.negotiator_episodes)
    for condition, reward in sources.items():
        for agent_seed in range(block.negotiator_seeds):
            seed = int(seed_node(scenario.seed, AGENT_SEEDS, agent_seed).generate_state(1)[0])
            agent, counts = await train_negotiator(
                reward,
                episodes=block.negotiator_episodes,
                seed=seed,
                turn_limit=block.turn_limit,
                on_dialogue=hooks.on_item,
            )
            skipped += counts["skipped"] if condition == "llm" else 0
            rows.append(
                {
                    "condition": condition,
                    "seed": agent_seed,
                    "agent_accuracy": style_accuracy(agent, style, seed=scenario.seed),
                }
            )
    untrained = style_accuracy(Negotiator.new(scenario.seed, block.turn_limit), style, seed=scenario.seed)
    # The paper scored its judge on the RL dialogues (reward_model_accuracy.py): the same, at no extra call.
    rated = [(label, truth) for label, truth in asked.values() if label is not None]
    rl_accuracy = float(np.mean([bool(label) == truth for label, truth in rated])) if rated else None
    return (
        pd.DataFrame(rows),
        untrained,
        {
            "rl_judge_calls": len(asked),
            "rl_unparsed_skipped": skipped,
            "rl_dialogues": block.negotiator_episodes * block.negotiator_seeds,
            "rl_labeling_accuracy": rl_accuracy,
            "rl_truth_rate": float(np.mean([t for _, t in rated])) if rated else None,
        },
    )
