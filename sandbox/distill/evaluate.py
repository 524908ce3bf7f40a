"""Evaluation without the policy: the distilled student beside the policy-prompted assistant, the users and the base.

After training, four subjects play the same seeded moves on each condition:

* `users`: users of the source run's population (their norm, manner and
  model; for a text source, users of the true library norm when it is known);
* `assistant`: the policy-prompted assistant (SCAI's `PolicyFollowingAssistant`
  under the distilled principle; the source run's assistant model);
* `student`: the student with its trained adapter, with no policy and no
  system prompt (`agents.student.PolicylessAssistant`, the training prompt);
* `base`: the same student with the adapter off (the untrained base model).

The conditions are SCAI's: the training amounts and currencies, the held-out
amounts, and `distill.conditions` (by default a new currency, grams of
medicine, and 2.22 billion). Each trial is one proposal on a seeded stake and
one answer to a seeded proposal (the responder's part uniform from 0 to the
amount); the stakes and proposals are the same for every subject, so the
subjects differ only in who plays. Users and the assistant play under the
society's grammar constraint, as in the source run; the student and the base
answer unconstrained, as the student trained. An answer the society's parser
cannot read is an illegal move, recorded.

Written into the run directory:
    evaluation.csv      one row per move: subject, condition, trial, role, stake, answer, move
    distillation.csv    per subject and condition: offered share and acceptance, mean and 95% CI, illegal rate
    distillation.png    the same as bars with 95% CIs
    evaluation_transcripts.jsonl   every call (the student's and the base's hold no policy and no system prompt)
and `summary.json["evaluation"]`. The calls go through the run's cache, so an
evaluation killed half-way, or run twice, ends with the same tables.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure

from sandbox.base.errors import UsageError
from sandbox.base.files import read_json
from sandbox.base.jobs import gather_jobs
from sandbox.base.seeding import generator, seed_node
from sandbox.base.stats import mean_ci
from sandbox.core.run_dir import RunDirectory, atomic_write_text, holding
from sandbox.core.summary import write_summary
from sandbox.rules.ultimatum import ParseError, Split, Stake, parse_decision, parse_proposal, proposal_sentence

__all__ = ["EVALUATION", "RESULTS", "SUBJECTS", "EvalCondition", "evaluate_distill", "plot_distillation"]

EVALUATION = "evaluation.csv"
RESULTS = "distillation.csv"
PLOT = "distillation.png"
TRANSCRIPT = "evaluation_transcripts.jsonl"
SUBJECTS = ("users", "assistant", "student", "base")
COLUMNS = [
    "subject",
    "condition",
    "trial",
    "role",
    "amount",
    "currency",
    "agent",
    "principle",
    "offer_to_responder",
    "answer",
    "legal",
    "offered_share",
    "decision",
]
_EVAL = 1 << 24  # the seed-tree branch of the evaluation's stakes and calls


@dataclass(frozen=True)
class EvalCondition:
    """A condition of the evaluation: a name, the amounts and the currencies its stakes are drawn from."""

    name: str
    amounts: tuple[int, ...]
    currencies: tuple[str, ...]


def conditions(scenario: Any, plan: Any) -> list[EvalCondition]:
    """The training amounts and currencies, the held-out amounts, and `distill.conditions`."""
    train, currencies = tuple(plan.train_amounts), tuple(plan.currencies)
    out = [EvalCondition("training", train, currencies)]
    if plan.held_out_amounts:
        out.append(EvalCondition("held-out", tuple(plan.held_out_amounts), currencies))
    for condition in scenario.distill.conditions:
        amount = condition.amount
        if amount is None:
            amounts = train
        elif isinstance(amount, int):
            amounts = (amount,)
        else:
            amounts = tuple(range(amount.min, amount.max + 1))
        out.append(EvalCondition(condition.name, amounts, (condition.currency,) if condition.currency else currencies))
    return out


def _stake(seed: int, index: int, trial: int, condition: EvalCondition) -> tuple[Stake, Split]:
    rng = generator(seed, _EVAL, index, trial)
    stake = Stake(
        int(condition.amounts[int(rng.integers(len(condition.amounts)))]),
        condition.currencies[int(rng.integers(len(condition.currencies)))],
    )
    given = int(rng.integers(stake.amount + 1))
    return stake, Split(stake.amount - given, given)


def _seed(seed: int, index: int, trial: int, move: int) -> int:
    return int(seed_node(seed, _EVAL, index, trial, move).generate_state(1)[0])


def _users(plan: Any, source: Any, seed: int) -> list[Any]:
    """The user profiles who play `users`: the source run's population, or one of the true norm."""
    from sandbox.base.seeding import Branch
    from societies.population import build_population
    from societies.society_block import Society

    if source is not None:
        scenario = source.scenario
        return build_population(scenario.society, generator(scenario.seed, 0, Branch.POPULATION))
    if plan.truth is None:
        return []
    society = Society(size=2, norms=[{"norm": plan.truth, "proportion": 1.0}])
    return build_population(society, generator(seed, 0, Branch.POPULATION))


def _device(scenario: Any) -> str:
    if scenario.models.device is not None:
        return str(scenario.models.device)
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


async def _move(
    subject: str,
    player: Any,
    condition: EvalCondition,
    index: int,
    trial: int,
    role: str,
    seed: int,
    principle: int | None,
) -> dict[str, Any]:
    from sandbox.llm.contracts import CallInfo
    from sandbox.rules.ultimatum_episode import decision_constraint, proposal_constraint

    stake, offer = _stake(seed, index, trial, condition)
    episode = f"eval-{subject}-{condition.name}-t{trial:03d}"
    call = CallInfo(role=subject, agent=player.agent_id, run=0, episode=episode, step=role)
    row: dict[str, Any] = {
        "subject": subject,
        "condition": condition.name,
        "trial": trial,
        "role": role,
        "amount": stake.amount,
        "currency": stake.currency,
        "agent": player.agent_id,
        "principle": principle,
        "offer_to_responder": None,
        "offered_share": None,
        "decision": None,
    }
    if role == "proposer":
        answer = await player.propose(
            stake,
            seed=_seed(seed, index, trial, 0),
            call=call,
            constraint=proposal_constraint(stake, remark=player.remarks),
        )
        try:
            split = parse_proposal(answer, stake)
            row.update(legal=True, offered_share=split.responder / stake.amount)
        except ParseError:
            row.update(legal=False)
    else:
        row["offer_to_responder"] = offer.responder / stake.amount
        answer = await player.respond(
            stake,
            proposal_sentence(stake, offer),
            offer,
            seed=_seed(seed, index, trial, 1),
            call=call,
            constraint=decision_constraint(remark=player.remarks),
        )
        try:
            row.update(legal=True, decision=parse_decision(answer))
        except ParseError:
            row.update(legal=False)
    return {**row, "answer": answer}


def distillation_table(moves: pd.DataFrame) -> pd.DataFrame:
    """Per subject and condition: offered share and acceptance (mean, 95% CI), illegal rate and counts."""
    rows = []
    for (subject, condition), frame in moves.groupby(["subject", "condition"], sort=False):
        shares = frame.loc[(frame["role"] == "proposer") & frame["legal"].astype(bool), "offered_share"].astype(float)
        decided = frame.loc[(frame["role"] == "responder") & frame["legal"].astype(bool), "decision"]
        share, share_low, share_high, n_share = mean_ci(shares.tolist(), bounds=(0.0, 1.0))
        accept, accept_low, accept_high, n_accept = mean_ci(
            (decided == "accept").astype(float).tolist(), bounds=(0.0, 1.0)
        )
        rows.append(
            {
                "subject": subject,
                "condition": condition,
                "offered_share": share,
                "offered_share_ci_low": share_low,
                "offered_share_ci_high": share_high,
                "proposals": n_share,
                "acceptance": accept,
                "acceptance_ci_low": accept_low,
                "acceptance_ci_high": accept_high,
                "answers": n_accept,
                "illegal": float((~frame["legal"].astype(bool)).mean()),
                "moves": len(frame),
            }
        )
    return pd.DataFrame(rows)


def plot_distillation(table: pd.DataFrame, title: str = "") -> Figure:
    """Offered share and acceptance per condition, one bar per subject, with 95% CIs."""
    fig = Figure(figsize=(10, 4))
    axes = fig.subplots(1, 2, sharey=True)
    names = list(dict.fromkeys(table["condition"]))
    subjects = [s for s in SUBJECTS if s in set(table["subject"])]
    width = 0.8 / max(1, len(subjects))
    for ax, metric, label in (
        (axes[0], "offered_share", "offered share (proposer)"),
        (axes[1], "acceptance", "acceptance (responder)"),
    ):
        for k, subject in enumerate(subjects):
            rows = table[table["subject"] == subject].set_index("condition").reindex(names)
            mean = rows[metric].astype(float).to_numpy()
            low = np.nan_to_num(mean - rows[f"{metric}_ci_low"].astype(float).to_numpy())
            high = np.nan_to_num(rows[f"{metric}_ci_high"].astype(float).to_numpy() - mean)
            ax.bar(
                np.arange(len(names)) + (k - (len(subjects) - 1) / 2) * width,
                np.nan_to_num(mean),
                width,
                yerr=[np.clip(low, 0, None), np.clip(high, 0, None)],
                capsize=2,
                label=subject,
            )
        ax.set_xticks(np.arange(len(names)), names, fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_title(label, fontsize=10)
    axes[0].set_ylabel("mean (95% CI)")
    axes[1].legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def evaluate_distill(
    path: str | Path, *, trials: int | None = None, models: Mapping[str, BaseChatModel] | None = None, hooks: Any = None
) -> pd.DataFrame:
    """Play the evaluation conditions with the four subjects; write the tables and the plot; return `distillation.csv`.

    Args:
        path: A finished distillation run directory (with `adapter/`).
        trials: Proposals (and answers) per condition and subject, instead of `distill.trials`.
        models: Chat models per subject (`users`, `assistant`, `student`, `base`) instead of the specs.
        hooks: Progress callbacks (`on_start(total, done)`, `on_episode(row)`).
    """
    from sandbox.base.sync import run_sync

    return run_sync(aevaluate_distill(path, trials=trials, models=models, hooks=hooks))


@holding
async def aevaluate_distill(
    path: str | Path, *, trials: int | None = None, models: Mapping[str, BaseChatModel] | None = None, hooks: Any = None
) -> pd.DataFrame:
    """`evaluate_distill`, in a running event loop."""
    from agents.assistant import PolicyFollowingAssistant
    from agents.student import PolicylessAssistant
    from agents.user import NormFollowingUser
    from sandbox.core import run_dir as layout
    from sandbox.core.scenario import Sampling
    from sandbox.distill.layout import ADAPTER, PRINCIPLES, STUDENT_BASE, DistillPlan, load_distill_run_scenario
    from sandbox.distill.source import source_run
    from sandbox.llm.cache import ResponseCache
    from sandbox.llm.hf import HFChatModel
    from sandbox.llm.resolve import ModelStack
    from sandbox.llm.transcript import TranscriptWriter, finalize_transcript

    run_dir = RunDirectory.open(path)
    scenario = load_distill_run_scenario(run_dir)
    if run_dir.status().get("status") != "complete" or not (run_dir / ADAPTER).is_dir():
        raise UsageError(f"{run_dir.path} has not finished training; resume it first: sandbox resume {run_dir.path}")
    plan = DistillPlan.from_dict(read_json(run_dir / PRINCIPLES))
    trials = trials if trials is not None else scenario.distill.trials
    models = dict(models or {})
    source = None
    if plan.source:  # the source run as the plan resolved it (an absolute path), wherever this runs from
        block = scenario.distill.model_copy(
            update={"source": scenario.distill.source.model_copy(update={"run": plan.source})}
        )
        source = source_run(block, str(run_dir / layout.SCENARIO))
    form = scenario.form()

    cache = ResponseCache(run_dir / layout.CACHE)
    transcript = TranscriptWriter(run_dir / TRANSCRIPT)
    stack = ModelStack(cache=cache, sinks=[transcript], concurrency=scenario.concurrency)
    device = _device(scenario)
    base_spec = (
        f"hf:{(run_dir / STUDENT_BASE).resolve()}" if (run_dir / STUDENT_BASE).is_dir() else scenario.models.student
    )
    ppo = scenario.training.ppo_config(seed=scenario.seed)
    student_sampling = {"temperature": ppo.temperature, "max_tokens": ppo.max_new_tokens}

    def role(name: str, spec: str, sampling: Mapping[str, Any], given: BaseChatModel | None = None) -> BaseChatModel:
        return stack.for_role(name, spec, sampling, given=models.get(name) or given)

    # The student and the base, built and loaded here one after the other (transformers' loading is not thread-safe).
    local = {
        "student": HFChatModel(path="", base=base_spec, adapter=str(run_dir / ADAPTER), device=device),
        "base": HFChatModel(path="", base=base_spec, device=device),
    }
    for name, backend in local.items():
        if name not in models:
            backend._load()
    players: dict[str, list[Any]] = {
        name: [PolicylessAssistant(role(name, name, student_sampling, backend), form=form)]
        for name, backend in local.items()
    }
    src_models = source.scenario.models if source is not None else None
    assistant_spec = scenario.models.assistant or (src_models.assistant.spec if src_models else scenario.models.judge)
    assistant_sampling = (src_models.assistant.sampling if src_models else Sampling()).model_dump()
    assistant_model = role("assistant", assistant_spec, assistant_sampling)
    from sandbox.distill.layout import act_player

    player = act_player(plan)  # as the source run's assistant played: its rules, reading and responder
    players["assistant"] = [
        PolicyFollowingAssistant(policy=p.text, model=assistant_model, **player) for p in plan.principles
    ]
    profiles = _users(plan, source, scenario.seed)
    if profiles:
        user_spec = scenario.models.user or (src_models.user.spec if src_models else scenario.models.judge)
        user_sampling = (src_models.user.sampling if src_models else Sampling()).model_dump()
        user_model = role("users", user_spec, user_sampling)
        players["users"] = [NormFollowingUser(profile, user_model, player["rules"]) for profile in profiles]

    names = conditions(scenario, plan)
    jobs = [
        (subject, index, condition, trial, move)
        for subject in SUBJECTS
        if subject in players
        for index, condition in enumerate(names)
        for trial in range(trials)
        for move in ("proposer", "responder")
    ]

    async def one(job: tuple[Any, ...]) -> dict[str, Any]:
        subject, index, condition, trial, move = job
        pool = players[subject]
        pick = int(generator(scenario.seed, _EVAL, index, trial, 2).integers(len(pool))) if len(pool) > 1 else 0
        principle = pick if subject == "assistant" else None
        return await _move(subject, pool[pick], condition, index, trial, move, scenario.seed, principle)

    on_start = getattr(hooks, "on_start", None)
    try:
        rows = await gather_jobs(
            jobs, one, on_start=on_start and (lambda n: on_start(n, 0)), on_done=getattr(hooks, "on_episode", None)
        )
    finally:
        transcript.close()
        cache.close()
        finalize_transcript(run_dir / TRANSCRIPT)
    moves = pd.DataFrame(rows, columns=COLUMNS)
    table = distillation_table(moves)
    atomic_write_text(run_dir / EVALUATION, moves.to_csv(index=False))
    plot_distillation(table, f"{scenario.name}: without the policy").savefig(run_dir / PLOT, dpi=120)
    summary_path = run_dir / "summary.json"
    summary = read_json(summary_path) if summary_path.is_file() else {"scenario": scenario.name}
    summary["evaluation"] = {
        "trials": trials,
        "conditions": {
            c.name: {"amounts": [min(c.amounts), max(c.amounts)], "currencies": list(c.currencies)} for c in names
        },
        "models": {
            "assistant": assistant_spec,
            "users": user_spec if profiles else None,
            "student": f"{base_spec}+adapter:{(run_dir / ADAPTER).resolve()}",
            "base": base_spec,
        },
        "table": json.loads(table.to_json(orient="records")),
    }
    write_summary(run_dir, summary, kind="distill")
    atomic_write_text(run_dir / RESULTS, table.to_csv(index=False))  # last: its presence marks the evaluation done
    return table
