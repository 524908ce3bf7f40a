"""GovSim's common-pool resource (Piatti et al. 2024, "Cooperate or Collapse"): the fishery's rules and figures.

Rules (the authors' code, `giorgiopiatti/GovSim` at 1d11adf, paths under
`simulation/`; the reference notes give the lines):

* `agents` fishers (5) share a lake of `capacity` tons (100), full at the
  start; a run lasts `months` months (12);
* each month every agent asks for a catch at once; when the asks exceed the
  stock, the default `stochastic` rule hands out one ton at a time to a
  random agent that still wants more (`concurrent_env.py:243-265`),
  `proportional` shares the stock in proportion to the asks (largest
  remainders, whole tons);
* after the month, a stock below `collapse_below` (5) has collapsed and the
  run ends; otherwise it doubles, capped at `capacity`
  (`concurrent_env.py:424-437`);
* the sustainable catch per agent is (stock // 2) // agents, with the
  *current* number of agents (the code used a stale count after an outsider
  joined: defect 3 of the notes); the universalization hint names it.

Figures, as the repository's analysis and a third-party reproduction
compute them (the paper's formulas were not read; see the notes):
survival months (the month of the collapse, else all months), total and
per-agent gain, efficiency 1 - max(0, months f0 - gain) / (months f0) with
f0 = capacity // 2, equality 1 - sum_ij |R_i - R_j| / (2 n sum R), and
over-usage (the share of agent-months whose catch passed the sustainable
catch).

The allocation draws from a generator the caller seeds (the authors' code
left it unseeded: defect 2).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from sandbox.base.rounding import apportion

__all__ = [
    "ANSWER_MARKER",
    "CommonsRules",
    "Month",
    "Outcome",
    "after_answer",
    "allocate",
    "figures",
    "parse_harvest",
    "play",
    "sustainable_catch",
]


@dataclass(frozen=True)
class CommonsRules:
    """The fishery's settings (GovSim's defaults)."""

    agents: int = 5
    months: int = 12
    capacity: int = 100
    collapse_below: int = 5
    allocation: Literal["stochastic", "proportional"] = "stochastic"


@dataclass(frozen=True)
class Month:
    """One month: the stock at its start, each agent's ask and catch (None: an illegal answer, no catch), the
    stock left, whether the lake collapsed, and the stock the next month starts with."""

    month: int
    stock: int
    asked: tuple[int | None, ...]
    caught: tuple[int, ...]
    left: int
    collapsed: bool
    next_stock: int


@dataclass
class Outcome:
    """A run's months (it ends at a collapse)."""

    rules: CommonsRules
    months: list[Month] = field(default_factory=list)


def sustainable_catch(stock: int, agents: int) -> int:
    """The most each agent may take so that the stock, halved, doubles back: (stock // 2) // agents.

    >>> sustainable_catch(100, 5)
    10
    >>> sustainable_catch(80, 4)
    10
    """
    return (stock // 2) // agents


def allocate(asked: Sequence[int], stock: int, rule: str, rng: np.random.Generator) -> list[int]:
    """Each agent's catch: its ask when the asks fit in the stock; otherwise the stock shared by `rule`."""
    asked = [max(0, int(a)) for a in asked]
    if sum(asked) <= stock:
        return asked
    if rule == "proportional":
        return apportion([stock * a / sum(asked) for a in asked], stock)
    caught = [0] * len(asked)
    for _ in range(stock):  # one ton at a time to a random agent that still wants more
        wanting = [i for i, a in enumerate(asked) if caught[i] < a]
        caught[wanting[int(rng.integers(len(wanting)))]] += 1
    return caught


def play(rules: CommonsRules, ask: Callable[[int, int, int], int | None], rng: np.random.Generator) -> Outcome:
    """Run the fishery: `ask(month, agent, stock)` is an agent's ask (None: an illegal answer, which catches
    nothing); the run ends after `rules.months` months or at a collapse."""
    outcome, stock = Outcome(rules), rules.capacity
    for m in range(rules.months):
        asked = tuple(ask(m, i, stock) for i in range(rules.agents))
        caught = tuple(allocate([a or 0 for a in asked], stock, rules.allocation, rng))
        left = stock - sum(caught)
        collapsed = left < rules.collapse_below
        following = 0 if collapsed else min(rules.capacity, 2 * left)
        outcome.months.append(Month(m, stock, asked, caught, left, collapsed, following))
        if collapsed:
            break
        stock = following
    return outcome


def figures(outcome: Outcome) -> dict[str, float | int | list[int]]:
    """Survival months, total and per-agent gain, efficiency, equality and over-usage."""
    rules, months = outcome.rules, outcome.months
    survival = next((m.month + 1 for m in months if m.collapsed), rules.months)
    gains = np.sum([m.caught for m in months], axis=0) if months else np.zeros(rules.agents)
    total = float(gains.sum())
    f0 = rules.capacity // 2
    efficiency = 1.0 - max(0.0, rules.months * f0 - total) / (rules.months * f0)
    pairs = float(np.abs(gains[:, None] - gains[None, :]).sum())
    equality = 1.0 - pairs / (2 * rules.agents * total) if total else 1.0
    over = [c > sustainable_catch(m.stock, rules.agents) for m in months for c in m.caught]
    return {
        "survival_months": survival,
        "total_gain": total,
        "gains": [int(g) for g in gains],
        "efficiency": efficiency,
        "equality": equality,
        "over_usage": float(np.mean(over)) if over else 0.0,
    }


ANSWER_MARKER = re.compile(r"Answer:|So, the answer is:|\*\*Answer\*\*:")  # where GovSim's reasoning stops


def after_answer(answer: str, stop: str | None = None) -> int | None:
    """The first whole number after the answer's first marker ("Answer:", "So, the answer is:" or "**Answer**:",
    GovSim's stop words), before `stop` if given; None when there is no marker or no number.

    >>> after_answer("Let me think. **Answer**: I will catch 10 tons, not 20", stop="tons")
    10
    >>> after_answer("Put the final answer after Answer:. ... Answer: 7 tons", stop="tons")
    7
    """
    marker = ANSWER_MARKER.search(answer)
    if marker is None:
        return None
    rest = answer[marker.end() :]
    if stop is not None:
        rest = rest.split(stop, 1)[0]
    number = re.search(r"\d+", rest)
    return int(number.group()) if number else None


def parse_harvest(answer: str) -> int | None:
    """The ask in an answer, read as GovSim's code reads it: the first whole number after the first "Answer:" (or
    its other stop words, `after_answer`) and before "tons"; None when there is none (GovSim read 0: here it is an
    illegal answer, recorded as such).

    >>> parse_harvest("Let me think... Answer: 12 tons")
    12
    >>> parse_harvest("**Answer:** 7")
    7
    >>> parse_harvest("So, the answer is: I would catch 10 tons")
    10
    >>> parse_harvest("I would catch 10 tons") is None
    True
    >>> parse_harvest("Answer: zero tons, then 5") is None
    True
    """
    return after_answer(answer, stop="tons")
