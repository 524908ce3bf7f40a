"""Each call's parsed move, noted by the game that read the answer: the transcript browser's `parsed` and
`illegal` columns.

A call's record is written when its answer arrives, before any game reads it, so what the game made of the
answer is a note of its own: `note_move(call, parsed)` after parsing, with `parsed` None for an answer that
holds no legal move. The notes go to `<transcript>.parsed.jsonl` beside the transcript that the call's record
went to (the `TranscriptWriter` open in this context: a run's), one line per note; a resumed run notes its calls
again and the last note of a call id wins (`read_notes`), and `finalize_transcript` leaves that one line per call.
Without an open transcript a note is dropped.

>>> import tempfile, pathlib
>>> from sandbox.llm.contracts import CallInfo
>>> from sandbox.llm.transcript import TranscriptWriter
>>> writer = TranscriptWriter(pathlib.Path(tempfile.mkdtemp()) / "transcripts.jsonl")
>>> note_move(CallInfo(agent="user-1", step="propose"), {"proposer": 6, "responder": 4})
>>> note_move(CallInfo(agent="user-2", step="respond"), None)
>>> writer.close()
>>> notes = read_notes(writer.path)
>>> notes["None/None/None/propose/user-1/0"], notes["None/None/None/respond/user-2/0"]
({'parsed': {'proposer': 6, 'responder': 4}, 'illegal': False}, {'parsed': None, 'illegal': True})
"""

from __future__ import annotations

import dataclasses
import enum
import json
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import orjson

from sandbox.llm.contracts import CallInfo

__all__ = ["NOTES_SUFFIX", "load_line", "note_move", "notes_path", "read_notes"]

NOTES_SUFFIX = ".parsed.jsonl"
# The transcript writer that this context's calls are recorded by (set when a writer opens, cleared when it closes).
OPEN: ContextVar[Any] = ContextVar("sandbox_open_transcript", default=None)


def notes_path(transcript: Path | str) -> Path:
    """Where the notes of `transcript`'s calls are: `transcripts.jsonl` -> `transcripts.parsed.jsonl`."""
    transcript = Path(transcript)
    return transcript.with_name(transcript.stem + NOTES_SUFFIX)


def plain(value: Any) -> Any:
    """A parsed move as JSON: a dataclass as its fields, an enum as its value, a tuple as a list."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: plain(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, enum.Enum):
        return plain(value.value)
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def note_move(call: CallInfo, parsed: Any, *, illegal: bool | None = None) -> None:
    """Note what the game read from `call`'s answer: `parsed` (None: no legal move; `illegal` defaults to that)."""
    writer = OPEN.get()
    if writer is not None:
        writer.note(call.call_id(), plain(parsed), parsed is None if illegal is None else illegal)


def load_line(line: str | bytes) -> Any:
    """One JSON line of a transcript or its notes: orjson (4x json), or json where orjson refuses it (a NaN or an
    infinity that an older writer wrote)."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def read_notes(transcript: Path | str) -> dict[str, dict[str, Any]]:
    """Every call id's last note (`{"parsed", "illegal"}`), from the notes beside `transcript`; {} when none."""
    path = notes_path(transcript)
    notes: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return notes
    for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):  # not splitlines: U+2028 is text
        try:
            record = load_line(line)
            notes[str(record["call_id"])] = {"parsed": record.get("parsed"), "illegal": record.get("illegal")}
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line (a killed process)
    return notes
