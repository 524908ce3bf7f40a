"""A run's LLM calls, one page at a time: filtered by run, epoch, agent, role and text, never all sent at once.

A transcript (`transcripts.jsonl`, one record per call: `sandbox.llm.record.CallRecord`) is read from disk a page
at a time. What is kept in memory is an index: where each call's line starts and ends, and the few short values
the filters compare (run, epoch, agent, role, call id, illegal), about 230 bytes a call (700 more with a game's
note), so a 200 MB transcript of 57,000 calls costs about 13 MB, not the 0.7 GB its parsed rows would. A page reads its calls' lines again by
their offsets. A transcript that grows (a run in progress) is indexed on from where the last read stopped. The
indexes of several transcripts are kept, the least recently read let go first, while their estimated size stays
under `max_bytes` (`sandbox view --transcript-memory-mb`, default `MEMORY_MB`).

A line that is not JSON (half-written, or corrupt) becomes a row that says so. Lines are split at `\\n` only, as
JSON Lines are (a `\\r` inside a binary line does not start a call; the run list counts the same way,
`count_lines`). What the game read from each answer (its parsed move, or that it held none: illegal) comes from
the notes beside the transcript (`sandbox.llm.moves`), read again when they change. A query returns the rows of
one page, the count that match, and the values each filter can take. A text search reads the matching calls from
disk (the last search's matches are kept, so paging through them does not search again).

>>> import tempfile, pathlib, json
>>> file = pathlib.Path(tempfile.mkdtemp()) / "transcripts.jsonl"
>>> _ = file.write_text("\\n".join(json.dumps({"role": r, "agent": a, "epoch": 0, "answer": t,
...     "messages": [{"role": "user", "content": "Offer?"}]}) for r, a, t in
...     [("user", "user-1", "I offer 3"), ("assistant", "assistant", "I offer 5"), ("user", "user-2", "No")]) + "\\n")
>>> page = Transcripts().query(file, role="user", text="I offer")
>>> page["matched"], page["total"], [row["agent"] for row in page["rows"]]
(1, 3, ['user-1'])
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from sandbox.llm.moves import notes_path, read_notes

__all__ = ["FILTERS", "MEMORY_MB", "PAGE", "Transcripts", "compact", "count_lines", "next_newline", "whole_lines"]

PAGE = 50  # rows a page holds by default
KEEP = 8  # transcripts indexed at once, at most
MEMORY_MB = 256  # the indexes' estimated size, at most (`sandbox view --transcript-memory-mb`)
MAX_PAGE = 500
FILTERS = ("run", "epoch", "agent", "role", "illegal")  # exact-match filters; `text` searches prompt and answer
_KEYS = ("run", "epoch", "agent", "role")  # read from each line when it is indexed
_CHUNK = 1 << 22  # bytes read at once while indexing
# What an index holds per call, measured with tracemalloc (`tests/test_viewer.py` checks it): two offsets, a tuple
# of four interned keys, a call id (its text counted apart) and the list slots; and per note of a game.
_PER_CALL = 200
_PER_NOTE = 700


_CALL_LINE = re.compile(rb"^[ \t\r\x0b\x0c]*[^ \t\r\x0b\x0c\n]", re.MULTILINE)  # a line with something on it


def count_lines(data: bytes) -> int:
    """The calls in `data` (whole lines of a transcript): lines split at `\\n`, blank ones left out; counted
    without copying a line.

    >>> count_lines(b'{"a": 1}\\n\\n{"b": 2}\\r{"c": 3}\\n \\n')
    2
    """
    return sum(1 for _ in _CALL_LINE.finditer(data))


def whole_lines(handle: BinaryIO, start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """The bytes of `handle` from `start` to `end` (the end of a line) a block of whole lines at a time, about
    `_CHUNK` each (a line longer than that whole): `(where the block starts, the block)`."""
    handle.seek(start)
    position = start
    while position < end:
        data = handle.read(min(_CHUNK, end - position))
        last = data.rfind(b"\n")
        if last < 0:  # one line longer than a chunk: read to its end
            data += handle.readline()
            last = len(data) - 1
        data = data[: last + 1]
        handle.seek(position + len(data))
        yield position, data
        position += len(data)


def next_newline(handle: BinaryIO, start: int, size: int) -> int:
    """Where the last `\\n` of `handle` between `start` and `size` ends (its offset + 1), or `start` when there is
    none: read a chunk at a time from the end, so a file with no newline costs one read of what is new."""
    end = size
    while end > start:
        begin = max(start, end - _CHUNK)
        handle.seek(begin)
        last = handle.read(end - begin).rfind(b"\n")
        if last >= 0:
            return begin + last + 1
        end = begin
    return start


def compact(index: int, record: Any) -> dict[str, Any]:
    """One call as the browser shows it: who, where, the prompt, the answer, the parsed move, the illegal flag,
    tokens and cache. `parsed` and `illegal` are read from the record's `extra` where its caller noted them."""
    if not isinstance(record, dict):
        return {
            "index": index,
            "role": None,
            "agent": None,
            "run": None,
            "epoch": None,
            "prompt": [],
            "answer": None,
            "error": "not a JSON object",
            "corrupt": True,
        }
    extra = record.get("extra") if isinstance(record.get("extra"), dict) else {}
    messages = record.get("messages") if isinstance(record.get("messages"), list) else []
    return {
        "index": index,
        "call_id": record.get("call_id"),
        "role": record.get("role"),
        "agent": record.get("agent"),
        "run": record.get("run"),
        "epoch": record.get("epoch"),
        "episode": record.get("episode"),
        "step": record.get("step"),
        "attempt": record.get("attempt"),
        "model": record.get("model"),
        "prompt": [
            {"role": str(m.get("role")), "content": str(m.get("content"))} for m in messages if isinstance(m, dict)
        ],
        "answer": record.get("answer"),
        "parsed": extra.get("parsed", extra.get("move")),
        "illegal": extra.get("illegal"),
        "error": record.get("error"),
        "input_tokens": record.get("input_tokens"),
        "output_tokens": record.get("output_tokens"),
        "cache_hit": record.get("cache_hit"),
        "prompt_cached_tokens": record.get("prompt_cached_tokens"),
        "latency_s": record.get("latency_s"),
        "corrupt": False,
    }


def _parse(line: bytes) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _row(index: int, line: bytes) -> dict[str, Any]:
    record = _parse(line)
    row = compact(index, record)
    if record is None:
        row["error"] = "a line that is not JSON (corrupt, or cut when the run was killed)"
    return row


def _text(row: dict[str, Any]) -> str:
    return " ".join([str(row.get("answer") or ""), *(m["content"] for m in row["prompt"])]).lower()


def _key(value: Any) -> str:
    """A value as a filter compares it: as JavaScript's `String` writes it (`true`, not Python's `True`)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _natural(value: str) -> tuple[Any, ...]:
    """Sort "user-10" after "user-9", and 10 after 9."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", value))


@dataclass
class _Index:
    """One transcript's index: each call's line (`starts`, `ends`), its filter keys and call id; its own lock."""

    inode: int
    mtime: int
    offset: int = 0  # bytes indexed (up to the end of the last whole line)
    scanned: int = 0  # bytes past `offset` known to hold no newline (a line being written, or a damaged file)
    starts: array = field(default_factory=lambda: array("q"))
    ends: array = field(default_factory=lambda: array("q"))
    keys: list[tuple[str | None, ...]] = field(default_factory=list)  # run, epoch, agent, role (as `_key` writes)
    call_ids: list[str | None] = field(default_factory=list)
    extra_illegal: list[bool | None] = field(default_factory=list)  # `extra.illegal` of the record itself
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes_signature: Any = None
    size: int = 0  # estimated bytes held by the calls' entries (`_PER_CALL`)
    search: tuple[Any, list[int]] | None = None  # the last text search: (question, matching calls)
    facets: dict[str, list[str]] | None = None  # each filter's values, until a call or a note is added
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def held(self) -> int:
        """The estimated bytes this index holds: its calls, its notes and its last search's matches."""
        search = len(self.search[1]) * 8 if self.search else 0
        return self.size + len(self.notes) * _PER_NOTE + search

    def illegal(self, i: int) -> bool | None:
        note = self.notes.get(self.call_ids[i] or "")
        return note["illegal"] if note is not None else self.extra_illegal[i]

    def add(self, start: int, line: bytes) -> None:
        parsed = _parse(line)
        record: dict[str, Any] = parsed if isinstance(parsed, dict) else {}
        keys = tuple(None if record.get(k) is None else sys.intern(_key(record.get(k))) for k in _KEYS)
        call_id = record.get("call_id")
        extra = record.get("extra")
        illegal = extra.get("illegal") if isinstance(extra, dict) else None
        self.starts.append(start)
        self.ends.append(start + len(line))
        self.keys.append(keys)
        self.call_ids.append(None if call_id is None else str(call_id))
        self.extra_illegal.append(illegal if isinstance(illegal, bool) else None)
        self.size += _PER_CALL + len(self.call_ids[-1] or "")
        self.search, self.facets = None, None

    def grow(self, handle: BinaryIO, size: int) -> None:
        """Index the whole lines `handle` holds past `offset`, up to `size`."""
        end = next_newline(handle, max(self.offset, self.scanned), size)
        if end <= max(self.offset, self.scanned):  # no newline in what is new: a line being written
            self.scanned = size
            return
        for position, data in whole_lines(handle, self.offset, end):
            start = 0
            while start < len(data):
                stop = data.index(b"\n", start)
                if data[start:stop].strip():
                    self.add(position + start, data[start:stop])
                start = stop + 1
        self.offset, self.scanned = end, size  # `end` follows the last newline: none from there to `size`


class Transcripts:
    """Transcript files indexed and read a page at a time (the viewer's server keeps one of these).

    `keep`: how many transcripts' indexes are kept at once; `max_bytes`: their estimated size, at most (the one
    being read is always kept, however large). Each transcript has its own lock: a long search in one does not
    hold up a page of another. A query reads from one open handle of the file, so a transcript replaced while it
    is read (a run that ends renames its transcript into place) is never read at the old one's offsets."""

    def __init__(self, keep: int = KEEP, max_bytes: int = MEMORY_MB << 20) -> None:
        self._files: dict[Path, _Index] = {}  # the most recently read last
        self._lock = threading.Lock()  # the dict only; each index has its own
        self.keep = keep
        self.max_bytes = max_bytes

    @property
    def held_bytes(self) -> int:
        """The estimated size of the indexes held now."""
        with self._lock:
            return sum(index.held for index in self._files.values())

    def _open(self, file: Path, handle: BinaryIO) -> _Index:
        """`file`'s index (open as `handle`), brought up to date, its lock taken: the caller releases it."""
        stat = os.fstat(handle.fileno())
        with self._lock:
            index = self._files.pop(file, None)
            if index is None or stat.st_ino != index.inode or stat.st_size < index.offset:
                index = _Index(inode=stat.st_ino, mtime=stat.st_mtime_ns)
            self._files[file] = index
        index.lock.acquire()
        try:
            if stat.st_size > index.offset:
                index.grow(handle, stat.st_size)
            index.mtime = stat.st_mtime_ns
            self._note(file, index)
        except BaseException:
            index.lock.release()
            raise
        with self._lock:
            while len(self._files) > 1 and (
                len(self._files) > self.keep or sum(i.held for i in self._files.values()) > self.max_bytes
            ):
                self._files.pop(next(iter(self._files)))  # the transcripts read longest ago are let go
        return index

    @staticmethod
    def _note(file: Path, index: _Index) -> None:
        """Read the games' notes (parsed move, illegal) again when they changed since the last read."""
        try:
            stat = notes_path(file).stat()
            signature = (stat.st_size, stat.st_mtime_ns)
        except OSError:
            signature = None
        if signature != index.notes_signature:
            index.notes = read_notes(file) if signature else {}
            index.notes_signature = signature
            index.search, index.facets = None, None

    @staticmethod
    def _lines(handle: BinaryIO, index: _Index, calls: Sequence[int]) -> Iterator[tuple[int, bytes]]:
        """The lines of `calls` (in the order given), read from `handle`."""
        for i in calls:
            handle.seek(index.starts[i])
            yield i, handle.read(index.ends[i] - index.starts[i])

    def _rows(self, handle: BinaryIO, index: _Index, calls: Sequence[int]) -> list[dict[str, Any]]:
        rows = []
        for i, line in self._lines(handle, index, calls):
            row = _row(i, line)
            note = index.notes.get(index.call_ids[i] or "")
            if note is not None:
                row["parsed"], row["illegal"] = note["parsed"], note["illegal"]
            rows.append(row)
        return rows

    def count(self, file: Path) -> int:
        """The calls in `file` now."""
        with file.open("rb") as handle:
            index = self._open(file, handle)
            try:
                return len(index.starts)
            finally:
                index.lock.release()

    def rows(self, file: Path, calls: Sequence[int] | None = None) -> list[dict[str, Any]]:
        """The calls numbered `calls` of `file` (default: every call; a report picks), read from disk."""
        with file.open("rb") as handle:
            index = self._open(file, handle)
            try:
                return self._rows(handle, index, range(len(index.starts)) if calls is None else calls)
            finally:
                index.lock.release()

    def query(
        self, file: Path, *, offset: int = 0, limit: int = PAGE, text: str = "", **filters: str | None
    ) -> dict[str, Any]:
        """One page of the calls that match: `filters` (run, epoch, agent, role, illegal) compared as text, `text`
        searched in the prompt and the answer (any case). Returns the page's rows, `matched`, `total` and each
        filter's values (`facets`)."""
        wanted = {k: str(v) for k, v in filters.items() if k in FILTERS and v not in (None, "")}
        needle = text.strip().lower()
        limit = max(1, min(int(limit), MAX_PAGE))
        offset = max(0, int(offset))
        with file.open("rb") as handle:
            index = self._open(file, handle)
            try:
                total = len(index.starts)
                where = [(FILTERS.index(k), v) for k, v in wanted.items() if k != "illegal"]
                illegal = wanted.get("illegal")
                matched = [
                    i
                    for i in range(total)
                    if all(index.keys[i][k] == v for k, v in where)
                    and (illegal is None or _key(index.illegal(i)) == illegal)
                ]
                if needle:
                    question = (needle, tuple(sorted(wanted.items())), total, index.notes_signature)
                    if index.search is None or index.search[0] != question:
                        found = [i for i, line in self._lines(handle, index, matched) if needle in _text(_row(i, line))]
                        index.search = (question, found)
                    matched = index.search[1]
                if index.facets is None:
                    index.facets = self._facets(index)
                rows = self._rows(handle, index, matched[offset : offset + limit])
                facets = index.facets
            finally:
                index.lock.release()
        return {
            "total": total,
            "matched": len(matched),
            "offset": offset,
            "limit": limit,
            "rows": rows,
            "facets": facets,
        }

    @staticmethod
    def _facets(index: _Index) -> dict[str, list[str]]:
        values: dict[str, set[str]] = {k: set() for k in FILTERS}
        for keys in set(index.keys):
            for k, value in zip(_KEYS, keys, strict=True):
                if value is not None:
                    values[k].add(value)
        values["illegal"] = {_key(v) for i in range(len(index.starts)) if (v := index.illegal(i)) is not None}
        return {k: sorted(v, key=_natural) for k, v in values.items()}
