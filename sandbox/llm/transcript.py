"""The transcript writer: one JSON line per LLM call, appended as calls finish.

A resumed run appends the calls it makes again, and notes their parsed moves
again (`sandbox.llm.moves`); `finalize_transcript` keeps the last record of
each call id and sorts the file into run order, and keeps the last note of
each call it holds in the same order, so an interrupted-then-resumed run ends
with the same transcript and notes as one that was never interrupted.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from sandbox.llm import moves
from sandbox.llm.record import CallRecord


def end_line(path: Path) -> None:
    """End a file's torn last line (a killed writer's) with a newline, so that what is appended next starts a line
    of its own rather than being glued to it (and dropped with it)."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(-1, 2)
        if handle.read(1) != b"\n":
            handle.write(b"\n")


def _dumps(record: dict[str, Any]) -> str:
    """A note's JSON line: orjson, or json for what orjson cannot write (an int beyond 64 bits)."""
    try:
        return orjson.dumps(record).decode()
    except orjson.JSONEncodeError:
        return json.dumps(record, ensure_ascii=False)


class TranscriptWriter:
    """Appends call records to a JSONL file, and the games' notes of each call's parsed move beside it
    (`sandbox.llm.moves`: this writer is the one `note_move` writes to in the context that opened it)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        end_line(self.path)
        end_line(moves.notes_path(self.path))
        self._file = self.path.open("a", encoding="utf-8")
        self._notes: Any = None
        self._token = moves.OPEN.set(self)  # the writer open before this one comes back when this one closes

    def note(self, call_id: str, parsed: Any, illegal: bool) -> None:
        """Append a note of what a game read from the call `call_id`'s answer."""
        line = _dumps({"call_id": call_id, "parsed": parsed, "illegal": illegal})
        with self._lock:
            if self._file.closed:
                return
            if self._notes is None:
                self._notes = moves.notes_path(self.path).open("a", encoding="utf-8")
            self._notes.write(line + "\n")
            self._notes.flush()

    def record(self, call: CallRecord) -> None:
        line = orjson.dumps(call.to_dict()).decode()  # a call's line, written once a call: orjson, not json (4x)
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()
            if self._notes is not None:
                self._notes.close()
        if moves.OPEN.get() is self:
            try:
                moves.OPEN.reset(self._token)
            except ValueError:  # closed in another context than it opened in
                moves.OPEN.set(None)


def _order(record: dict[str, Any]) -> tuple:
    def num(value: Any) -> int:
        return -1 if value is None else int(value)

    return (num(record.get("run")), num(record.get("epoch")), str(record.get("episode")), record["call_id"])


def iter_transcript(path: str | Path) -> Iterator[dict[str, Any]]:
    """A transcript's records one at a time (a table of them need not hold them all); a torn last line (a killed
    process) is skipped."""
    with Path(path).open("rb") as handle:
        for line in handle:
            try:
                yield moves.load_line(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue


def read_transcript(path: str | Path) -> list[dict[str, Any]]:
    """Read a transcript; a torn last line (a killed process) is skipped."""
    return list(iter_transcript(path))


def _rewrite(path: Path, records: list[dict[str, Any]]) -> None:
    """Replace `path` with one JSON line per record, through a temporary file (a kill leaves the old file)."""
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(_dumps(record) + "\n")
    tmp.replace(path)


def finalize_transcript(path: str | Path) -> list[dict[str, Any]]:
    """De-duplicate by call id (the last record wins), drop failed calls that were redone, sort, rewrite; then
    the notes beside it: the last note of each call the transcript holds, one line each, in its order. The records,
    read back (`compact_transcript` does the same work and returns only their number)."""
    compact_transcript(path)
    return read_transcript(path) if Path(path).exists() else []


def compact_transcript(path: str | Path) -> int:
    """`finalize_transcript` without reading the records into memory: one pass keeps each call id's sort key and
    the place of its last line in the file, a second copies those lines in order. The number of calls kept.

    A population of 10,000 LLM agents writes 20,000 calls a generation; held as dicts they took hundreds of MB."""
    path = Path(path)
    if not path.exists():
        return 0
    latest: dict[str, tuple[tuple, int, int]] = {}
    with path.open("rb") as handle:
        offset = 0
        for line in handle:
            try:
                record = moves.load_line(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                record = None  # a torn last line (a killed process)
            if isinstance(record, dict) and "call_id" in record:
                latest[record["call_id"]] = (_order(record), offset, len(line))
            offset += len(line)
    places = sorted(latest.values(), key=lambda place: place[0])
    tmp = path.with_suffix(".tmp")
    with path.open("rb") as source, tmp.open("wb") as handle:
        for _, start, size in places:
            source.seek(start)
            handle.write(source.read(size).rstrip(b"\n") + b"\n")
    tmp.replace(path)
    notes_path = moves.notes_path(path)
    if notes_path.is_file():
        notes = moves.read_notes(path)
        order = sorted(latest, key=lambda call_id: latest[call_id][0])
        _rewrite(notes_path, [{"call_id": c, **notes[c]} for c in order if c in notes])
    return len(places)
