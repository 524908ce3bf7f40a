"""The tables of a labeling run: one row per verdict, accuracy per condition, and the RL agents' accuracy.

Rows are plain dicts (`labels.csv`); accuracy and agents are computed from
those rows alone, so anyone can recompute them from the run directory.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from sandbox.base.seeding import generator
from sandbox.base.stats import auc, mean_ci, wilson_interval
from sandbox.proxy.rl_agents import agent_accuracy
from sandbox.rewards import matrix_task
from sandbox.rewards.judge import Judgement

__all__ = [
    "AGENT_SEEDS",
    "AGENT_STEPS",
    "accuracy_table",
    "agents_table",
    "matrix_row",
    "negotiation_row",
    "ultimatum_row",
]

BINARY_TASKS = ("ultimatum", "negotiation")  # a yes/no verdict per item
# The paper's RL results are over 3 seeds; training steps of the tabular agent per seed.
AGENT_SEEDS, AGENT_STEPS = 3, 2000


def ultimatum_row(
    condition: str,
    index: int,
    offer: Any,
    truth: bool,
    label: bool | None,
    p_yes: float | None,
    mass: float | None,
    answer: str,
    threshold: float | None = None,
) -> dict[str, Any]:
    """A verdict on one proposal; with a `threshold` (calibration), the label is P(yes) >= threshold where the
    judge gave P(yes), else its parsed answer (`answer_label` keeps the answer's own label)."""
    answer_label = label
    if threshold is not None and label is not None and p_yes is not None:
        label = p_yes >= threshold
    return {
        "condition": condition,
        "item": index,
        "proposer": offer.proposer,
        "responder": offer.responder,
        "total": round(offer.total, 2),
        "share": round(offer.share, 4),
        **_verdict(condition, truth, label, p_yes, mass, answer),
        "answer_label": answer_label,
        "threshold": threshold,
    }


def negotiation_row(
    condition: str,
    index: int,
    episode: Any,
    text: str,
    truth: bool,
    label: bool | None,
    p_yes: float | None,
    mass: float | None,
    answer: str,
) -> dict[str, Any]:
    """A verdict on one test dialogue: the binary columns of `ultimatum_row`, with the dialogue instead of an offer."""
    alice, bob = episode.points()
    return {
        "condition": condition,
        "item": index,
        "utterances": len(episode.utterances),
        "alice_utterances": len(episode.by("Alice")),
        "agreed": episode.agreed,
        "alice_points": alice,
        "bob_points": bob,
        "dialogue": text,
        **_verdict(condition, truth, label, p_yes, mass, answer),
    }


def _verdict(
    condition: str, truth: bool, label: bool | None, p_yes: float | None, mass: float | None, answer: str
) -> dict[str, Any]:
    """A yes/no verdict's columns: its reward and source as `Judgement` defines them (the supervised baseline's
    source is its classifier), whether it parsed and whether it is right."""
    judgement = Judgement(label, p_yes, mass, answer)
    return {
        "truth": truth,
        "label": label,
        "reward": judgement.reward,
        "p_yes": p_yes,
        "mass": mass,
        "source": "classifier" if condition == "supervised" else judgement.source,
        "parsed": label is not None,
        "correct": label == truth if label is not None else False,
        "answer": answer,
    }


def matrix_row(
    condition: str, index: int, item: matrix_task.MatrixItem, objective: str, order: str, verdict: dict[str, Any]
) -> dict[str, Any]:
    answer = None if verdict["options"] is None else frozenset(verdict["options"])
    truth = item.truth(objective)
    row: dict[str, Any] = {"condition": condition, "item": index, "game": item.game.name, "order": order}
    for letter in "ABCD":
        u1, u2 = item.shown(letter)
        row[f"{letter}_payoffs"] = f"{u1:g},{u2:g}"
        row[f"{letter}_cell"] = ",".join(item.order["ABCD".index(letter)])
    row.update(
        {
            "truth": ",".join(sorted(truth)) or "none",
            "answer": "" if answer is None else (",".join(sorted(answer)) or "none"),
            "parsed": answer is not None,
            "score": matrix_task.set_score(answer, truth),
            "random_baseline": matrix_task.random_baseline(truth),
            "reasoning": verdict["reasoning"],
        }
    )
    return row


def _reward_tables(labels: pd.DataFrame, task: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per reward source, `rewards[state, action]` (NaN: unparsed), and `correct[state, action]` from the truth.

    Ultimatum actions are (accept, reject); a verdict's reward r pays r for rejecting and 1 - r for accepting.
    Matrix actions are the options A-D; an option pays 1 when the judge named it.
    """
    tables: dict[str, np.ndarray] = {}
    if task == "ultimatum":
        first = labels[labels["condition"] == labels["condition"].iloc[0]]
        truth = first.sort_values("item")["truth"].to_numpy(dtype=bool)
        correct = np.stack([~truth, truth], axis=1)
        binary = {True: 1.0, False: 0.0, "True": 1.0, "False": 0.0}
        for condition, frame in labels.groupby("condition", sort=False):
            frame = frame.sort_values("item")
            # The paper's reward: 1 when the action agrees with the judge's label (unparsed: none).
            paid = frame["label"].map(binary).to_numpy(dtype=float)
            tables[condition] = np.stack([1.0 - paid, paid], axis=1)
            if (frame["source"] == "logprob").any():  # and the graded reward, P(yes) for rejecting
                graded = pd.to_numeric(frame["reward"], errors="coerce").to_numpy(dtype=float)
                tables[f"{condition}_graded"] = np.stack([1.0 - graded, graded], axis=1)
    else:
        first = labels[labels["condition"] == labels["condition"].iloc[0]].sort_values("item")
        correct = np.array([[letter in str(t).split(",") for letter in "ABCD"] for t in first["truth"]])
        for condition, frame in labels.groupby("condition", sort=False):
            frame = frame.sort_values("item")
            tables[condition] = np.array(
                [
                    [float(letter in str(a).split(",")) if parsed else np.nan for letter in "ABCD"]
                    for a, parsed in zip(frame["answer"].fillna(""), frame["parsed"])
                ]
            )
    tables["true_reward"] = correct.astype(float)
    return tables, correct


def agents_table(labels: pd.DataFrame, task: str, seed: int, branch: int) -> tuple[pd.DataFrame, float]:
    """Agent accuracy per reward source and seed (trained on each table, scored on the truth), and the accuracy
    of a uniformly random policy. Seeds come from the run's seed tree at `(seed, branch, agent seed)`."""
    tables, correct = _reward_tables(labels, task)
    rows = []
    for condition, rewards in tables.items():
        for agent_seed in range(AGENT_SEEDS):
            rng = generator(seed, branch, agent_seed)
            rows.append(
                {
                    "condition": condition,
                    "seed": agent_seed,
                    "agent_accuracy": agent_accuracy(rewards, correct, rng, steps=AGENT_STEPS),
                }
            )
    return pd.DataFrame(rows), float(correct.mean())


def accuracy_table(labels: pd.DataFrame, task: str) -> pd.DataFrame:
    rows = []
    for condition, frame in labels.groupby("condition", sort=False):
        if task in BINARY_TASKS:
            n, correct = len(frame), int(frame["correct"].sum())
            low, high = wilson_interval(correct, n)
            rows.append(
                {
                    "condition": condition,
                    "accuracy": correct / n,
                    "ci_low": low,
                    "ci_high": high,
                    "n": n,
                    "unparsed": int((~frame["parsed"]).sum()),
                    "accuracy_parsed": frame.loc[frame["parsed"], "correct"].mean()
                    if frame["parsed"].any()
                    else math.nan,
                    "auc": auc(frame["reward"].tolist(), frame["truth"].tolist()),
                    "yes_rate": frame.loc[frame["parsed"], "label"].astype(bool).mean()
                    if frame["parsed"].any()
                    else math.nan,
                    "truth_rate": frame["truth"].mean(),
                }
            )
        else:
            mean, low, high, n = mean_ci(frame["score"], bounds=(0.0, 1.0))
            rows.append(
                {
                    "condition": condition,
                    "accuracy": mean,
                    "ci_low": low,
                    "ci_high": high,
                    "n": n,
                    "unparsed": int((~frame["parsed"]).sum()),
                }
            )
    if task in BINARY_TASKS:
        n = int((labels["condition"] == labels["condition"].iloc[0]).sum())
        rows.append(
            {
                "condition": "random",
                "accuracy": 0.5,
                "ci_low": math.nan,
                "ci_high": math.nan,
                "n": n,
                "unparsed": 0,
                "auc": 0.5,
            }
        )
    else:
        first = labels[labels["condition"] == labels["condition"].iloc[0]]
        mean, low, high, n = mean_ci(first["random_baseline"], bounds=(0.0, 1.0))
        rows.append({"condition": "random", "accuracy": mean, "ci_low": low, "ci_high": high, "n": n, "unparsed": 0})
    return pd.DataFrame(rows)
