"""A distillation run on disk: the judged norm trained into an adapter, checkpointed, resumable, summarised.

Layout of the run directory (that of `sandbox train`, plus the judge's table):
    scenario.yaml       the resolved distillation scenario; resume reads it
    principles.json     the principle(s) read from the source, the true norm, the amounts held out
    run.json            status (running, interrupted, failed, complete), timings
    metrics.csv         one row per episode: rewards by kind, offered share, acceptance, illegal rate, KL, seconds
    judge_table.csv     one verdict per distinct (variant, principle, role, offer, decision), appended as asked
    cache.sqlite, transcripts.jsonl   the judge's calls
    checkpoint/         every `checkpoint_every` episodes (PPO; TRL keeps `trl/checkpoint-N`)
    adapter/            the trained LoRA adapter (PEFT format), at the end
    summary.json        final behaviour, the judge's accuracy against the true norm, the judge's cost, the evaluation
    training_shares.png the offered share and the rewards over episodes
    evaluation.csv, distillation.csv, distillation.png, evaluation_transcripts.jsonl
                        the evaluation without the policy (`sandbox.distill.evaluate`)

A killed run resumes from its last checkpoint; the judge's table is read back,
so no move is asked about twice, and each episode draws from its own node of
the seed tree, so the resumed run ends with the same metrics.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.base.files import read_json
from sandbox.core.kinds import GivenModels, Ledgers
from sandbox.core.run_dir import RunDirectory, atomic_write_text, default_out, hold, holding
from sandbox.distill.judge_table import JUDGE_TABLE, JudgeTable
from sandbox.distill.layout import (
    ADAPTER,
    METRICS,
    PRINCIPLES,
    STUDENT_BASE,
    DistillPlan,
    act_player,
    load_distill_run_scenario,
)
from sandbox.distill.planning import plan
from sandbox.distill.scenario import DistillScenario
from sandbox.training.hooks import TrainHooks
from sandbox.training.ultimatum_env import UltimatumEnvironment, tiny_vocabulary

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


__all__ = ["DistillHooks", "distill_scenario", "resume_distill"]

REWARD_KINDS = {
    "judge": "proxy:judge",
    "truth": "truth:norm",
    "no_principle": "proxy:no_principle",
    "flipped": "proxy:flipped",
}


DistillHooks = TrainHooks  # progress callbacks: `on_start(total, done)` once, `on_episode(row)` after each episode


def student_vocabulary(scenario: DistillScenario) -> tuple[str, ...]:
    """The tiny student's words: whole numbers up to the largest training amount (every move it can make), and its
    answer form's words."""
    return tiny_vocabulary(scenario.distill.amounts.max, scenario.form())


def load_student(scenario: DistillScenario, model: Any = None, tokenizer: Any = None) -> Any:
    """The student's base model (`models.student`), or `model`/`tokenizer` passed in."""
    from sandbox.llm.base_model import BaseModel, load_base_model

    if model is not None:
        return BaseModel(model, tokenizer, "<object>", str(next(model.parameters()).device))
    models = scenario.models
    return load_base_model(
        models.student, device=models.device, dtype=models.dtype, vocabulary=student_vocabulary(scenario)
    )


def judge_table(
    run_dir: RunDirectory,
    scenario: DistillScenario,
    plan_: DistillPlan,
    judge: BaseChatModel | None = None,
    ledgers: Ledgers = (),
) -> tuple[JudgeTable, Callable[[], None]]:
    """The run's judge table on the judge's model stack (the run's cache and transcript, and `ledgers`: budget
    ledgers every call counts in); and its closer."""
    from sandbox.core import run_dir as layout
    from sandbox.llm.cache import ResponseCache
    from sandbox.llm.resolve import ModelStack
    from sandbox.llm.transcript import TranscriptWriter, finalize_transcript
    from sandbox.rewards.judge import ProxyJudge

    cache = ResponseCache(run_dir / layout.CACHE)
    transcript = TranscriptWriter(run_dir / layout.TRANSCRIPTS)
    stack = ModelStack(cache=cache, sinks=[transcript], concurrency=scenario.concurrency, ledgers=list(ledgers))
    model = stack.for_role("judge", scenario.models.judge, {}, given=judge)
    block = scenario.distill
    proxy = ProxyJudge(model, temperature=block.judge_temperature, graded=block.scoring == "graded")
    actor = None  # act mode: the judge's model plays, sampled as a player
    if block.judge == "act":
        actor = stack.for_role(
            "judge", scenario.models.judge, {"temperature": block.judge_temperature, "max_tokens": 64}, given=judge
        )
    table = JudgeTable(
        run_dir / JUDGE_TABLE,
        [p.text for p in plan_.principles],
        proxy,
        resolution=block.resolution,
        currency=plan_.currencies[0],
        seed=scenario.seed,
        scoring=block.scoring,
        truth=plan_.truth,
        concurrency=scenario.concurrency,
        mode=block.judge,
        actor=actor,
        samples=block.act_samples,
        player=act_player(plan_),
    )

    def close() -> None:
        transcript.close()
        cache.close()
        finalize_transcript(run_dir / layout.TRANSCRIPTS)

    return table, close


def environment(scenario: DistillScenario, plan_: DistillPlan, table: JudgeTable) -> UltimatumEnvironment:
    """The training environment: the ultimatum game on the training amounts, rewarded by the judge's table."""
    from sandbox.distill.truth import truth_reward
    from sandbox.training.schedule import RewardSchedule

    block, training = scenario.distill, scenario.training
    rewards: dict[str, Any] = {"proxy:judge": lambda outcome: table.reward(outcome, "principle")}
    variants: list[Any] = ["principle"]
    if block.reward == "flipped":
        rewards["proxy:flipped"] = lambda outcome: 1.0 - table.reward(outcome, "principle")
    if block.reward == "no_principle":
        variants.append("no_principle")
        rewards["proxy:no_principle"] = lambda outcome: table.reward(outcome, "no_principle")
    if plan_.truth is not None:
        norm = plan_.truth
        rewards["truth:norm"] = lambda outcome: truth_reward(norm, outcome)
    return UltimatumEnvironment(
        amounts=tuple(plan_.train_amounts),
        currencies=tuple(plan_.currencies),
        responder_share=block.responder_share,
        form=scenario.form(),
        rewards=rewards,
        schedule=RewardSchedule(((0, REWARD_KINDS[block.reward]),)),
        illegal=training.illegal,
        parallel=training.parallel,
        rounds=training.rounds,
        seed=scenario.seed,
        prefetch_rewards=lambda outcomes: table.prefetch(outcomes, variants),
    )


def distill_scenario(
    scenario: DistillScenario,
    out: Path | str | None = None,
    *,
    source: str = "<scenario>",
    hooks: DistillHooks | None = None,
    model: Any = None,
    tokenizer: Any = None,
    judge: BaseChatModel | None = None,
    evaluate: bool = True,
    evaluation_models: Any = None,
) -> Path:
    """Distil the scenario's principle into a new run directory and return its path.

    Args:
        scenario: The distillation scenario.
        out: The run directory (default `runs/<name>-<time>`); it must not hold files.
        source: The scenario file's name, for error messages.
        hooks: Progress callbacks.
        model: A transformers causal LM to train instead of `models.student` (with `tokenizer`).
        tokenizer: Its tokenizer.
        judge: A chat model to judge with instead of `models.judge`.
        evaluate: Play the evaluation without the policy after training (`sandbox.distill.evaluate`).
        evaluation_models: Chat models per evaluation subject (users, assistant, student, base) instead of the specs.
    """
    from sandbox.core.kinds import get as kind_named

    kind_named("distill").require(scenario)  # the extras it needs (a smollm2 student, an hf: judge), first
    path = Path(out) if out is not None else default_out(scenario)
    RunDirectory.check_new(path)
    plan_ = plan(scenario, source)  # a bad source writes nothing
    base = load_student(scenario, model, tokenizer)  # nor does a missing model
    with hold(path):
        run_dir = RunDirectory.create(path, scenario)
        _prepare(run_dir, scenario, plan_, base, keep_base=model is not None)
        _run(run_dir, scenario, plan_, base, hooks or DistillHooks(), resume=False, judge=judge)
        return _evaluate(run_dir, evaluate, evaluation_models)


def _prepare(
    run_dir: RunDirectory, scenario: DistillScenario, plan_: DistillPlan, base: Any, *, keep_base: bool
) -> None:
    """What a run writes before it trains, each part where it is missing (a run killed before it wrote them all
    resumes with them): the plan, the table labelled before (its verdicts are read back, not asked), and a base
    built in-process or passed in (`keep_base`), kept beside the adapter so that `assistant_spec` loads both."""
    import shutil

    if not (run_dir / PRINCIPLES).is_file():
        atomic_write_text(run_dir / PRINCIPLES, json.dumps(plan_.to_dict(), indent=2))
    if scenario.distill.judge_table is not None and not (run_dir / JUDGE_TABLE).is_file():
        atomic_write_text(run_dir / JUDGE_TABLE, Path(scenario.distill.judge_table).read_text(encoding="utf-8"))
    if (scenario.models.student.partition(":")[0] == "tiny" or keep_base) and not (run_dir / STUDENT_BASE).is_dir():
        partial = run_dir / f"{STUDENT_BASE}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        base.model.save_pretrained(partial)
        base.tokenizer.save_pretrained(partial)
        partial.rename(run_dir / STUDENT_BASE)


@holding
def resume_distill(
    path: Path | str,
    *,
    hooks: DistillHooks | None = None,
    model: Any = None,
    tokenizer: Any = None,
    judge: BaseChatModel | None = None,
    evaluate: bool = True,
    evaluation_models: Any = None,
) -> Path:
    """Continue an interrupted distillation from its last checkpoint (the judge's table is read back); a run
    killed during its evaluation plays it again from the cache."""
    run_dir = RunDirectory.open(path)
    scenario = load_distill_run_scenario(run_dir)
    if run_dir.status().get("status") != "complete":
        # A run killed before it wrote its plan plans again, as it did (the plan is a function of the scenario).
        plan_ = (
            DistillPlan.from_dict(read_json(run_dir / PRINCIPLES))
            if (run_dir / PRINCIPLES).is_file()
            else plan(scenario, str(run_dir / "scenario.yaml"))
        )
        base = load_student(scenario, model, tokenizer)
        _prepare(run_dir, scenario, plan_, base, keep_base=model is not None)
        _run(run_dir, scenario, plan_, base, hooks or DistillHooks(), resume=True, judge=judge)
    return _evaluate(run_dir, evaluate, evaluation_models)


def _evaluate(run_dir: RunDirectory, evaluate: bool, models: GivenModels) -> Path:
    if evaluate:
        from sandbox.distill.evaluate import RESULTS, evaluate_distill

        if not (run_dir / RESULTS).is_file():
            evaluate_distill(run_dir.path, models=models)
    return run_dir.path


def _run(
    run_dir: RunDirectory,
    scenario: DistillScenario,
    plan_: DistillPlan,
    base: Any,
    hooks: DistillHooks,
    *,
    resume: bool,
    judge: BaseChatModel | None,
) -> Path:
    table, close = judge_table(run_dir, scenario, plan_, judge)
    try:
        env = environment(scenario, plan_, table)
        _train(run_dir, scenario, env, base, hooks, resume=resume)
    finally:
        close()
    from sandbox.distill.summary import finish

    finish(run_dir, scenario, plan_, table)
    return run_dir.path


def _train(
    run_dir: RunDirectory,
    scenario: DistillScenario,
    env: UltimatumEnvironment,
    base: Any,
    hooks: DistillHooks,
    *,
    resume: bool,
) -> None:
    """Train the student on `env`: the sandbox's PPO (its checkpoints and resume point), else TRL's trainer."""
    if scenario.training.algorithm != "ppo":
        from sandbox.training.trl_trainers import train_with_trl
        from sandbox.viewer.tracking import report_to

        train_with_trl(run_dir, scenario, base, hooks, resume=resume, setup=env, report_to=report_to(run_dir.path))
        return
    from sandbox.training.ppo import PPOTrainer
    from sandbox.training.ppo_run import resume_point, train_ppo_run

    training = scenario.training
    trainer = PPOTrainer(base.model, base.tokenizer, training.ppo_config(seed=scenario.seed))
    start = resume_point(run_dir, trainer, run_dir / METRICS) if resume else 0
    train_ppo_run(
        run_dir,
        trainer,
        env,
        episodes=training.episodes,
        start=start,
        checkpoint_every=training.checkpoint_every,
        metrics=run_dir / METRICS,
        hooks=hooks,
    )
    trainer.model.save_pretrained(run_dir / ADAPTER)
