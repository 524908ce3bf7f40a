"""The LLM reward model's error, measured as the paper's Table 8 does: `sandbox reward-model FILE`.

For each of `dialogues` setups of the scenario's domain, three two-message
dialogues are written from templates whose payoffs are known: Valid (a
proposal accepted), Rejected (a proposal refused) and Incomplete (a counter
proposal, no agreement). The reward model scores each; per outcome type and
overall, `Norm` is the mean absolute error over the domain's payoff range and
`Sgn` the fraction of payoffs whose sign is wrong (one sample per player and
dialogue). The modes `value` (the paper's) and `outcome` are measured unless
others are asked for; `selection` asks the players' model (each player in its
own context) instead of a judge.

`--labelled SET` measures the same on the embedded model's own dialogues
labelled by hand (`sandbox.dialogue.labelled`) instead of templates: the
outcome types are then `agreed` and `none`. For the modes that name an
outcome (`outcome`, `selection`) the reading itself is compared with what was
agreed, the label's or the valid template's (`reward_model_reading.csv`, one
row per mode): precision (of the agreements read, the share that are the
labelled agreement), recall (of the labelled agreements, the share read
exactly) and accuracy (cases read exactly, no agreement included).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from langchain_core.language_models import BaseChatModel

from prompts import render
from sandbox.base.errors import ScenarioError, UsageError
from sandbox.base.seeding import Branch, generator
from sandbox.base.stats import json_records
from sandbox.base.sync import run_sync
from sandbox.core.run_dir import RunDirectory, atomic_write_text, hold, holding
from sandbox.core.summary import write_summary
from sandbox.dialogue.labelled import read_labelled_text
from sandbox.dialogue.reward import READ_MODES, canonical_outcome
from sandbox.dialogue.scenario import DialogueScenario
from sandbox.rules.dialogue import Message, Setup

OUTCOMES = ("valid", "rejected", "incomplete")
CASES = "reward_model.csv"
KIND = "reward-model"
TABLE = "reward_model_error.csv"
READING = "reward_model_reading.csv"
LABELLED = "labelled.jsonl"  # the labelled set a measurement ran on, copied into its run directory


@dataclass(frozen=True)
class Case:
    """A templated dialogue and the payoffs it truly has."""

    outcome: str
    setup: int
    dialogue: tuple[Message, ...]
    truth: tuple[float, ...]
    agreed: str | None = None  # the outcome as the `outcome` reward model names it; None: no agreement


def _meeting_cases(domain: Any, setups: tuple[Setup, ...], rng: np.random.Generator) -> list[Case]:
    from sandbox.dialogue.domains.meeting import DAYS

    cases = []
    for index, setup in enumerate(setups):
        a, b = setup.players
        values = setup.data["values"]
        common = [d for d in values[0] if d in values[1]] or list(values[0])
        day = common[int(rng.integers(len(common)))]
        other_day = [d for d in DAYS if d != day][int(rng.integers(len(DAYS) - 1))]
        proposal = Message(0, "any", render("dialogue/table8/meeting_proposal.j2", sender=a, receiver=b, day=day))
        answers = {
            "valid": ("meeting_accept.j2", domain.payoffs_of(setup, day)),
            "rejected": ("meeting_reject.j2", domain.payoffs_of(setup, None)),
            "incomplete": ("meeting_incomplete.j2", domain.payoffs_of(setup, None)),
        }
        for outcome, (template, truth) in answers.items():
            text = render(f"dialogue/table8/{template}", sender=b, receiver=a, day=day, other_day=other_day)
            cases.append(
                Case(outcome, index, (proposal, Message(1, "any", text)), truth, day if outcome == "valid" else None)
            )
    return cases


def _fruit_cases(domain: Any, setups: tuple[Setup, ...], rng: np.random.Generator) -> list[Case]:
    cases = []
    for index, setup in enumerate(setups):
        a, b = setup.players
        have_a, have_b = setup.data["endowments"]
        pairs = [
            (give, get) for give, n in have_a.items() if n > 0 for get, m in have_b.items() if m > 0 and get != give
        ]
        if not pairs:  # nothing the two could swap: no valid trade to write
            continue
        give, get = pairs[int(rng.integers(len(pairs)))]
        give_n = int(rng.integers(1, have_a[give] + 1))
        get_n = int(rng.integers(1, have_b[get] + 1))
        trade = (give_n, give, get_n, get)
        proposal = Message(
            0,
            "any",
            render(
                "dialogue/table8/fruit_proposal.j2",
                sender=a,
                receiver=b,
                give_n=give_n,
                give=give,
                get_n=get_n,
                get=get,
            ),
        )
        answers = {
            "valid": ("fruit_accept.j2", domain.payoffs_of(setup, trade)),
            "rejected": ("fruit_reject.j2", domain.payoffs_of(setup, None)),
            "incomplete": ("fruit_incomplete.j2", domain.payoffs_of(setup, None)),
        }
        named = f"{a} gives {give_n} {give} and gets {get_n} {get}"
        for outcome, (template, truth) in answers.items():
            answer = Message(1, "any", render(f"dialogue/table8/{template}", sender=b, receiver=a))
            cases.append(Case(outcome, index, (proposal, answer), truth, named if outcome == "valid" else None))
    return cases


def template_cases(scenario: DialogueScenario, dialogues: int) -> tuple[Any, tuple[Setup, ...], list[Case]]:
    """The domain, `dialogues` fresh setups, and three templated dialogues per setup."""
    config = scenario.dialogue.domain
    builders = {"meeting": _meeting_cases, "fruit": _fruit_cases}
    if config.kind not in builders:
        raise UsageError(
            f"dialogue.domain.kind: {config.kind} has no templated dialogues with known payoffs "
            "(the paper's Table 8 covers meeting and fruit)"
        )
    rng = generator(scenario.seed, Branch.DIALOGUE, 5)
    # more setups than asked for: a fruit setup where no trade is possible is skipped
    domain, setups = config.build(scenario.dialogue.players, 3 * dialogues, rng)
    cases = builders[config.kind](domain, setups, rng)
    kept = sorted({c.setup for c in cases})[:dialogues]
    return domain, setups, [c for c in cases if c.setup in kept]


def labelled_cases(
    scenario: DialogueScenario, path: Path | str, text: str | None = None
) -> tuple[Any, tuple[Setup, ...], list[Case]]:
    """The domain, and one case per dialogue of the labelled set at `path` (or its `text`, read once by the
    caller): outcome type `agreed` or `none`, the truth computed from the label by the domain's own payoff rule."""
    from sandbox.dialogue.labelled import load_labelled, parse_labelled

    config = scenario.dialogue.domain
    items = (
        load_labelled(path, domain=config.kind) if text is None else parse_labelled(text, str(path), domain=config.kind)
    )
    domain, _ = config.build(scenario.dialogue.players, 1, generator(scenario.seed, Branch.DIALOGUE, 5))
    setups = tuple(item.game_setup() for item in items)
    cases = []
    for index, (item, setup) in enumerate(zip(items, setups)):
        outcome = domain.outcome_payoffs(setup, "none" if item.agreed is None else item.agreed)
        if outcome.illegal:
            problem = f"{item.agreed!r}: the {config.kind} domain cannot read it as an outcome"
            raise ScenarioError(str(path), [(f"line {item.line}: agreed", problem)])
        cases.append(
            Case("none" if item.agreed is None else "agreed", index, item.dialogue(), outcome.payoffs, item.agreed)
        )
    return domain, setups, cases


def _same(read: str | None, label: str | None) -> bool:
    """Whether a reading names the labelled outcome."""
    return canonical_outcome(read) == canonical_outcome(label)


async def score_cases(
    cases: list[Case],
    setups: tuple[Setup, ...],
    domain: Any,
    judge: BaseChatModel,
    mode: str,
    seed: int,
    players: BaseChatModel | None = None,
) -> list[dict[str, Any]]:
    """One row per case and player: the true and the predicted payoff (`selection`: the `players`' model, by
    default the judge's, says what was agreed)."""
    from sandbox.dialogue.reward import RewardModel

    model = RewardModel(domain, mode)  # type: ignore[arg-type]

    scored = await asyncio.gather(
        *(model.reading(judge, players or judge, setups[c.setup], c.dialogue, seed=seed) for c in cases)
    )
    rows = []
    for case, (read, outcome) in zip(cases, scored):
        for player, (truth, predicted) in enumerate(zip(case.truth, outcome.payoffs)):
            rows.append(
                {
                    "mode": mode,
                    "outcome": case.outcome,
                    "setup": case.setup,
                    "player": player,
                    "truth": truth,
                    "predicted": predicted,
                    "illegal": outcome.illegal or "",
                    "agreed": case.agreed or "",
                    "read": (read or "") if mode in READ_MODES else "",
                    "dialogue": "\n".join(m.text for m in case.dialogue),
                }
            )
    return rows


def reading_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The readings of the modes that name an outcome (`outcome`, `selection`) against the labels, one row per
    mode (one case per dialogue): agreements labelled and read, the reads that name the labelled agreement,
    precision, recall and accuracy."""
    out = []
    for mode in READ_MODES:
        cases = rows[(rows["mode"] == mode) & (rows["player"] == 0)]
        if cases.empty:
            continue
        label = [text or None for text in cases["agreed"].fillna("").astype(str)]
        read = [text or None for text in cases["read"].fillna("").astype(str)]
        exact = [_same(r, a) for r, a in zip(read, label)]
        agreements, said = sum(a is not None for a in label), sum(r is not None for r in read)
        hits = sum(e and a is not None for e, a in zip(exact, label))
        out.append(
            {
                "mode": mode,
                "n": len(cases),
                "agreements": agreements,
                "read": said,
                "read_right": hits,
                "precision": hits / said if said else float("nan"),
                "recall": hits / agreements if agreements else float("nan"),
                "accuracy": float(np.mean(exact)),
            }
        )
    return pd.DataFrame(out)


def error_table(rows: pd.DataFrame, low: float, high: float) -> pd.DataFrame:
    """Norm and Sgn per mode and outcome type, and over all types."""
    out = []
    for mode, by_mode in rows.groupby("mode", sort=False):
        for outcome, group in [*by_mode.groupby("outcome", sort=False), ("all", by_mode)]:
            error = (group["predicted"] - group["truth"]).abs() / (high - low)
            wrong_sign = np.sign(group["predicted"]) != np.sign(group["truth"])
            out.append(
                {
                    "mode": mode,
                    "outcome": outcome,
                    "n": len(group),
                    "norm": float(error.mean()),
                    "sgn": float(wrong_sign.mean()),
                    "illegal": int((group["illegal"] != "").sum()),
                }
            )
    return pd.DataFrame(out)


def measure_reward_model(
    scenario: DialogueScenario,
    out: Path | str,
    *,
    dialogues: int = 10,
    modes: tuple[str, ...] = ("value", "outcome"),
    judge: BaseChatModel | None = None,
    labelled: Path | str | None = None,
) -> Path:
    """Write `reward_model.csv` (every case), `reward_model_error.csv` (the paper's Table 8) and, with the
    `outcome` or `selection` mode, `reward_model_reading.csv` into `out`; on templated dialogues, or on the
    labelled set `labelled` (copied into `out` as `labelled.jsonl`). A `judge` given here answers for the players
    too (`selection`)."""
    path = Path(out)
    RunDirectory.check_new(path)
    # a domain without templates, or a bad labelled set, writes nothing; the set is read once, checked, and that
    # text is what the run directory keeps (and a resume reads)
    text = None if labelled is None else read_labelled_text(labelled)
    domain, setups, cases = (
        template_cases(scenario, dialogues) if labelled is None else labelled_cases(scenario, labelled, text)
    )
    with hold(path):
        run_dir = RunDirectory.create(path, scenario)
        if text is not None:
            atomic_write_text(run_dir / LABELLED, text)
        run_dir.write_status("running", kind=KIND, dialogues=dialogues, modes=list(modes))
        return _measure(run_dir, scenario, domain, setups, cases, modes, judge)


def is_reward_model_run(path: Path | str) -> bool:
    """Whether `path` is a run directory of `sandbox reward-model`."""
    return RunDirectory(Path(path)).status().get("kind") == KIND


@holding
def resume_reward_model(path: Path | str, *, judge: BaseChatModel | None = None) -> Path:
    """Finish an interrupted measurement with the options it started with (answered calls come from the cache)."""
    from sandbox.core.scenario_files import load_scenario

    run_dir = RunDirectory.open(path)
    status = run_dir.status()
    if status.get("status") == "complete":
        return run_dir.path
    scenario = load_scenario(run_dir / "scenario.yaml", kind="dialogue")
    domain, setups, cases = (
        labelled_cases(scenario, run_dir / LABELLED)
        if (run_dir / LABELLED).exists()
        else template_cases(scenario, int(status["dialogues"]))
    )
    return _measure(run_dir, scenario, domain, setups, cases, tuple(status["modes"]), judge)


def _measure(
    run_dir: RunDirectory,
    scenario: DialogueScenario,
    domain: Any,
    setups: tuple[Setup, ...],
    cases: list[Case],
    modes: tuple[str, ...],
    judge: BaseChatModel | None,
) -> Path:
    from sandbox.dialogue.llm_calls import run_roles

    started = time.time()
    rows: list[dict[str, Any]] = []
    with run_roles(run_dir, scenario, {"judge": judge} if judge is not None else None) as roles:
        for mode in modes:
            # a judge given in place of the scenario's also answers for the players (`selection`)
            rows += run_sync(
                score_cases(
                    cases,
                    setups,
                    domain,
                    roles["judge"],
                    mode,
                    seed=scenario.seed,
                    players=roles["judge"] if judge is not None else roles["players"],
                )
            )
    frame = pd.DataFrame(rows)
    frame.to_csv(run_dir / CASES, index=False)
    low, high = domain.payoff_range()
    table = error_table(frame, low, high)
    table.to_csv(run_dir / TABLE, index=False)
    reading = reading_table(frame)
    if not reading.empty:
        reading.to_csv(run_dir / READING, index=False)
    players = {"players": scenario.models.judge.spec if judge is not None else scenario.models.players.spec}
    summary = {
        "scenario": scenario.name,
        "domain": scenario.dialogue.domain.kind,
        "judge": scenario.models.judge.spec,
        **(players if "selection" in modes else {}),
        "dialogues": len(cases),
        "cases": "labelled" if (run_dir / LABELLED).exists() else "templated",
        "payoff_range": [low, high],
        "table": table.to_dict("records"),
        "reading": json_records(reading) if not reading.empty else None,
        "seconds": round(time.time() - started, 2),
    }
    write_summary(run_dir, summary, kind="dialogue")
    run_dir.write_status("complete", finished=time.time())
    return run_dir.path
