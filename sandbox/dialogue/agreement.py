"""Agreement against dialogue length: `sandbox agreement FILE`.

Do the players of a negotiation reach an agreement the reward model can read,
and after how many messages? For `dialogues` fresh setups of the scenario's
domain (meeting scheduling or fruit trading), every player speaks on "any"
(the baseline instruction) until the longest of `lengths` messages; the
termination is not asked, so every dialogue runs to the end. After each
length the dialogue so far is scored: the `outcome` reward model reads what
was agreed (a day, a trade; the game computes the payoffs from the private
valuations), with `selection` each player says what was agreed (an agreement
when both say the same), and with `value` the paper's judge states each
player's payoff. Per length: the agreement rate with its Wilson interval and
each mode's mean payoffs (`agreement_by_length.csv`, `agreement.png`).
Every scored prefix is also written as a dialogue to label by hand
(`agreement_prefixes.jsonl`, see `sandbox.dialogue.labelled`): the reward
model's reading is only as good as its agreement with a person's.

Messages are drawn with seeds from the seed tree, and every call goes through
the run's cache, so `sandbox resume DIR` of a killed measurement ends with
the same tables.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from langchain_core.language_models import BaseChatModel

from sandbox.base.errors import UsageError
from sandbox.base.jobs import gather_jobs
from sandbox.base.seeding import Branch, generator, seed_node
from sandbox.base.stats import json_records, wilson_interval
from sandbox.base.sync import run_sync
from sandbox.core.run_dir import RunDirectory, hold, holding
from sandbox.core.summary import write_summary
from sandbox.dialogue.labelled import LabelledDialogue, write_labelled
from sandbox.dialogue.llm_calls import StackModels, run_roles
from sandbox.dialogue.reward import READ_MODES, REWARD_MODES, RewardModel, describe
from sandbox.dialogue.scenario import DialogueScenario
from sandbox.rules.dialogue import ANY, Message, Setup, dialogue_text

__all__ = [
    "AGREEMENT",
    "DIALOGUES",
    "KIND",
    "PLOT",
    "PREFIXES",
    "TABLE",
    "agreement_table",
    "is_agreement_run",
    "measure_agreement",
    "resume_agreement",
]

KIND = "agreement"
AGREEMENT = "agreement.csv"
DIALOGUES = "agreement_dialogues.csv"
PREFIXES = "agreement_prefixes.jsonl"  # every scored prefix in the labelled-set shape, `agreed` left for a person
TABLE = "agreement_by_length.csv"
PLOT = "agreement.png"
DOMAINS = ("meeting", "fruit")


def _check(scenario: DialogueScenario, lengths: Sequence[int], modes: Sequence[str]) -> None:
    kind = scenario.dialogue.domain.kind
    if kind not in DOMAINS:
        raise UsageError(
            f"dialogue.domain.kind: {kind} has no agreement to read (agreement by length measures "
            f"{' and '.join(DOMAINS)})"
        )
    if not lengths or any(n < 1 for n in lengths):
        raise UsageError(f"--lengths {','.join(map(str, lengths))}: give message counts of at least 1")
    unknown = [m for m in modes if m not in REWARD_MODES]
    if unknown:
        raise UsageError(f"--mode: {unknown[0]!r} is not one of {', '.join(REWARD_MODES)}")


def measure_agreement(
    scenario: DialogueScenario,
    out: Path | str,
    *,
    lengths: Sequence[int] = (2, 4, 6, 8),
    dialogues: int = 10,
    modes: Sequence[str] = ("outcome", "value"),
    models: Mapping[str, BaseChatModel] | None = None,
) -> Path:
    """Play and score the dialogues into a new run directory `out`; write `agreement.csv`,
    `agreement_by_length.csv`, `agreement_dialogues.csv`, `agreement_prefixes.jsonl`, `agreement.png` and
    `summary.json`."""
    lengths = sorted(set(int(n) for n in lengths))
    _check(scenario, lengths, modes)
    path = Path(out)
    RunDirectory.check_new(path)
    with hold(path):
        run_dir = RunDirectory.create(path, scenario)
        run_dir.write_status("running", kind=KIND, lengths=lengths, dialogues=dialogues, modes=list(modes))
        return _measure(run_dir, scenario, lengths, dialogues, tuple(modes), models)


def is_agreement_run(path: Path | str) -> bool:
    """Whether `path` is a run directory of `sandbox agreement`."""
    return RunDirectory(Path(path)).status().get("kind") == KIND


@holding
def resume_agreement(path: Path | str, *, models: Mapping[str, BaseChatModel] | None = None) -> Path:
    """Finish an interrupted measurement with the options it started with (answered calls come from the cache)."""
    from sandbox.core.scenario_files import load_scenario

    run_dir = RunDirectory.open(path)
    status = run_dir.status()
    if status.get("status") == "complete":
        return run_dir.path
    scenario = load_scenario(run_dir / "scenario.yaml", kind="dialogue")
    return _measure(
        run_dir,
        scenario,
        [int(n) for n in status["lengths"]],
        int(status["dialogues"]),
        tuple(status["modes"]),
        models,
    )


async def _play(
    models: StackModels, domain: Any, setup: Setup, root: int, index: int, length: int
) -> tuple[Message, ...]:
    """One dialogue of `length` messages, every player on "any"; message seeds from the seed tree."""
    dialogue: tuple[Message, ...] = ()
    for position in range(length):
        speaker = position % len(setup.players)
        seed = int(seed_node(root, Branch.DIALOGUE, 9, index, position).generate_state(1)[0])
        text = await models.speak(domain.message(setup, speaker, ANY, dialogue), seed, speaker=setup.players[speaker])
        dialogue = (*dialogue, Message(speaker, ANY, text))
    return dialogue


def _measure(
    run_dir: RunDirectory,
    scenario: DialogueScenario,
    lengths: list[int],
    dialogues: int,
    modes: tuple[str, ...],
    models: Mapping[str, BaseChatModel] | None,
) -> Path:
    from sandbox.dialogue.run import dialogue_seed

    started = time.time()
    block = scenario.dialogue
    domain, setups = block.domain.build(block.players, dialogues, generator(scenario.seed, Branch.DIALOGUE, 10))
    judge_seed = dialogue_seed(scenario.seed, 2)
    with run_roles(run_dir, scenario, models) as roles:
        speakers = StackModels(roles["players"], roles["judge"], judge_seed=judge_seed)
        played = run_sync(
            gather_jobs(
                list(range(dialogues)), lambda i: _play(speakers, domain, setups[i], scenario.seed, i, lengths[-1])
            )
        )

        async def score(job: tuple[int, int, str]) -> dict[str, Any]:
            index, length, mode = job
            setup, dialogue = setups[index], played[index][:length]
            reward = RewardModel(domain, mode)  # type: ignore[arg-type]
            agreed, outcome = await reward.reading(roles["judge"], roles["players"], setup, dialogue, seed=judge_seed)
            row: dict[str, Any] = {
                "dialogue": index,
                "length": length,
                "mode": mode,
                "agreed": "" if agreed is None else agreed,
                "illegal": outcome.illegal or "",
            }
            row.update({f"payoff_{p}": v for p, v in enumerate(outcome.payoffs)})
            row["last_message"] = dialogue[-1].text
            return row

        jobs = [(i, n, m) for i in range(dialogues) for n in lengths for m in modes]
        rows = run_sync(gather_jobs(jobs, score))
    frame = pd.DataFrame(rows)
    frame.to_csv(run_dir / AGREEMENT, index=False)
    pd.DataFrame(
        [
            {"dialogue": i, "private": describe(setups[i]), "text": dialogue_text(setups[i], d, sep="\n")}
            for i, d in enumerate(played)
        ]
    ).to_csv(run_dir / DIALOGUES, index=False)
    write_labelled(
        [
            LabelledDialogue.of(block.domain.kind, setups[i], played[i][:n], source=f"{scenario.name}, dialogue {i}")
            for i in range(dialogues)
            for n in lengths
        ],
        run_dir / PREFIXES,
    )
    table = agreement_table(frame, len(block.players))
    table.to_csv(run_dir / TABLE, index=False)
    _plot(table, scenario.name, run_dir / PLOT)
    summary = {
        "scenario": scenario.name,
        "domain": block.domain.kind,
        "players": list(block.players),
        "dialogues": dialogues,
        "lengths": lengths,
        "modes": list(modes),
        "table": json_records(table),
        "seconds": round(time.time() - started, 2),
    }
    write_summary(run_dir, summary, kind="dialogue")
    run_dir.write_status("complete", finished=time.time())
    return run_dir.path


def agreement_table(frame: pd.DataFrame, players: int) -> pd.DataFrame:
    """Per length: dialogues, the agreements read, their rate and its 95% Wilson interval, and each mode's mean
    payoff per player. Agreements are read by each mode that names an outcome (`READ_MODES`): the first of them asked
    gives `agreements`, `agreement_rate`, `ci_low`, `ci_high` (and `read_by` names it), a second the same columns
    prefixed with its name (`selection_agreements`, ...)."""
    asked = [m for m in READ_MODES if m in set(frame["mode"])]
    out = []
    for length, group in frame.groupby("length", sort=True):
        row: dict[str, Any] = {"length": int(length), "dialogues": int(group["dialogue"].nunique())}
        for k, mode in enumerate(asked):
            read = group[group["mode"] == mode]
            agreed = int((read["agreed"].fillna("").astype(str) != "").sum())
            low, high = wilson_interval(agreed, len(read))
            prefix = "" if k == 0 else f"{mode}_"
            row.update(
                {
                    f"{prefix}agreements": agreed,
                    f"{prefix}agreement_rate": agreed / len(read),
                    f"{prefix}ci_low": low,
                    f"{prefix}ci_high": high,
                }
            )
        if asked:
            row["read_by"] = asked[0]
        for mode, by_mode in group.groupby("mode", sort=False):
            for p in range(players):
                row[f"{mode}_payoff_{p}"] = float(by_mode[f"payoff_{p}"].mean())
        out.append(row)
    return pd.DataFrame(out)


def agreement_readers(row: dict[str, Any]) -> list[tuple[str, str]]:
    """The modes whose agreements a row of `agreement_table` holds, with their columns' prefix: the first (`read_by`;
    `outcome` in runs from before it was written) unprefixed, the second prefixed with its name."""
    first = row.get("read_by") or ("outcome" if "agreements" in row else None)
    return ([(str(first), "")] if first else []) + [(m, f"{m}_") for m in READ_MODES if f"{m}_agreements" in row]


def _plot(table: pd.DataFrame, name: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    readers = agreement_readers(table.iloc[0].to_dict() if len(table) else {})
    for mode, prefix in readers:
        rate = table[f"{prefix}agreement_rate"]
        below = (rate - table[f"{prefix}ci_low"]).clip(lower=0)  # clipped: rounding
        above = (table[f"{prefix}ci_high"] - rate).clip(lower=0)
        ax.errorbar(table["length"], rate, yerr=[below, above], capsize=3, marker="o", label=f"read by {mode}")
    if len(readers) > 1:
        ax.legend()
    ax.set_xlabel("messages")
    ax.set_ylabel("agreement rate")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xticks(list(table["length"]))
    ax.set_title(f"{name}: agreements by dialogue length (95% Wilson CI)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
