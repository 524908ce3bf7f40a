"""A GovSim fisher's memories: dated, expiring as the authors' code's do, some always shown.

Each memory (`Memory`) has a date and a text, and is shown in prompts through month
`until` (a month's events: that month; notes and agreed limits:
`KEPT_MONTHS` more, the code's 63 days), and, with `always`, shown whatever
the prompt's size (agreed limits, the universalization hint).
"""

from __future__ import annotations

import calendar

from sandbox.population.games.commons.records import Fisher, Memory

__all__ = ["KEPT_MONTHS", "date_of", "remember", "sentence", "shown"]


def date_of(month: int, chat: bool = False) -> str:
    """The date of a month's harvest, its first day (the code's runs start on 2024-01-01), or with `chat` of its
    chat and notes, the day before its last day (the code's restaurant and home phases)."""
    year, number = 2024 + month // 12, month % 12 + 1
    return f"{year}-{number:02d}-{calendar.monthrange(year, number)[1] - 1 if chat else 1:02d}"


KEPT_MONTHS = 2  # the code's memories expire after 63 days: a note or limit is shown for about two months more


def remember(agent: Fisher, date: str, text: str, until: int, always: bool = False) -> None:
    """Store a memory, shown through month `until` (a month's events: that month; notes and limits: two more)."""
    agent["memories"].append(Memory(date=date, text=text, until=until, always=always))


def shown(agent: Fisher, size: int, g: int, hint: Memory | None) -> list[Memory]:
    """The memories a prompt of month `g` shows, by date: those not expired, the always-included ones (agreed limits,
    the universalization hint) and the latest of the others, `size` in all."""
    live = [m for m in agent["memories"] if m["until"] >= g] + ([hint] if hint else [])
    always = [m for m in live if m["always"]]
    others = [m for m in live if not m["always"]][-max(0, size - len(always)) :] if size > len(always) else []
    return sorted([*always, *others], key=lambda m: m["date"])


def sentence(text: str) -> str:
    """The code's cut of a note or summary: up to its first "." (kept)."""
    head, dot, _ = text.strip().partition(".")
    return (head.strip() + dot) if head.strip() else ""
