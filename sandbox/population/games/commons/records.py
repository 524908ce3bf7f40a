"""The commons game's records: its state between the engine's steps (the lake and its fishers, their asks, the
harvest, the restaurant), each a plain `TypedDict` the checkpoint holds, and its tables' rows, from which the tables
take their headers (`COLUMNS`)."""

from __future__ import annotations

from typing_extensions import TypedDict

__all__ = [
    "COLUMNS",
    "GENERATIONS",
    "NOTES",
    "POPULATION",
    "TALK",
    "Ask",
    "Asked",
    "Fisher",
    "FisherRow",
    "GenerationRow",
    "Harvest",
    "Lake",
    "Memory",
    "MonthRow",
    "NoteRow",
    "Restaurant",
    "TalkRow",
]

POPULATION, GENERATIONS, TALK, NOTES = "population.csv", "generations.csv", "talk.csv", "notes.csv"


class Memory(TypedDict):
    """A fisher's memory: its date, its text, the last month it is shown in, and whether it is shown whatever the
    prompt's size (`sandbox.population.games.commons.memory`)."""

    date: str
    text: str
    until: int
    always: bool


class Fisher(TypedDict):
    """A fisher: its name, its fixed catch (None: an LLM fisher), its memories and its gain so far."""

    name: str
    fixed: int | None
    memories: list[Memory]
    gain: int


class Lake(TypedDict):
    """The population: the fishers and the lake's stock at the month's start."""

    agents: list[Fisher]
    stock: int


class Ask(TypedDict):
    """A fisher's ask: the tons (None: an illegal answer) and the calls it took (0: a fixed fisher's)."""

    tons: int | None
    attempts: int


class Asked(TypedDict):
    """What the month's play gave: the fishers (remembering the stock) and each one's ask."""

    agents: list[Fisher]
    asked: list[Ask]


class Harvest(TypedDict):
    """The harvest: the fishers (with their gains and their memories of the catch) and each one's catch."""

    agents: list[Fisher]
    caught: list[int]


class TalkRow(TypedDict):
    """A row of talk.csv: an utterance at the restaurant (the Mayor's report first, its other cells ""), whether it
    ends the chat ("" unreadable) and whether that was read, the next speaker ("" at the end) and whether it was
    read."""

    generation: int
    step: int
    speaker: str
    utterance: str
    ended: bool | str
    ended_read: bool | str
    next: str
    next_read: bool | str


class NoteRow(TypedDict):
    """A row of notes.csv: the chat's summary or agreed limit (no agent: "") or a fisher's note, by kind."""

    generation: int
    agent: int | str
    name: str
    kind: str
    text: str | int


class Restaurant(TypedDict):
    """The month's restaurant: the fishers (with what they remember of it), the talk's and the notes' rows and the
    agreed limit (None: none)."""

    agents: list[Fisher]
    talk: list[TalkRow]
    notes: list[NoteRow]
    limit: int | None


class FisherRow(TypedDict):
    """A row of population.csv: a fisher in a month, the stock, its ask ("" when illegal), whether it was legal, the
    calls it took, its catch and its gain so far."""

    generation: int
    agent: int
    name: str
    fixed: bool
    stock: int
    asked: int | str
    valid: bool
    attempts: int
    caught: int
    gain: int


class MonthRow(TypedDict):
    """A month's figures, the columns of generations.csv but its seconds: the stock, the asks, the catches, what was
    left, whether the lake collapsed, the next stock, the sustainable catch, the share of fishers over it, the share
    of illegal asks, the agreed limit ("" none) and the chat's length."""

    generation: int
    stock: int
    asked: int
    caught: int
    left: int
    collapsed: bool
    next_stock: int
    sustainable: int
    over_usage: float
    illegal_rate: float
    agreed_limit: int | str
    talk_steps: int


class GenerationRow(MonthRow):
    """A row of generations.csv: the month's figures and the seconds so far."""

    seconds: float


COLUMNS = {
    POPULATION: tuple(FisherRow.__annotations__),
    GENERATIONS: tuple(GenerationRow.__annotations__),
    TALK: tuple(TalkRow.__annotations__),
    NOTES: tuple(NoteRow.__annotations__),
}
