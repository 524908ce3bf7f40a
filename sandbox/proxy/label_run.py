"""`sandbox label`: a labeling experiment, the judge against the ground truth on a fixed test set.

The run directory:
    scenario.yaml, run.json, cache.sqlite, transcripts.jsonl (as every run)
    labels.partial.jsonl  verdicts as they arrive (a resumed run skips them); removed at the end
    labels.csv            one row per condition and test item: inputs, ground truth, label, graded reward, parsed
    accuracy.csv          labeling accuracy with 95% intervals per condition (LLM, No-Objective, SL, random), AUC,
                          and the mean accuracy of an RL agent trained on that condition's rewards
    agents.csv            RL agent accuracy per reward source (and the true reward) and seed: tabular agents on
                          the labels' table (ultimatum, matrix: no judge calls), or REINFORCE negotiators whose
                          dialogues the judge rates as they come (negotiation: one call per distinct dialogue;
                          `sandbox.proxy.negotiation_label`)
    calibration.csv       with `calibration: examples`: the verdicts on the user's examples and the threshold fitted
                          on them, per condition (labels.csv's columns)
    summary.json          the figures, the judge's calls and cache hits
    accuracy.png          the bars, in the style of the paper's Fig. 5
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from langchain_core.language_models import BaseChatModel

from sandbox.base.seeding import generator
from sandbox.base.stats import json_number, mean_ci
from sandbox.core import run_dir as layout
from sandbox.core.run_dir import RunDirectory, atomic_write_text, default_out, hold, holding
from sandbox.core.summary import write_summary
from sandbox.llm.accounting import TokenLedger
from sandbox.llm.cache import ResponseCache
from sandbox.llm.contracts import CallInfo
from sandbox.llm.resolve import model_stack
from sandbox.llm.transcript import TranscriptWriter, finalize_transcript
from sandbox.proxy import ultimatum_task
from sandbox.proxy.label_steps import (
    AGENT_SEEDS,
    SCRAMBLE,
    LabelHooks,
    Partial,
    ask_all,
    call_seed,
    judge_conditions,
)
from sandbox.proxy.metrics import fit_threshold
from sandbox.proxy.plots import plot_accuracy
from sandbox.proxy.scenario import ProxyScenario
from sandbox.proxy.supervised import fit_supervised
from sandbox.proxy.tables import accuracy_table, agents_table, matrix_row, ultimatum_row
from sandbox.rewards import matrix_task
from sandbox.rewards.judge import ProxyJudge

__all__ = ["LabelHooks", "is_label_run", "label_scenario", "resume_labeling"]

PARTIAL = "labels.partial.jsonl"
LABELS = "labels.csv"
ACCURACY = "accuracy.csv"
PLOT = "accuracy.png"
AGENTS = "agents.csv"
CALIBRATION = "calibration.csv"


async def _ultimatum_rows(
    scenario: ProxyScenario, judge: ProxyJudge, partial: Partial, hooks: LabelHooks
) -> list[dict[str, Any]]:
    """The verdicts on the test proposals; with `calibration: examples`, also on each of the user's examples
    (rows with `split: calibration`; the llm condition shows the other examples, the No-Objective one none),
    whose fitted threshold then labels that condition's test set (None when it cannot be fitted: the answers
    stay the labels)."""
    block = scenario.proxy
    example_offers, test = scenario.test_set()
    examples = ultimatum_task.examples_for(block, example_offers)
    conditions = judge_conditions(scenario)
    # Items after the test set are the examples, asked for calibration (their keys follow the test items').
    calibrating = examples if block.calibration == "examples" else []
    items = [*test, *(example.offer for example in calibrating)]

    async def ask(condition: str, index: int, offer: ultimatum_task.Offer) -> dict[str, Any]:
        held_out = index - len(test)  # leave-one-out by position (duplicate examples are refused)
        shown = examples if held_out < 0 else examples[:held_out] + examples[held_out + 1 :]
        prompt = ultimatum_task.render_prompt(block, offer, shown, objective=condition == "llm")
        step = "verdict" if index < len(test) else "calibration"
        call = CallInfo(role="judge", agent="judge", episode=f"{condition}:{index}", step=step)
        verdict = await judge.yes_no(
            prompt.text, step_by_step=prompt.step_by_step, call=call, seed=call_seed(scenario, index)
        )
        return {"label": verdict.label, "p_yes": verdict.p_yes, "mass": verdict.mass, "answer": verdict.answer}

    await ask_all(conditions, items, partial, hooks, ask)
    rows = []
    for condition in conditions:
        threshold = None
        if calibrating:
            asked = [partial.done[f"{condition}:{len(test) + j}"] for j in range(len(calibrating))]
            threshold = fit_threshold(
                [v["p_yes"] if v["label"] is not None else None for v in asked],
                [example.reject for example in calibrating],
            )
            for j, (example, verdict) in enumerate(zip(calibrating, asked)):
                rows.append(
                    {
                        **ultimatum_row(
                            condition,
                            j,
                            example.offer,
                            example.reject,
                            verdict["label"],
                            verdict["p_yes"],
                            verdict["mass"],
                            verdict["answer"],
                            threshold,
                        ),
                        "split": "calibration",
                    }
                )
        for index, offer in enumerate(test):
            verdict = partial.done[f"{condition}:{index}"]
            rows.append(
                ultimatum_row(
                    condition,
                    index,
                    offer,
                    block.should_reject(offer),
                    verdict["label"],
                    verdict["p_yes"],
                    verdict["mass"],
                    verdict["answer"],
                    threshold,
                )
            )
    if examples:
        model = fit_supervised([[e.offer.proposer, e.offer.responder] for e in examples], [e.reject for e in examples])
        probabilities = model.probability([[o.proposer, o.responder] for o in test])
        for index, (offer, p) in enumerate(zip(test, probabilities)):
            rows.append(ultimatum_row("supervised", index, offer, block.should_reject(offer), p >= 0.5, p, None, ""))
    return rows


async def _matrix_rows(
    scenario: ProxyScenario, judge: ProxyJudge, partial: Partial, hooks: LabelHooks
) -> list[dict[str, Any]]:
    block = scenario.proxy
    rng = generator(scenario.seed, SCRAMBLE)
    items = [matrix_task.matrix_item(name, block.order, rng) for name in block.games]
    # The objective's own question, or the user's description of it; "none" for the No-Objective baseline.
    questions = {
        "llm": (block.objective.name, None)
        if block.intent.description is None
        else ("custom", block.intent.description),
        "no_objective": ("none", None),
    }
    conditions = judge_conditions(scenario)

    async def ask(condition: str, index: int, item: matrix_task.MatrixItem) -> dict[str, Any]:
        question, description = questions[condition]
        parts = [item.options_text()] if block.task_description else []
        prompt = "\n\n".join([*parts, item.question_text(question, description)])
        call = CallInfo(role="judge", agent="judge", episode=f"{condition}:{index}", step="options")
        verdict = await judge.options(prompt, call=call, seed=call_seed(scenario, index))
        return {
            "options": None if verdict.options is None else sorted(verdict.options),
            "reasoning": verdict.reasoning,
            "answer": verdict.answer,
        }

    await ask_all(conditions, items, partial, hooks, ask)
    rows = []
    for condition in conditions:
        for index, item in enumerate(items):
            verdict = partial.done[f"{condition}:{index}"]
            rows.append(matrix_row(condition, index, item, block.objective.name, block.order, verdict))
    return rows


async def _alabel(
    run_dir: RunDirectory,
    scenario: ProxyScenario,
    models: Mapping[str, BaseChatModel],
    hooks: LabelHooks,
    ledgers: Sequence[Any] = (),
) -> dict[str, Any]:
    from sandbox.core.budget import run_ledgers, stop_run

    cache = ResponseCache(run_dir / layout.CACHE)
    ledgers = run_ledgers(run_dir, scenario, ledgers)  # before this session's transcript opens
    transcript = TranscriptWriter(run_dir / layout.TRANSCRIPTS)
    partial = Partial(run_dir / PARTIAL)
    stack = model_stack(scenario, cache, [transcript], ledgers)
    config = scenario.models.judge
    model = stack.for_role("judge", config.spec, config.sampling.model_dump(), given=models.get("judge"))
    block = scenario.proxy
    judge = ProxyJudge(
        model,
        temperature=block.temperature,
        graded=block.scoring == "graded",
        top_logprobs=block.top_logprobs,
        reasoning_tokens=block.reasoning_budget(),
    )
    started = time.time()
    from sandbox.proxy.negotiation_label import negotiation_agents, negotiation_rows

    tasks = {"ultimatum": _ultimatum_rows, "matrix": _matrix_rows, "negotiation": negotiation_rows}
    agents = None
    try:
        rows = await tasks[block.task](scenario, judge, partial, hooks)
        if block.task == "negotiation":
            agents = await negotiation_agents(scenario, judge, hooks)
    except BaseException as error:
        stop_run(run_dir, error, "labeling")
    finally:
        partial.close()
        transcript.close()
        cache.close()
    return _finish(run_dir, scenario, rows, time.time() - started, agents)


def _finish(
    run_dir: RunDirectory,
    scenario: ProxyScenario,
    rows: list[dict[str, Any]],
    seconds: float,
    trained: tuple[pd.DataFrame, float, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Write the tables, the summary and the plot; `trained`: the negotiation agents (the others are computed
    here from the labels' table)."""
    block = scenario.proxy
    labels = pd.DataFrame(rows)
    calibration = None
    if "split" in labels:  # the verdicts on the user's examples that fitted the threshold
        calibration = labels[labels["split"] == "calibration"].drop(columns="split")
        labels = labels[labels["split"] != "calibration"].drop(columns="split").reset_index(drop=True)
    accuracy = accuracy_table(labels, block.task)
    if trained is None:
        agents, random_policy = agents_table(labels, block.task, scenario.seed, AGENT_SEEDS)
        rl_cost = {"rl_judge_calls": 0}  # the agents train on the table the labeling filled
    else:
        agents, random_policy, rl_cost = trained
    by_source = agents.groupby("condition", sort=False)["agent_accuracy"]
    accuracy["agent_accuracy"] = accuracy["condition"].map(by_source.mean())
    accuracy.loc[accuracy["condition"] == "random", "agent_accuracy"] = random_policy
    records = finalize_transcript(run_dir / layout.TRANSCRIPTS)
    usage = TokenLedger.from_transcript(records).totals().get("judge", {})
    llm = labels[labels["condition"] == labels["condition"].iloc[0]]  # the judge's first condition
    summary = {
        "scenario": scenario.name,
        "task": block.task,
        "objective": {"name": block.objective.name, **block.objective.params()},
        "intent": block.intent.form,
        "examples": block.example_count(),
        "explanations": block.intent.explanations,
        "order": block.order if block.task == "matrix" else None,
        "judge": scenario.models.judge.spec,
        "scoring": block.scoring,
        "items": len(llm),
        "accuracy": {
            r["condition"]: {k: json_number(v) for k, v in r.items() if k != "condition"}
            for r in accuracy.to_dict("records")
        },
        "agent_accuracy": {
            condition: dict(
                zip(("mean", "ci_low", "ci_high", "seeds"), map(json_number, mean_ci(values, bounds=(0.0, 1.0))))
            )
            for condition, values in by_source
        },
        "calibration": None
        if calibration is None
        else {
            condition: {
                "threshold": json_number(group["threshold"].iloc[0]),
                "examples": len(group),
                "scored_examples": int(group["p_yes"].notna().sum()),
                "example_classes": int(group["truth"].nunique()),
                "examples_fit_accuracy": json_number(group["correct"].mean()),
            }  # in-sample: the cut was fitted here
            for condition, group in calibration.groupby("condition", sort=False)
        },
        "distinct_episodes": len(llm),
        **rl_cost,
        "graded_sources": llm["source"].value_counts().to_dict() if "source" in llm else {},
        "judge_calls": int(usage.get("calls", 0)),
        "judge_cache_hits": int(usage.get("cache_hits", 0)),
        "judge_cache_hit_rate": json_number(usage.get("cache_hits", 0) / usage["calls"])
        if usage.get("calls")
        else None,
        "judge_input_tokens": int(usage.get("input_tokens", 0)),
        "judge_output_tokens": int(usage.get("output_tokens", 0)),
        "judge_prompt_cached_tokens": int(usage.get("prompt_cached_tokens", 0)),
        "seconds": round(seconds, 2),
    }
    atomic_write_text(run_dir / LABELS, labels.to_csv(index=False))
    atomic_write_text(run_dir / ACCURACY, accuracy.to_csv(index=False))
    atomic_write_text(run_dir / AGENTS, agents.to_csv(index=False))
    if calibration is not None:
        atomic_write_text(run_dir / CALIBRATION, calibration.to_csv(index=False))
    write_summary(run_dir, summary, kind="proxy")
    title = f"{scenario.name}: {block.objective.name}, {block.intent.form}"
    plot_accuracy(accuracy, title).savefig(run_dir / PLOT, dpi=120)
    (run_dir / PARTIAL).unlink(missing_ok=True)
    run_dir.write_status("complete", seconds=summary["seconds"])
    return summary


def label_scenario(
    scenario: ProxyScenario,
    out: Path | str | None = None,
    *,
    models: Mapping[str, BaseChatModel] | None = None,
    hooks: LabelHooks | None = None,
    ledgers: Sequence[Any] = (),
) -> Path:
    """Label the scenario's test set with its judge; the run directory.

    Args:
        scenario: A validated labeling scenario.
        out: The run directory (default `runs/<name>-<time>`); must be new or empty.
        models: Model objects by role (e.g. `{"judge": model}`), instead of the scenario's specs.
        hooks: Progress callbacks.
        ledgers: Budget ledgers beyond the run's own `budget` (a sweep's).
    """
    from sandbox.core.kinds import get as kind_named

    kind_named("proxy").require(scenario)  # the extras it needs (a smollm2 student, an hf: judge), first
    from sandbox.base.sync import run_sync

    path = Path(out) if out is not None else default_out(scenario)
    with hold(path):
        run_dir = RunDirectory.create(path, scenario)
        run_sync(_alabel(run_dir, scenario, models or {}, hooks or LabelHooks(), ledgers))
    return path


def is_label_run(path: Path | str) -> bool:
    """Whether `path` is a labeling run directory (its scenario has a `proxy:` block)."""
    from sandbox.base.files import read_yaml

    scenario = Path(path) / layout.SCENARIO
    return scenario.is_file() and isinstance(data := read_yaml(scenario), dict) and "proxy" in data


@holding
def resume_labeling(
    path: Path | str,
    *,
    models: Mapping[str, BaseChatModel] | None = None,
    hooks: LabelHooks | None = None,
    ledgers: Sequence[Any] = (),
) -> Path:
    """Finish an interrupted labeling run: verdicts already given are kept, the rest are asked."""
    from sandbox.base.sync import run_sync
    from sandbox.core.scenario_files import load_scenario

    run_dir = RunDirectory.open(path)
    scenario = load_scenario(run_dir / layout.SCENARIO, kind="proxy")
    run_dir.write_status("running")
    run_sync(_alabel(run_dir, scenario, models or {}, hooks or LabelHooks(), ledgers))
    return Path(path)
