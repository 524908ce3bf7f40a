"""The norm as a reward: the judge asked whether a move follows the principle, once per distinct move.

The judge (`models.judge`, through the run's cache and transcript) reads the
game, the principle and the student's move in the society's own words, and
answers Yes or No (`prompts/distill/judge.j2`). A move is what the judge sees
of it: the role, the offered share rounded to the scenario's `resolution`
and shown as a split of 100 of the first training currency, and, for an
answer, the decision. So the game is finite (21 proposals at 0.05, twice 21
answers), and the table holds at most one verdict per (variant, principle,
role, offer, decision). A move is asked about the first time it is played;
every verdict is appended to `judge_table.csv` at once, and a resumed run
reads the table back, so no move is ever asked twice.

Variants: `principle` (the judge with the principle) and `no_principle` (the
same question with no principle: the control that shows what the judge
rewards by itself). The `flipped` control reads the principle's verdicts
reversed (1 - reward). With several principles (a run directory's policies),
a move's reward is the mean over them.
"""

from __future__ import annotations

import asyncio
import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import prompts
from sandbox.games.ultimatum import Split, Stake, proposal_sentence
from sandbox.moral.ultimatum_env import UltimatumOutcome, UltimatumState
from sandbox.seeding import seed_node

__all__ = ["JUDGE_TABLE", "JudgeTable", "JudgedMove", "Variant", "judged_move"]

JUDGE_TABLE = "judge_table.csv"
Variant = Literal["principle", "no_principle"]
_COLUMNS = ("variant", "principle", "role", "offered_share", "decision", "label", "p_yes", "mass", "source", "reward",
            "truth_label", "prompt", "answer")  # fmt: skip
_JUDGE_BRANCH = 1 << 22  # the seed-tree branch of judge calls


@dataclass(frozen=True)
class JudgedMove:
    """A move as the judge sees it: the role, the offer in percent of 100, and an answer's decision ('' for none)."""

    role: str
    offered: int
    decision: str = ""

    def offered_share(self) -> float:
        return self.offered / 100

    def outcome(self, currency: str) -> UltimatumOutcome:
        """The move played on a stake of 100 of `currency`: what the judge is shown and the truth labels."""
        split = Split(100 - self.offered, self.offered)
        if self.role == "proposer":
            return UltimatumOutcome(UltimatumState(Stake(100, currency), "proposer"), split)
        return UltimatumOutcome(UltimatumState(Stake(100, currency), "responder", split), self.decision)  # type: ignore[arg-type]


def judged_move(outcome: UltimatumOutcome, resolution: float) -> JudgedMove:
    """The judge's view of a legal move: its offered share rounded to `resolution`.

    >>> judged_move(UltimatumOutcome(UltimatumState(Stake(52, "apples"), "proposer"), Split(40, 12)), 0.05)
    JudgedMove(role='proposer', offered=25, decision='')
    """
    share = outcome.offered_share if outcome.offered_share is not None else outcome.state.offer.offered_share()  # type: ignore[union-attr]
    offered = int(round(round(share / resolution) * resolution * 100))
    return JudgedMove(outcome.state.role, min(100, max(0, offered)), outcome.decision or "")


@dataclass(frozen=True)
class _Key:
    variant: str
    principle: int  # -1: no principle
    move: JudgedMove


class JudgeTable:
    """The judge's verdicts by (variant, principle, move), backed by `judge_table.csv`.

    Args:
        path: The run's `judge_table.csv` (read back when it exists, appended to as verdicts come in).
        principles: The policies' texts.
        judge: The judge (a `sandbox.proxy.judge.ProxyJudge` on the run's wrapped judge model).
        resolution: The offered-share step the judge sees.
        currency: The currency of the judge's stake of 100.
        seed: The root of the run's seed tree (each verdict's call seed derives from its move).
        scoring: `graded` (P(yes) where known) or `binary` (the label).
        truth: The library norm, for the `truth_label` column; None when unknown.
        concurrency: Judge calls in flight at once.
        template: The judge's prompt (a template under `prompts/`).
    """

    def __init__(self, path: Path, principles: Sequence[str], judge: Any, *, resolution: float, currency: str,
                 seed: int, scoring: str = "graded", truth: str | None = None, concurrency: int = 4,
                 template: str = "distill/judge.j2") -> None:  # fmt: skip
        self.path, self.principles, self.judge = path, list(principles), judge
        self.resolution, self.currency, self.seed, self.scoring = resolution, currency, seed, scoring
        self.truth, self.concurrency, self.template = truth, concurrency, template
        self.rows: dict[_Key, dict[str, Any]] = {}
        self.calls = 0  # verdicts asked in this process (a resumed run's table answers the rest)
        if not path.is_file():  # the table exists from the start, even before the first verdict
            with path.open("w", encoding="utf-8", newline="") as handle:
                csv.DictWriter(handle, fieldnames=_COLUMNS).writeheader()
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                move = JudgedMove(row["role"], round(float(row["offered_share"]) * 100), row["decision"])
                self.rows[_Key(row["variant"], int(row["principle"]), move)] = row

    # -- asking -------------------------------------------------------------------------------

    def prompt(self, move: JudgedMove, principle: int) -> str:
        outcome = move.outcome(self.currency)
        offer = outcome.state.offer if outcome.state.offer is not None else outcome.move
        proposal = proposal_sentence(outcome.state.stake, offer)  # type: ignore[arg-type]
        text = self.principles[principle] if principle >= 0 else None
        return prompts.render(self.template, principle=text, proposal=proposal, role=move.role,
                              decision=move.decision or None, offered=move.offered,
                              currency=self.currency)  # fmt: skip

    def _keys(self, moves: Iterable[JudgedMove], variant: Variant) -> list[_Key]:
        indices = range(len(self.principles)) if variant == "principle" else (-1,)
        return [_Key(variant, index, move) for move in moves for index in indices]

    def prefetch(self, outcomes: Sequence[UltimatumOutcome], variants: Sequence[Variant] = ("principle",)) -> None:
        """Ask the judge about every legal move of `outcomes` not yet in the table, concurrently."""
        moves = list(dict.fromkeys(judged_move(o, self.resolution) for o in outcomes if o.legal))
        missing = [key for variant in variants for key in self._keys(moves, variant) if key not in self.rows]
        if missing:
            from sandbox._sync import run_sync

            run_sync(self._ask_all(missing))

    async def _ask_all(self, keys: list[_Key]) -> None:
        semaphore = asyncio.Semaphore(self.concurrency)

        async def one(key: _Key) -> dict[str, Any]:
            async with semaphore:
                return await self._ask(key)

        rows = await asyncio.gather(*(one(key) for key in keys))
        with self.path.open("a", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=_COLUMNS)
            for key, row in zip(keys, rows):
                writer.writerow(row)
                self.rows[key] = {name: "" if row[name] is None else str(row[name]) for name in _COLUMNS}
            handle.flush()

    async def _ask(self, key: _Key) -> dict[str, Any]:
        from sandbox.distill.truth import truth_label
        from sandbox.llm.contracts import CallInfo

        move = key.move
        prompt = self.prompt(move, key.principle)
        episode = f"{key.variant}-p{key.principle}-{move.role}-{move.offered}{('-' + move.decision) if move.decision else ''}"
        node = seed_node(self.seed, _JUDGE_BRANCH, key.principle + 1, move.offered, len(move.decision), move.role == "proposer")
        verdict = await self.judge.yes_no(prompt, step_by_step=False, seed=int(node.generate_state(1)[0]),
                                          call=CallInfo(role="judge", agent="judge", episode=episode, step="verdict"))  # fmt: skip
        self.calls += 1
        if verdict.label is None:
            reward = 0.5  # unparsed: neither yes nor no (counted as `source` unparsed in the summary)
        elif self.scoring == "graded" and verdict.p_yes is not None:
            reward = verdict.p_yes
        else:
            reward = float(verdict.label)
        truth = truth_label(self.truth, move.outcome(self.currency)) if self.truth is not None else None
        return {"variant": key.variant, "principle": key.principle, "role": move.role,
                "offered_share": move.offered_share(), "decision": move.decision,
                "label": "" if verdict.label is None else ("yes" if verdict.label else "no"),
                "p_yes": verdict.p_yes, "mass": verdict.mass, "source": verdict.source, "reward": reward,
                "truth_label": "" if truth is None else truth, "prompt": prompt, "answer": verdict.answer}  # fmt: skip

    # -- reading ------------------------------------------------------------------------------

    def reward(self, outcome: UltimatumOutcome, variant: Variant = "principle") -> float:
        """The mean reward over the principles (or the no-principle verdict) of a legal move already asked about."""
        move = judged_move(outcome, self.resolution)
        values = []
        for key in self._keys([move], variant):
            if key not in self.rows:
                raise KeyError(f"the judge has not been asked about {key}: prefetch the outcomes first")
            values.append(float(self.rows[key]["reward"]))
        return sum(values) / len(values)

    def table(self) -> list[dict[str, Any]]:
        """Every verdict, as read from or written to `judge_table.csv`."""
        return list(self.rows.values())

    def unparsed(self) -> int:
        return sum(row["source"] == "unparsed" for row in self.rows.values())

    def __len__(self) -> int:
        return len(self.rows)

