"""Generalisation of learned policies: `sandbox evaluate RUN_DIR`.

Each run's final policy is replayed by a fresh assistant (no memory, as in
training) on new conditions: another currency (grams of medicine), other
amounts (2.22 billion), optionally asked for the reason of its proposal
(Table A-1 of the SCAI paper). As the authors tested (Fig. 3b), a prior can
be stated at test time, before the principle (`evaluation.prior`), with what
the principle was learned on and a request to weigh its relevance
(`evaluation.learned_on`); training never sees either. A user of the run's own population answers
each proposal. Results go to `evaluation.csv`, `generalisation.png` and the
`evaluation` section of `summary.json`; the calls go through the run's cache
and transcript, so evaluating twice gives the same table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from langchain_core.language_models import BaseChatModel
from pydantic import ValidationError

from agents.assistant import PolicyFollowingAssistant
from agents.user import NormFollowingUser
from sandbox.base.errors import ScenarioError, UsageError
from sandbox.base.files import read_csv, read_json
from sandbox.base.jobs import gather_jobs
from sandbox.base.scenario_model import AmountRange
from sandbox.base.seeding import Branch, generator, seed_node
from sandbox.base.stats import mean_ci
from sandbox.core import run_dir as layout
from sandbox.core.run_dir import RunDirectory, atomic_write_text, holding
from sandbox.core.scenario_files import load_run_scenario, scenario_problems
from sandbox.core.summary import write_summary
from sandbox.llm.accounting import TokenLedger
from sandbox.llm.cache import ResponseCache
from sandbox.llm.contracts import CallInfo
from sandbox.llm.transcript import TranscriptWriter, finalize_transcript
from sandbox.rules.ultimatum import Stake
from sandbox.rules.ultimatum_episode import call_seed, play_ultimatum
from sandbox.scai.assistant_block import EvaluationCondition
from sandbox.scai.scenario import Scenario
from societies.population import build_population

EVALUATION_COLUMNS = [
    "run",
    "condition",
    "trial",
    "policy_version",
    "policy",
    "currency",
    "amount",
    "responder",
    "proposal",
    "proposal_legal",
    "offered_share",
    "decision",
    "proposer_payoff",
    "responder_payoff",
    "reason",
    "prior",
]


def learned_on(scenario: Scenario) -> str:
    """What the policies were learned on, in the words of the test prompt: "dollars and apples, with amounts from 10 to 100"."""
    names = scenario.game.currencies
    currencies = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{currencies}, with amounts from {scenario.game.amount.min} to {scenario.game.amount.max}"


def final_policies(run_dir: RunDirectory) -> dict[int, dict[str, Any]]:
    """Each run's last policy record, from `policies.jsonl`."""
    path = run_dir / layout.POLICIES
    if not path.is_file():
        raise UsageError(f"{run_dir.path} has no {layout.POLICIES}: evaluate needs a finished SCAI run")
    final: dict[int, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["run"] not in final or record["version"] > final[record["run"]]["version"]:
            final[record["run"]] = record
    return final


def _stake(scenario: Scenario, condition: EvaluationCondition, rng: Any) -> Stake:
    amount = condition.amount if condition.amount is not None else scenario.game.amount
    if isinstance(amount, AmountRange):
        amount = int(rng.integers(amount.min, amount.max, endpoint=True))
    currencies = scenario.game.currencies
    currency = condition.currency or currencies[int(rng.integers(len(currencies)))]
    return Stake(int(amount), currency)


async def _trial(
    scenario: Scenario,
    run: int,
    index: int,
    condition: EvaluationCondition,
    trial: int,
    policy: dict[str, Any],
    assistant_model: BaseChatModel,
    users: list[NormFollowingUser],
    prior: str | None = None,
    trained_on: str | None = None,
) -> dict[str, Any]:
    rng = generator(scenario.seed, run, Branch.EVALUATION, index, trial)
    stake = _stake(scenario, condition, rng)
    responder = users[int(rng.integers(len(users)))]
    assistant = PolicyFollowingAssistant(
        policy=policy["policy"],
        model=assistant_model,
        rules=scenario.game.rules,
        prior=prior,
        learned_on=trained_on,
        reading=scenario.assistant.reading,
        responder=scenario.assistant.responder,
    )
    seed = seed_node(scenario.seed, run, Branch.EVALUATION, index, trial)
    episode = f"r{run}-eval-{condition.name}-t{trial:03d}"
    record = await play_ultimatum(
        assistant,
        responder,
        stake,
        seed=seed,
        max_reasks=scenario.game.max_reasks,
        info={"run": run, "epoch": None, "episode": episode},
    )
    reason = None
    if condition.reason and record["proposal_legal"]:
        call = CallInfo(role="assistant", agent=assistant.agent_id, run=run, episode=episode, step="reason")
        reason = await assistant.reason(stake, record["proposal"], seed=call_seed(seed, 2, 0), call=call)
    return {
        **{k: record.get(k) for k in EVALUATION_COLUMNS},
        "run": run,
        "condition": condition.name,
        "trial": trial,
        "policy_version": policy["version"],
        "policy": policy["policy"],
        "responder": responder.agent_id,
        "reason": reason,
        "prior": prior,
    }


def conditions_from_options(
    currencies: Sequence[str], amounts: Sequence[int], reason: bool
) -> list[EvaluationCondition] | None:
    """Conditions from the command line: in-distribution, then one per currency and per amount.

    None (use the scenario's conditions) when no currency or amount is given
    and no reason is asked for.
    """
    if not currencies and not amounts and not reason:
        return None
    try:
        conditions = [EvaluationCondition(name="in-distribution", reason=reason)]
        conditions += [EvaluationCondition(name=_label(c), currency=c, reason=reason) for c in currencies]
        conditions += [EvaluationCondition(name=f"amount-{a}", amount=a, reason=reason) for a in amounts]
    except ValidationError as error:
        raise ScenarioError("<command line>", scenario_problems(error)) from None
    return conditions


def _label(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "currency"


def evaluation_summary(table: pd.DataFrame, training: pd.DataFrame | None = None) -> dict[str, Any]:
    """Per condition: the assistant's offered share and acceptance, mean and 95% CI across runs."""
    out: dict[str, Any] = {}
    for condition, frame in table.groupby("condition", sort=False):
        legal = frame[frame["proposal_legal"].astype(bool)]
        shares = legal.groupby("run")["offered_share"].mean().tolist()
        mean, low, high, n = mean_ci(shares, bounds=(0.0, 1.0))
        decided = frame["decision"].dropna()
        out[str(condition)] = {
            "offered_share": {"mean": mean, "ci_low": low, "ci_high": high, "n": n},
            "acceptance_rate": float((decided == "accept").mean()) if len(decided) else None,
            "illegal_proposals": int((~frame["proposal_legal"].astype(bool)).sum()),
            "trials": len(frame),
        }
    if training is not None and not training.empty:
        last = training[(training["group"] == "assistant") & (training["epoch"] == training["epoch"].max())]
        mean, low, high, n = mean_ci(last["offered_share"].tolist(), bounds=(0.0, 1.0))
        out["training, last epoch"] = {"offered_share": {"mean": mean, "ci_low": low, "ci_high": high, "n": n}}
    return json.loads(json.dumps(out, default=float).replace("NaN", "null"))


@holding
async def aevaluate(
    path: str | Path,
    *,
    conditions: Sequence[EvaluationCondition] | None = None,
    trials: int | None = None,
    models: Mapping[str, BaseChatModel] | None = None,
    hooks: Any = None,
    prior: str | None = None,
    state_learned_on: bool | None = None,
) -> pd.DataFrame:
    """Replay each run's final policy on the evaluation conditions; write and return the table.

    Args:
        path: A finished SCAI run directory.
        conditions: Conditions to use instead of the scenario's `assistant.evaluation.conditions`.
        trials: Proposals per condition and run, instead of the scenario's.
        models: Model objects per role (`assistant`, `user`), instead of the scenario's specs.
        hooks: Progress callbacks (`on_start`, `on_episode`), as for runs.
        prior: A prior to state at test time, instead of the scenario's `evaluation.prior` ("": none).
        state_learned_on: Whether to state what the policy was learned on, instead of `evaluation.learned_on`.
    """
    run_dir = RunDirectory.open(path)
    scenario = load_run_scenario(run_dir.path)
    if scenario.assistant is None:
        raise UsageError(f"{run_dir.path} is not a SCAI run (its scenario has no assistant)")
    if scenario.assistant.prompt == "none":
        raise UsageError(
            f"{run_dir.path}: its assistant plays with no policy (assistant.prompt: none), so there is "
            "no final policy to replay; a distillation's evaluation is `sandbox evaluate DISTILL_DIR`"
        )
    if run_dir.status().get("status") != "complete":
        raise UsageError(f"{run_dir.path} is not finished; resume it first: sandbox resume {run_dir.path}")
    conditions = list(conditions or scenario.assistant.evaluation.conditions)
    trials = trials or scenario.assistant.evaluation.trials
    prior = scenario.assistant.evaluation.prior if prior is None else (prior or None)  # "" clears the scenario's
    stated = scenario.assistant.evaluation.learned_on if state_learned_on is None else state_learned_on
    trained_on = learned_on(scenario) if stated else None
    policies = final_policies(run_dir)
    models = dict(models or {})
    from sandbox.llm.resolve import model_stack
    from sandbox.society.runner import preflight

    preflight(scenario, models)
    cache = ResponseCache(run_dir / layout.CACHE)
    transcript = TranscriptWriter(run_dir / layout.TRANSCRIPTS)
    stack = model_stack(scenario, cache, [transcript])
    role = {
        name: stack.for_role(
            name,
            getattr(scenario.models, name).spec,
            getattr(scenario.models, name).sampling.model_dump(),
            given=models.get(name),
        )
        for name in ("user", "assistant")
    }
    jobs = []
    for run, policy in sorted(policies.items()):
        population = build_population(scenario.society, generator(scenario.seed, run, Branch.POPULATION))
        users = [NormFollowingUser(profile, role["user"], scenario.game.rules) for profile in population]
        for index, condition in enumerate(conditions):
            jobs += [(run, index, condition, trial, policy, users) for trial in range(trials)]

    async def one(job: tuple[Any, ...]) -> dict[str, Any]:
        run, index, condition, trial, policy, users = job
        return await _trial(scenario, run, index, condition, trial, policy, role["assistant"], users, prior, trained_on)

    on_start = getattr(hooks, "on_start", None)
    try:
        rows = await gather_jobs(
            jobs, one, on_start=on_start and (lambda n: on_start(n, 0, n)), on_done=getattr(hooks, "on_episode", None)
        )
    finally:
        transcript.close()
        cache.close()
    table = pd.DataFrame(rows, columns=EVALUATION_COLUMNS)
    _write(run_dir, table, scenario.name)
    return table


def _write(run_dir: RunDirectory, table: pd.DataFrame, title: str) -> None:
    from sandbox.scai.plots import plot_generalisation

    training = read_csv(run_dir / layout.EPOCHS) if (run_dir / layout.EPOCHS).is_file() else None
    summary = read_json(run_dir / layout.SUMMARY)
    summary["evaluation"] = evaluation_summary(table, training)
    summary["llm_usage"] = TokenLedger.from_transcript(finalize_transcript(run_dir / layout.TRANSCRIPTS)).totals()
    atomic_write_text(run_dir / layout.EVALUATION, table.to_csv(index=False))
    write_summary(run_dir, summary, kind="society")
    plot_generalisation(summary["evaluation"], title).savefig(run_dir / "generalisation.png", dpi=120)
