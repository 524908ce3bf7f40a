"""What a distillation will do, resolved before anything runs (`plan`): its principles from the source, the true
norm, the currencies, the training amounts and those held out; a labelled judge table given by the scenario is
checked against what its verdicts depend on. Every refusal is a `ScenarioError` naming the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox.base.files import read_json
from sandbox.base.seeding import generator
from sandbox.distill.layout import PRINCIPLES, DistillPlan
from sandbox.distill.scenario import TINY_MAX_AMOUNT, DistillScenario
from sandbox.distill.source import resolve_principles, source_run

__all__ = ["check_labelled_table", "plan", "split_amounts"]

_HELD_OUT = 1 << 23  # the seed-tree branch that picks the held-out amounts


def split_amounts(low: int, high: int, share: float, seed: int) -> tuple[list[int], list[int]]:
    """(training amounts, held-out amounts): a seeded `share` of the range `low..high` is held out.

    >>> train, held = split_amounts(10, 19, 0.2, seed=0)
    >>> len(train), len(held), sorted(train + held) == list(range(10, 20))
    (8, 2, True)
    """
    amounts = list(range(low, high + 1))
    count = int(round(len(amounts) * share))
    held = (
        sorted(int(a) for a in generator(seed, _HELD_OUT).choice(amounts, size=count, replace=False)) if count else []
    )
    return [a for a in amounts if a not in set(held)], held


def plan(scenario: DistillScenario, source: str = "<scenario>") -> DistillPlan:
    """Resolve the scenario's source and amounts; `ScenarioError` naming the field when they cannot be used."""
    from sandbox.base.errors import ScenarioError

    block = scenario.distill
    if scenario.models.student.partition(":")[0] == "tiny" and block.amounts.max > TINY_MAX_AMOUNT:
        raise ScenarioError(
            source,
            [
                (
                    "distill.amounts.max",
                    f"the tiny student reads each amount as a word of its "
                    f"vocabulary; keep amounts up to {TINY_MAX_AMOUNT}",
                )
            ],
        )
    run = source_run(block, source)
    principles = resolve_principles(block, source, run)
    truth = block.truth if block.truth is not None else (run.library_norm() if run is not None else None)
    if block.reward == "truth" and truth is None:
        raise ScenarioError(
            source,
            [
                (
                    "distill.truth",
                    "reward truth needs the true norm, and the source run's "
                    "society holds no single library norm: set distill.truth",
                )
            ],
        )
    currencies = block.currencies or (list(run.scenario.game.currencies) if run is not None else ["dollars", "apples"])
    train, held = split_amounts(block.amounts.min, block.amounts.max, block.held_out, scenario.seed)
    if not train:
        raise ScenarioError(
            source,
            [
                (
                    "distill.held_out",
                    f"holds out every amount of {block.amounts.min}..{block.amounts.max}; lower it or widen the range",
                )
            ],
        )
    if block.judge_table is not None:
        check_labelled_table(scenario, principles, currencies[0], source)
    return DistillPlan(principles, truth, currencies, train, held, str(run.path.resolve()) if run is not None else None)


# What a judge's verdicts depend on besides the principles and the currency: a table labelled otherwise is refused.
# (Not the seed: the verdicts in the table are read back, and a move it lacks is asked under this run's seed.)
_JUDGED = (
    "models.judge",
    "distill.judge",
    "distill.resolution",
    "distill.scoring",
    "distill.judge_temperature",
    "distill.act_samples",
)


def check_labelled_table(scenario: DistillScenario, principles: list[Any], currency: str, source: str) -> None:
    """`ScenarioError` naming `distill.judge_table` when the table is missing, or was labelled (by the run that
    wrote it, its `scenario.yaml` and `principles.json` beside it) for other principles, another currency, or
    another judge, resolution, scoring, temperature or sample count."""
    from sandbox.base.errors import ScenarioError
    from sandbox.base.files import read_yaml

    path = str(scenario.distill.judge_table)
    table = Path(path)
    if not table.is_file():
        raise ScenarioError(source, [("distill.judge_table", f"{path} is not a file")])
    problems = []
    beside = table.parent / PRINCIPLES
    if beside.is_file():
        theirs = read_json(beside)
        if [p["text"] for p in theirs.get("principles", [])] != [p.text for p in principles]:
            problems.append("other principles")
        if (theirs.get("currencies") or [currency])[0] != currency:
            problems.append(f"the currency {theirs['currencies'][0]!r}")
    labelled = table.parent / "scenario.yaml"
    if labelled.is_file():
        mine, data = scenario.model_dump(mode="json"), read_yaml(labelled)
        for field in _JUDGED:
            first, _, second = field.partition(".")
            ours = mine[first][second] if second else mine[first]
            given = (data.get(first) or {}).get(second) if second else data.get(first)
            if given is not None and given != ours:
                problems.append(f"{field} {given!r} (this run: {ours!r})")
    if problems:
        raise ScenarioError(
            source,
            [
                (
                    "distill.judge_table",
                    f"{path} was labelled for {', '.join(problems)}; label it again for this scenario",
                )
            ],
        )
