"""Dialogues labelled by hand: what the players really agreed, for measuring a reward model on real dialogues.

The paper's Table 8 (`sandbox reward-model`) scores templated dialogues; on
the embedded model the templates are read perfectly while the model's own
dialogues are misread (players who copy each other, proposals read as
agreements). A labelled set holds the model's own dialogues with a person's
reading of what was agreed, one JSON object per line:

    {"domain": "meeting", "source": "dialogue-meeting, dialogue 3", "length": 4,
     "setup": {"players": ["Alice", "Bob"], "private": [{...}, {...}], "public": {}, "data": {...}},
     "messages": [{"speaker": 0, "text": "..."}, ...],
     "agreed": "Friday"}

`agreed` is the outcome as the domain's `outcome` reward model names it (a
day; "Alice gives 1 apple and gets 2 kiwi"), or null for no agreement;
`labels` may keep each labeller's own reading; `length`, where given, is the
number of messages. `sandbox agreement` writes
its dialogues in this shape with `agreed` null (`agreement_prefixes.jsonl`),
ready to be labelled; `sandbox reward-model FILE --labelled SET` measures a
reward model against a labelled set.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from sandbox.base.errors import ScenarioError
from sandbox.core.run_dir import atomic_write_text
from sandbox.rules.dialogue import ANY, Message, Setup

__all__ = ["LabelledDialogue", "load_labelled", "parse_labelled", "read_labelled_text", "write_labelled"]


class _Setup(BaseModel):
    model_config = ConfigDict(extra="forbid")

    players: list[str] = Field(min_length=2)
    private: list[dict[str, str]]
    public: dict[str, Any] = {}
    data: dict[str, Any] = {}


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")

    speaker: int = Field(ge=0)
    text: str


class LabelledDialogue(BaseModel):
    """One dialogue (or the first `length` messages of one) and what was agreed in it."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    source: str = ""
    length: int | None = None
    setup: _Setup
    messages: list[_Message] = Field(min_length=1)
    agreed: str | None = None
    labels: dict[str, str | None] = {}
    _line: int = PrivateAttr(0)  # the line of the file it was read from (0: not read from a file)

    @field_validator("agreed")
    @classmethod
    def _agreed(cls, value: str | None) -> str | None:
        if value is not None and value.strip().lower() in ("", "none"):
            raise ValueError(f"{value!r}: write null for no agreement")
        return value

    @model_validator(mode="after")
    def _shape(self) -> LabelledDialogue:
        players = len(self.setup.players)
        if len(self.setup.private) != players or any(m.speaker >= players for m in self.messages):
            raise ValueError(f"{players} players, but the private information or a speaker does not match")
        if self.length is not None and self.length != len(self.messages):
            raise ValueError(f"length {self.length}, but {len(self.messages)} messages")
        return self

    @property
    def line(self) -> int:
        return self._line

    def game_setup(self) -> Setup:
        s = self.setup
        return Setup(tuple(s.players), tuple(s.private), dict(s.public), dict(s.data))

    def dialogue(self) -> tuple[Message, ...]:
        return tuple(Message(m.speaker, ANY, m.text) for m in self.messages)

    @classmethod
    def of(
        cls, domain: str, setup: Setup, dialogue: Iterable[Message], *, source: str = "", agreed: str | None = None
    ) -> LabelledDialogue:
        messages = [_Message(speaker=m.speaker, text=m.text) for m in dialogue]
        return cls(
            domain=domain,
            source=source,
            length=len(messages),
            agreed=agreed,
            messages=messages,
            setup=_Setup(
                players=list(setup.players),
                private=[dict(p) for p in setup.private],
                public=dict(setup.public),
                data=dict(setup.data),
            ),
        )


def read_labelled_text(path: Path | str) -> str:
    """A labelled set's text; a file that cannot be read is a ScenarioError naming it."""
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise ScenarioError(str(path), [("", f"cannot read the labelled set: {error}")]) from None


def load_labelled(path: Path | str, *, domain: str | None = None) -> list[LabelledDialogue]:
    """Read a labelled set; see `parse_labelled`."""
    return parse_labelled(read_labelled_text(path), str(path), domain=domain)


def parse_labelled(text: str, source: str, *, domain: str | None = None) -> list[LabelledDialogue]:
    """The labelled dialogues of `text` (JSON lines; blank lines skipped), each knowing its line; a line that is
    not a labelled dialogue (or of another domain than `domain`) is a ScenarioError naming `source`, the line
    and the field."""
    out: list[LabelledDialogue] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = LabelledDialogue.model_validate(json.loads(line))
        except json.JSONDecodeError as error:
            raise ScenarioError(source, [(f"line {number}", f"not JSON: {error.msg}")]) from None
        except ValidationError as error:
            raise ScenarioError(
                source,
                [(f"line {number}: {'.'.join(map(str, e['loc'])) or 'dialogue'}", e["msg"]) for e in error.errors()],
            ) from None
        if domain is not None and item.domain != domain:
            problem = f"{item.domain!r}, but the scenario's domain is {domain!r}"
            raise ScenarioError(source, [(f"line {number}: domain", problem)])
        item._line = number
        out.append(item)
    if not out:
        raise ScenarioError(source, [("", "the labelled set holds no dialogue")])
    return out


def write_labelled(items: Iterable[LabelledDialogue], path: Path | str) -> None:
    """One JSON object per line, fields in a fixed order."""
    text = "".join(json.dumps(item.model_dump(exclude_defaults=False), ensure_ascii=False) + "\n" for item in items)
    atomic_write_text(Path(path), text)
