"""GovSim's restaurant: the Mayor's report, the fishers' chat, its summary and agreed limit, and the notes.

The chat is played as the authors' code plays it (`giorgiopiatti/GovSim`):
the first LLM fisher speaks, then whoever the speaker names, until a
speaker concludes or `game.talk_steps` utterances (the report included)
were made; an unreadable conclusion ends the chat and an unreadable next
speaker is the first fisher. `parse_utterance` and `parse_limit` read the
answers as the code reads them.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from sandbox.population.games.commons.memory import KEPT_MONTHS, date_of, remember, shown
from sandbox.population.games.commons.records import Fisher, Memory, NoteRow, TalkRow
from sandbox.population.games.commons.rules import after_answer
from sandbox.population.games.commons.spec import CommonsSpec
from sandbox.population.settings import spec_of

if TYPE_CHECKING:
    from sandbox.population.settings import PopulationScenarioSettings

__all__ = ["MAYOR", "Diners", "comma_and", "parse_limit", "parse_utterance", "restaurant"]

MAYOR = "Mayor"
_CONCLUSION = re.compile(r"conversation\s+conclusion\s+by\s+me\s*:\s*\**\s*(yes|no)?", re.IGNORECASE)
_NEXT = re.compile(r"next\s+speaker\s*:\s*\**\s*(.*)", re.IGNORECASE)


def parse_utterance(answer: str, names: Sequence[str]) -> tuple[str, bool | None, str | None]:
    """GovSim's chat answer: the utterance (after "Response:", up to "Conversation conclusion by me:"), whether it
    ends the chat (yes or no; None: unreadable) and the next speaker, one of `names` (None: unreadable or none).

    >>> parse_utterance("Response: Let's take 10 each.\\nConversation conclusion by me: no\\nNext speaker: Kate",
    ...                 ["Kate", "Jack"])
    ("Let's take 10 each.", False, 'Kate')
    >>> parse_utterance('"Agreed."\\nConversation conclusion by me: yes', ["Kate"])
    ('Agreed.', True, None)
    >>> parse_utterance("I think we should fish less", ["Kate"])
    ('I think we should fish less', None, None)
    """
    text = re.sub(r"^\s*\**\s*response\s*:\s*\**", "", answer, flags=re.IGNORECASE)
    conclusion = _CONCLUSION.search(text)
    cut = conclusion.start() if conclusion else len(text)
    following = _NEXT.search(text)
    if following and following.start() < cut:
        cut = following.start()
    utterance = text[:cut].strip().rstrip("*").strip()
    if len(utterance) > 1 and utterance[0] == utterance[-1] == '"':
        utterance = utterance[1:-1].strip()
    ended = None if not conclusion or not conclusion.group(1) else conclusion.group(1).lower() == "yes"
    named = following.group(1) if following else ""
    speaker = next(
        (
            n
            for n in sorted(names, key=len, reverse=True)  # "Jo Ann" before "Jo"
            if re.match(rf"{re.escape(n)}\b", named.strip(" *\"'[]"), re.IGNORECASE)
        ),
        None,
    )
    return utterance, ended, speaker


def parse_limit(answer: str) -> int | None:
    """The agreed limit in an answer, read as the code reads it: the first whole number after the first "Answer:"
    (or GovSim's other stop words), on that line; None for N/A or none (the code read -1: no limit).

    >>> parse_limit("They agreed on 10 tons each. Answer: 10 tons")
    10
    >>> parse_limit("**Answer**: The agreed limit is 12 tons per person.")
    12
    >>> parse_limit("No number was agreed. Answer: N/A\\nThe Mayor said 10 tons.")
    >>> parse_limit("10 tons")
    """
    return after_answer(answer, stop="\n")


def comma_and(names: Sequence[str]) -> str:
    """The code's list_to_comma_string: "A, B, and C"."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f", and {names[-1]}"


class Diners(Protocol):
    """The restaurant's calls (`sandbox.population.games.commons.fishers.Fishers`'s): an utterance (the text, whether
    it ends the chat, the next speaker), the chat's summary, its agreed limit (and the answer), a fisher's two notes."""

    async def utter(
        self, agent: int, memories: list[Memory], conversation: list[tuple[str, str]], speakers: list[str], g: int
    ) -> tuple[str, bool | None, str | None]: ...

    async def summarize(self, conversation: list[tuple[str, str]], g: int) -> str: ...

    async def limit(self, conversation: list[tuple[str, str]], g: int) -> tuple[int | None, str]: ...

    async def notes(self, agent: int, conversation: list[tuple[str, str]], g: int) -> tuple[str, str]: ...


async def restaurant(
    fishers: Diners,
    scenario: PopulationScenarioSettings,
    agents: list[Fisher],
    llm: list[int],
    caught: Sequence[int],
    g: int,
    hint: Memory | None,
) -> tuple[list[TalkRow], list[NoteRow], int | None]:
    """The month's chat, its summary and limit, and the fishers' notes: talk rows, note rows, the agreed limit.
    `fishers` makes the calls; `llm` are the LLM fishers."""
    game, date = spec_of(scenario, CommonsSpec), date_of(g, chat=True)
    report = "".join(f"{a['name']} caught {c} tons of fish. " for a, c in zip(agents, caught))
    conversation = [(MAYOR, f"Ladies and gentlemen, let me give you the monthly fishing report. {report}".strip())]
    talk = [
        TalkRow(
            generation=g,
            step=0,
            speaker=MAYOR,
            utterance=conversation[0][1],
            ended="",
            ended_read="",
            next="",
            next_read="",
        )
    ]
    speakers = [agents[i]["name"] for i in llm]
    speaker = llm[0]
    while len(conversation) < game.talk_steps:
        utterance, ended, following = await fishers.utter(
            speaker, shown(agents[speaker], game.memory, g, hint), conversation, speakers, g
        )
        conversation.append((agents[speaker]["name"], utterance))
        stop = ended is None or ended  # the code: an unreadable conclusion ends the chat
        # the code: the next speaker is any fisher in the chat, the speaker included; unreadable: the first of them
        chosen = next((i for i in llm if agents[i]["name"] == following), llm[0])
        talk.append(
            TalkRow(
                generation=g,
                step=len(conversation) - 1,
                speaker=agents[speaker]["name"],
                utterance=utterance,
                ended="" if ended is None else ended,
                ended_read=ended is not None,
                next="" if stop else agents[chosen]["name"],
                next_read=stop or following is not None,
            )
        )
        if stop:
            break
        speaker = chosen
    summary = await fishers.summarize(conversation, g)
    limit, _ = await fishers.limit(conversation, g)
    notes = [NoteRow(generation=g, agent="", name="", kind="summary", text=summary)]
    for a in agents:  # the summary is kept as the chat's record, which the code's retrieval never shows
        if limit is not None:
            remember(
                a,
                date,
                f"The community agreed on a maximum limit of {limit} tons of fish per person.",
                g + KEPT_MONTHS,
                always=True,
            )
    if limit is not None:
        notes.append(NoteRow(generation=g, agent="", name="", kind="limit", text=limit))
    if game.notes:
        written = await asyncio.gather(*(fishers.notes(i, conversation, g) for i in llm))
        for i, (planning, interesting) in zip(llm, written):
            for kind, text in (("planning", planning), ("interesting", interesting)):
                remember(agents[i], date, text, g + KEPT_MONTHS)
                notes.append(NoteRow(generation=g, agent=i, name=agents[i]["name"], kind=kind, text=text))
    return talk, notes, limit
