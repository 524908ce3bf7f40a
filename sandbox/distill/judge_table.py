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

Mode `act` (a named switch, `distill.judge: act`; the default `verdict` is
the proxy-reward method's question): the judge's model does not judge the
move, it plays under the principle, as SCAI's policy-following assistant
(`agents.assistant`), and the reward is agreement with its play. A proposal
earns 1 − |offered share − the mean offered share of `samples` seeded
proposals the judge's model makes on the stake of 100| (label yes within
0.2); an answer earns 1 when the judge's model, under the principle, gives
the same answer to the same proposal, else 0. The reason: a small model
follows a principle far better than it judges one (README, Norm
distillation). The no-principle control plays with an empty principle.
"""

from __future__ import annotations

import asyncio
import csv
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import prompts
from sandbox.base.seeding import seed_node
from sandbox.rules.ultimatum import Split, Stake, proposal_sentence
from sandbox.training.ultimatum_env import UltimatumOutcome, UltimatumState

__all__ = ["JUDGE_TABLE", "JudgeTable", "JudgedMove", "Variant", "every_move", "judged_move"]

JUDGE_TABLE = "judge_table.csv"
Variant = Literal["principle", "no_principle"]
_COLUMNS = (
    "variant",
    "principle",
    "role",
    "offered_share",
    "decision",
    "label",
    "p_yes",
    "mass",
    "source",
    "reward",
    "truth_label",
    "prompt",
    "answer",
)
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


def every_move(resolution: float, roles: Sequence[str] = ("proposer",)) -> list[JudgedMove]:
    """Every move a judge can be shown at `resolution`: each offer as a proposal, and as an answer each offer
    accepted and rejected (21 + 42 at 0.05).

    >>> [(m.role, m.offered, m.decision) for m in every_move(0.25, ["proposer"])]
    [('proposer', 0, ''), ('proposer', 25, ''), ('proposer', 50, ''), ('proposer', 75, ''), ('proposer', 100, '')]
    """
    offers = sorted({min(100, int(round(k * resolution * 100))) for k in range(int(round(1 / resolution)) + 1)})
    moves = [JudgedMove("proposer", o) for o in offers] if "proposer" in roles else []
    if "responder" in roles:
        moves += [JudgedMove("responder", o, d) for o in offers for d in ("accept", "reject")]
    return moves


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
        judge: The judge (a `sandbox.rewards.judge.ProxyJudge` on the run's wrapped judge model).
        resolution: The offered-share step the judge sees.
        currency: The currency of the judge's stake of 100.
        seed: The root of the run's seed tree (each verdict's call seed derives from its move).
        scoring: `graded` (P(yes) where known) or `binary` (the label).
        truth: The library norm, for the `truth_label` column; None when unknown.
        concurrency: Judge calls in flight at once.
        template: The judge's prompt (a template under `prompts/`).
        mode: `verdict` (the judge says yes or no) or `act` (the judge's model plays under the principle).
        actor: Act mode: the chat model that plays (default: the judge's).
        samples: Act mode: proposals per principle whose mean offered share is the target.
        player: Act mode: how it plays, as a society's assistant does (`rules`, `reading`, `responder` of
            `agents.assistant.PolicyFollowingAssistant`).
    """

    def __init__(
        self,
        path: Path,
        principles: Sequence[str],
        judge: Any,
        *,
        resolution: float,
        currency: str,
        seed: int,
        scoring: str = "graded",
        truth: str | None = None,
        concurrency: int = 4,
        template: str = "distill/judge.j2",
        mode: str = "verdict",
        actor: Any = None,
        samples: int = 4,
        player: dict[str, Any] | None = None,
    ) -> None:
        self.path, self.principles, self.judge = path, list(principles), judge
        self.mode, self.actor, self.samples = (
            mode,
            actor if actor is not None else getattr(judge, "model", None),
            samples,
        )
        self.player = dict(player or {})  # act mode: how the judge's model plays (rules, reading, responder)
        self.targets: dict[int, float | None] = {}  # act mode: the judge's mean offered share per principle
        self.decisions: dict[tuple[int, int], tuple[str | None, str]] = {}  # act: (decision, answer) per offer
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
        return prompts.render(
            self.template,
            principle=text,
            proposal=proposal,
            role=move.role,
            decision=move.decision or None,
            offered=move.offered,
        )

    def _keys(self, moves: Iterable[JudgedMove], variant: Variant) -> list[_Key]:
        indices = range(len(self.principles)) if variant == "principle" else (-1,)
        return [_Key(variant, index, move) for move in moves for index in indices]

    def label_all(
        self,
        roles: Sequence[str] = ("proposer",),
        variants: Sequence[Variant] = ("principle",),
        on_move: Callable[[], None] | None = None,
    ) -> int:
        """Ask the judge about every move of `roles` not yet in the table (`every_move`), `concurrency` moves at a
        time, each batch appended to the table before the next (`on_move` after each move written); the number
        asked."""
        from sandbox.base.sync import run_sync

        missing = [
            key
            for variant in variants
            for key in self._keys(every_move(self.resolution, roles), variant)
            if key not in self.rows
        ]
        for start in range(0, len(missing), self.concurrency):
            batch = missing[start : start + self.concurrency]
            run_sync(self._ask_all(batch))
            for _ in batch:
                if on_move is not None:
                    on_move()
        return len(missing)

    def prefetch(self, outcomes: Sequence[UltimatumOutcome], variants: Sequence[Variant] = ("principle",)) -> None:
        """Ask the judge about every legal move of `outcomes` not yet in the table, concurrently."""
        moves = list(dict.fromkeys(judged_move(o, self.resolution) for o in outcomes if o.legal))
        missing = [key for variant in variants for key in self._keys(moves, variant) if key not in self.rows]
        if missing:
            from sandbox.base.sync import run_sync

            run_sync(self._ask_all(missing))

    async def _ask_all(self, keys: list[_Key]) -> None:
        semaphore = asyncio.Semaphore(self.concurrency)
        if self.mode == "act":  # what the judge's model does: once per principle, and once per proposal answered
            for principle in dict.fromkeys(k.principle for k in keys if k.move.role == "proposer"):
                if principle not in self.targets:
                    self.targets[principle] = await self._target(principle)
            offers = [
                o
                for o in dict.fromkeys((k.principle, k.move.offered) for k in keys if k.move.role == "responder")
                if o not in self.decisions
            ]
            for offer, decision in zip(offers, await asyncio.gather(*(self._decision(*o) for o in offers))):
                self.decisions[offer] = decision

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

    def _player(self, principle: int) -> Any:
        from agents.assistant import PolicyFollowingAssistant

        return PolicyFollowingAssistant(
            policy=self.principles[principle] if principle >= 0 else "",
            model=self.actor,
            agent_id="judge",
            **self.player,
        )

    async def _target(self, principle: int) -> float | None:
        """Act mode: the mean offered share of the judge's model's proposals under the principle (None: none legal)."""
        from sandbox.llm.contracts import CallInfo
        from sandbox.rules.ultimatum import ParseError, parse_proposal, proposal_constraint

        stake, shares = Stake(100, self.currency), []
        for sample in range(self.samples):
            node = seed_node(self.seed, _JUDGE_BRANCH, principle + 1, 1000 + sample)
            call = CallInfo(role="judge", agent="judge", episode=f"act-p{principle}-s{sample}", step="propose")
            answer = await self._player(principle).propose(
                stake,
                seed=int(node.generate_state(1)[0]),
                call=call,
                constraint=proposal_constraint(stake, remark=False),
            )
            self.calls += 1
            try:
                shares.append(parse_proposal(answer, stake).responder / 100)
            except ParseError:
                continue
        return sum(shares) / len(shares) if shares else None

    async def _decision(self, principle: int, offered: int) -> tuple[str | None, str]:
        """Act mode: (decision or None, answer) of the judge's model under the principle to a proposal of `offered`."""
        from sandbox.llm.contracts import CallInfo
        from sandbox.rules.ultimatum import ParseError, decision_constraint, parse_decision

        stake, offer = Stake(100, self.currency), Split(100 - offered, offered)
        node = seed_node(self.seed, _JUDGE_BRANCH, principle + 1, offered, 0, False)
        call = CallInfo(role="judge", agent="judge", episode=f"act-p{principle}-responder-{offered}", step="respond")
        answer = await self._player(principle).respond(
            stake,
            proposal_sentence(stake, offer),
            offer,
            seed=int(node.generate_state(1)[0]),
            call=call,
            constraint=decision_constraint(remark=False),
        )
        self.calls += 1
        try:
            return parse_decision(answer), answer
        except ParseError:
            return None, answer

    def _act(self, key: _Key) -> tuple[float, str, str, str]:
        """Act mode: (reward, label, source, what the judge's model did) for one move."""
        move = key.move
        if move.role == "proposer":
            target = self.targets.get(key.principle)
            if target is None:
                return 0.5, "", "unparsed", "no legal proposal under the principle"
            reward = 1.0 - abs(move.offered_share() - target)
            near = abs(move.offered - target * 100) <= 20 + 1e-9  # in percent, clear of float noise at the edge
            return reward, "yes" if near else "no", "act", f"offers {target:.3f}"
        decision, answer = self.decisions[(key.principle, move.offered)]
        if decision is None:
            return 0.5, "", "unparsed", answer
        same = decision == move.decision
        return float(same), "yes" if same else "no", "act", answer

    async def _ask(self, key: _Key) -> dict[str, Any]:
        from sandbox.llm.contracts import CallInfo

        move = key.move
        if self.mode == "act":
            reward, label, source, answer = self._act(key)
            return self._row(key, reward, label, source, answer)
        prompt = self.prompt(move, key.principle)
        episode = (
            f"{key.variant}-p{key.principle}-{move.role}-{move.offered}{('-' + move.decision) if move.decision else ''}"
        )
        node = seed_node(
            self.seed, _JUDGE_BRANCH, key.principle + 1, move.offered, len(move.decision), move.role == "proposer"
        )
        verdict = await self.judge.yes_no(
            prompt,
            step_by_step=False,
            seed=int(node.generate_state(1)[0]),
            call=CallInfo(role="judge", agent="judge", episode=episode, step="verdict"),
        )
        self.calls += 1
        if verdict.label is None:
            reward = 0.5  # unparsed: neither yes nor no (counted as `source` unparsed in the summary)
        elif self.scoring == "graded" and verdict.p_yes is not None:
            reward = verdict.p_yes
        else:
            reward = float(verdict.label)
        label = "" if verdict.label is None else ("yes" if verdict.label else "no")
        return self._row(
            key, reward, label, verdict.source, verdict.answer, p_yes=verdict.p_yes, mass=verdict.mass, prompt=prompt
        )

    def _row(
        self,
        key: _Key,
        reward: float,
        label: str,
        source: str,
        answer: str,
        *,
        p_yes: float | None = None,
        mass: float | None = None,
        prompt: str = "",
    ) -> dict[str, Any]:
        """A row of `judge_table.csv`: the move, what the judge said or did, its reward, and the true norm's label."""
        from sandbox.distill.truth import truth_label

        move = key.move
        truth = truth_label(self.truth, move.outcome(self.currency)) if self.truth is not None else None
        return {
            "variant": key.variant,
            "principle": key.principle,
            "role": move.role,
            "offered_share": move.offered_share(),
            "decision": move.decision,
            "label": label,
            "p_yes": p_yes,
            "mass": mass,
            "source": source,
            "reward": reward,
            "truth_label": "" if truth is None else truth,
            "prompt": prompt,
            "answer": answer,
        }

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
