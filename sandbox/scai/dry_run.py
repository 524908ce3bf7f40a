"""`sandbox run --dry-run FILE`: how many LLM calls a run will make, and about how many tokens, without a model.

The run is played for real (the graph, the agents, the prompts) into a
temporary directory, with a stand-in model that answers every call at once
with a legal answer: a proposal that splits the stake, "yes", a principle.
So the counts are those of a run in which every answer is legal the first
time (a real model's illegal answers are asked again, and add calls), and
the prompts are the real prompts. The run's response cache plays too, so the
calls it would answer (the same prompt at temperature 0) are counted apart. Prompt tokens are estimated from their
length (`CHARS_PER_TOKEN`); answer tokens are bounded by each role's
`max_tokens`. Nothing is kept: the stand-in's answers are never results.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from sandbox.core import run_dir as layout
from sandbox.core.dry_run import CHARS_PER_TOKEN
from sandbox.scai.scenario import Scenario

__all__ = ["dry_run", "dry_run_model"]


def _fallback(_: list[Any], kwargs: dict[str, Any]) -> str:
    """A legal answer where the constraint says what one is: its first choice, or its prefix and a few words."""
    constraint = kwargs.get("constraint")
    if constraint is not None and constraint.choices:
        return constraint.choices[0]
    prefix = getattr(constraint, "prefix", "") or ""
    if prefix.startswith("Critique"):
        return f"{prefix} none.\nPrinciple: Share everything equally with everyone."
    return f"{prefix} Share everything equally with everyone." if prefix else "yes"


_GUIDED_STAKE = re.compile(r"play the ultimatum game over (\d+) (.+?): you propose")


def _guided_propose(messages: list[Any], _: dict[str, Any]) -> str:
    """An even split in the instructed ultimatum game's proposal prompt (solver-guided members and their game)."""
    amount, currency = _GUIDED_STAKE.search(str(messages[-1].content)).groups()  # type: ignore[union-attr]
    half = int(amount) // 2
    return (
        f"For the {amount} {currency}, the proposer will get {half}, and the responder will get {int(amount) - half}."
    )


def dry_run_model() -> Any:
    """The stand-in: the benchmarks' scripted ultimatum and MetaLM rules, the instructed ultimatum game's proposal
    (guided members), then `_fallback` for any other prompt."""
    from sandbox.llm.scripted import scripted
    from sandbox.society.benchmarks import fake_scai_models

    rules = list(fake_scai_models(0.0)["user"].rules)
    return scripted([*rules, (_GUIDED_STAKE.pattern, _guided_propose), (r".", _fallback)])


def _max_tokens(scenario: Scenario, role: str) -> int:
    """The most answer tokens of one call of `role` (a guided game's role: its domain's message limit)."""
    if role.startswith("guided "):
        from sandbox.scai.scenario import guided_game

        game = guided_game(scenario)
        if role == "guided players":
            return min(game.dialogue.domain.max_tokens, game.models.players.sampling.max_tokens)
        return game.models.judge.sampling.max_tokens
    return int(getattr(scenario.models, role).sampling.max_tokens)


def dry_run(scenario: Scenario) -> pd.DataFrame:
    """Per role: calls, those the response cache answers, and for the rest (the calls that reach a model) the
    estimated prompt tokens and the most answer tokens (`max_tokens` each)."""
    from sandbox.llm.budget import Budget
    from sandbox.llm.transcript import read_transcript
    from sandbox.society.runner import arun

    model = dry_run_model()
    # no budget: the stand-in spends nothing, and a cap would cut the count short
    fast = scenario.model_copy(update={"concurrency": max(scenario.concurrency, 256), "budget": Budget()})
    with tempfile.TemporaryDirectory() as tmp:
        path = asyncio.run(arun(fast, out=Path(tmp) / "dry", models={role: model for role in scenario.roles()}))
        records = read_transcript(path / "transcripts.jsonl")
        guided = path / layout.GUIDED / layout.TRANSCRIPTS  # the guided members' game, solved inline first
        if guided.is_file():
            records += [{**r, "role": f"guided {r['role']}"} for r in read_transcript(guided)]
    rows = {}
    for record in records:
        role = record["role"]
        row = rows.setdefault(
            role, {"role": role, "calls": 0, "cache_hits": 0, "prompt_tokens": 0.0, "max_answer_tokens": 0}
        )
        row["calls"] += 1
        if record.get("cache_hit"):  # the run's response cache answers it (temperature 0): no model spends on it
            row["cache_hits"] += 1
            continue
        row["prompt_tokens"] += sum(len(m["content"]) for m in record["messages"]) / CHARS_PER_TOKEN
        row["max_answer_tokens"] += _max_tokens(scenario, role)
    table = pd.DataFrame(
        list(rows.values()), columns=["role", "calls", "cache_hits", "prompt_tokens", "max_answer_tokens"]
    )
    if any(role.startswith("guided ") for role in rows):  # the guided game's roles: their models, by name
        from sandbox.dialogue.scenario import estimate_messages
        from sandbox.scai.scenario import guided_game

        game = guided_game(scenario)
        # The stand-in answers every instruction and seed alike, so its tree merges states a real model's keeps
        # apart: count the most messages the tree can hold (and one judgment of each), at the stand-in's mean cost.
        most = estimate_messages(game.dialogue)
        for role, bound in (("guided players", most), ("guided judge", most if game.solver.steering else 0)):
            at = table.index[table["role"] == role]
            if len(at) and bound > table.loc[at[0], "calls"]:
                scale = bound / table.loc[at[0], "calls"]
                table.loc[at[0], ["calls", "prompt_tokens", "max_answer_tokens"]] = [
                    bound,
                    table.loc[at[0], "prompt_tokens"] * scale,
                    round(table.loc[at[0], "max_answer_tokens"] * scale),
                ]
        table["model"] = [
            getattr(game.models, r.removeprefix("guided ")).spec
            if r.startswith("guided ")
            else getattr(scenario.models, r).spec
            for r in table["role"]
        ]
    table["prompt_tokens"] = table["prompt_tokens"].round().astype(int)
    return table.sort_values("role").reset_index(drop=True)
