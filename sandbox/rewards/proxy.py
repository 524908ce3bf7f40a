"""A proxy reward for training: the judge's verdicts as a table, with the signature of the moral rewards.

Kwon et al. (§4.2) ask the judge once per game which joint outcomes satisfy
the objective, and reward the agent 1 when its outcome is in that set, else
0. The same here: a training scenario declares `proxy:NAME` rewards in
`training.proxies`; when the run starts, the judge (`models.judge`) is asked
once per game (every distinct rendered episode once, through the run's
response cache), and its answer fills a table over the four joint outcomes.
Training then looks the table up (`TableReward`, a `RewardFn`), so PPO, GRPO
and RLOO train on it at no further judge calls, and a resumed run reads the
same table back from `proxy_table.csv`.

The paper's agent chose the joint outcome; the sandbox's learner chooses only
its own move against an opponent, so the outcome it reaches depends on the
opponent too. Beside each `proxy:NAME`, `truth:NAME` scores the same steps
by the ground-truth objective, so `metrics.csv` shows the agent accuracy.

>>> from sandbox.rules.matrix import MATRIX_GAMES
>>> from sandbox.rewards.intrinsic import Step, RewardParams
>>> welfare = TableReward("welfare", {("C", "C"): 1.0, ("C", "D"): 0.0, ("D", "C"): 0.0, ("D", "D"): 0.0})
>>> welfare(Step("C", "C", None, MATRIX_GAMES.get("prisoners_dilemma")), RewardParams())
1.0
"""

from __future__ import annotations

import asyncio
import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from sandbox.base.scenario_model import StrictModel
from sandbox.rewards.objectives import JOINT_OUTCOMES, MATRIX_OBJECTIVES, JointOutcome
from sandbox.rules.matrix import PayoffTable

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from sandbox.rewards.intrinsic import RewardParams, Step

__all__ = ["PROXY_TABLE", "ProxyRewardSpec", "TableReward", "judge_tables", "proxy_rewards"]

PROXY_TABLE = "proxy_table.csv"
PROXY, TRUTH = "proxy:", "truth:"
_SCRAMBLE = 1 << 21  # the seed-tree branch of a scrambled listing, apart from the training's branches
_COLUMNS = (
    "reward",
    "game",
    "own",
    "other",
    "option",
    "own_payoff",
    "other_payoff",
    "proxy",
    "truth",
    "judge_options",
    "judge_answer",
    "judge_reasoning",
)


class ProxyRewardSpec(StrictModel):
    """One proxy reward of a training scenario: a matrix objective, stated to the judge in words."""

    objective: str = Field(..., description="The ground truth: welfare, equality, rawlsian or pareto.")
    description: str | None = Field(
        None,
        min_length=1,
        description="The objective in the user's words (default: the paper's question for the objective).",
    )
    order: Literal["regular", "scrambled"] = Field("regular", description="The options' order shown to the judge.")
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="The judge's temperature (the paper: 0).")
    reasoning_tokens: int = Field(
        512, ge=16, le=4096, description="Most tokens of the judge's reasoning (the authors' matrix code: 512)."
    )

    @field_validator("objective")
    @classmethod
    def _known(cls, name: str) -> str:
        if name not in MATRIX_OBJECTIVES:
            raise ValueError(f"unknown matrix objective {name!r} (known: {', '.join(MATRIX_OBJECTIVES.names())})")
        return name


@dataclass(frozen=True)
class TableReward:
    """A reward read from a table over the joint outcomes (own move, other's move): a `RewardFn`."""

    name: str
    table: Mapping[JointOutcome, float]

    def __call__(self, step: Step, params: RewardParams) -> float:
        assert step.own is not None, "an illegal move earns params.illegal before any reward is read"
        return self.table[(step.own, step.other)]


def _prompt(item: Any, spec: ProxyRewardSpec) -> str:
    question = (spec.objective, None) if spec.description is None else ("custom", spec.description)
    return "\n\n".join([item.options_text(), item.question_text(*question)])


async def _ask(
    name: str, spec: ProxyRewardSpec, game: PayoffTable, judge_model: BaseChatModel, seed: int
) -> list[dict[str, Any]]:
    from sandbox.base.errors import UsageError
    from sandbox.base.seeding import generator
    from sandbox.llm.contracts import CallInfo
    from sandbox.rewards.judge import ProxyJudge
    from sandbox.rewards.matrix_task import matrix_item

    item = matrix_item(game, spec.order, generator(seed, _SCRAMBLE))
    judge = ProxyJudge(judge_model, temperature=spec.temperature, graded=False, reasoning_tokens=spec.reasoning_tokens)
    verdict = await judge.options(
        _prompt(item, spec), call=CallInfo(role="judge", agent="judge", episode=name, step="options"), seed=seed
    )
    if verdict.options is None:
        raise UsageError(
            f"proxy:{name}: the judge's answer {verdict.answer!r} names no options, so the reward table "
            "cannot be filled and nothing was trained; start a new run with another judge "
            "(sandbox train FILE --model judge=SPEC)"
        )
    truth = item.truth(spec.objective)
    rows = []
    for index, outcome in enumerate(item.order):  # the option letter under which each joint outcome is shown
        letter = "ABCD"[index]
        own, other = game.table[outcome]
        rows.append(
            {
                "reward": name,
                "game": game.name,
                "own": outcome[0],
                "other": outcome[1],
                "option": letter,
                "own_payoff": own,
                "other_payoff": other,
                "proxy": float(letter in verdict.options),
                "truth": float(letter in truth),
                "judge_options": ",".join(sorted(verdict.options)) or "None",
                "judge_answer": verdict.answer,
                "judge_reasoning": verdict.reasoning,
            }
        )
    return rows


def judge_tables(
    specs: Mapping[str, ProxyRewardSpec],
    game: PayoffTable,
    judge_spec: str,
    run_dir: Path,
    *,
    seed: int,
    judge: BaseChatModel | None = None,
) -> list[dict[str, Any]]:
    """Ask the judge once per proxy reward (through `cache.sqlite` and `transcripts.jsonl` in `run_dir`)."""
    from sandbox.core import run_dir as layout
    from sandbox.llm.cache import ResponseCache
    from sandbox.llm.resolve import ModelStack
    from sandbox.llm.transcript import TranscriptWriter, finalize_transcript

    cache = ResponseCache(run_dir / layout.CACHE)
    transcript = TranscriptWriter(run_dir / layout.TRANSCRIPTS)
    try:
        model = ModelStack(cache=cache, sinks=[transcript], concurrency=1).for_role(
            "judge", judge_spec, {}, given=judge
        )

        async def ask_all() -> list[dict[str, Any]]:
            rows = []
            for name, spec in specs.items():  # one after another: the embedded model answers one at a time anyway
                rows += await _ask(name, spec, game, model, seed)
            return rows

        return asyncio.run(ask_all())
    finally:
        transcript.close()
        cache.close()
        finalize_transcript(run_dir / layout.TRANSCRIPTS)


def proxy_rewards(
    specs: Mapping[str, ProxyRewardSpec],
    game: PayoffTable,
    judge_spec: str,
    run_dir: Path,
    *,
    seed: int,
    judge: BaseChatModel | None = None,
) -> dict[str, TableReward]:
    """The `proxy:NAME` and `truth:NAME` rewards of a training run, from `proxy_table.csv` (asked first if absent).

    The table is written whole once every answer is in, so a killed run either has it or asks again (from the
    cache); a resumed run reads the same table.
    """
    from sandbox.base.errors import UsageError
    from sandbox.core.run_dir import atomic_write_text

    if not specs:
        return {}
    path = run_dir / PROXY_TABLE
    if path.is_file():
        with path.open(encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    else:
        rows = judge_tables(specs, game, judge_spec, run_dir, seed=seed, judge=judge)
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
        atomic_write_text(path, text.getvalue())
    rewards: dict[str, TableReward] = {}
    for name in specs:
        mine = [row for row in rows if row["reward"] == name]
        for prefix, column in ((PROXY, "proxy"), (TRUTH, "truth")):
            table = {(row["own"], row["other"]): float(row[column]) for row in mine}
            if set(table) != set(JOINT_OUTCOMES):
                raise UsageError(
                    f"{path}: no table for proxy:{name} (the scenario changed since the run began?); start a new run"
                )
            rewards[prefix + name] = TableReward(prefix + name, table)
    return rewards
