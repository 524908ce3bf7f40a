"""A run's LLM calls, one page at a time: filtered by run, epoch, agent, role and text, never all sent at once.

A transcript (`transcripts.jsonl`, one record per call: `sandbox.llm.record.CallRecord`) is read from disk a page
at a time. What is kept in memory is an index: where each call's line starts and ends, and the few short values
the filters compare (run, epoch, agent, role, call id, illegal), about 200 bytes a call, so a 200 MB transcript
of 65,000 calls costs about 15 MB, not the 0.7 GB its parsed rows would. A page reads its calls' lines again by
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
import re
import threading
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.llm.moves import notes_path, read_notes

__all__ = ["FILTERS", "MEMORY_MB", "PAGE", "Transcripts", "compact", "count_lines"]

PAGE = 50  # rows a page holds by default
KEEP = 8  # transcripts indexed at once, at most
MEMORY_MB = 256  # the indexes' estimated size, at most (`sandbox view --transcript-memory-mb`)
MAX_PAGE = 500
FILTERS = ("run", "epoch", "agent", "role", "illegal")  # exact-match filters; `text` searches prompt and answer
_KEYS = ("run", "epoch", "agent", "role")  # read from each line when it is indexed
_CHUNK = 1 << 22  # bytes read at once while indexing
_PER_CALL = 120  # the bytes an index holds per call beyond its keys' text (offsets, tuples, list slots)


def count_lines(data: bytes) -> int:
    """The calls in `data` (whole lines of a transcript): lines split at `\\n`, blank ones left out.

    >>> count_lines(b'{"a": 1}\\n\\n{"b": 2}\\r{"c": 3}\\n')
    2
    """
    return sum(1 for line in data.split(b"\n")[:-1] if line.strip())


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
    """One transcript's index: each call's line (`starts`, `ends`), its filter keys and call id."""

    inode: int
    offset: int = 0  # bytes indexed (up to the end of the last whole line)
    starts: array = field(default_factory=lambda: array("q"))
    ends: array = field(default_factory=lambda: array("q"))
    keys: list[tuple[str | None, ...]] = field(default_factory=list)  # run, epoch, agent, role (as `_key` writes)
    call_ids: list[str | None] = field(default_factory=list)
    extra_illegal: list[bool | None] = field(default_factory=list)  # `extra.illegal` of the record itself
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes_signature: Any = None
    size: int = 0  # estimated bytes held
    search: tuple[Any, list[int]] | None = None  # the last text search: (question, matching calls)

    def illegal(self, i: int) -> bool | None:
        note = self.notes.get(self.call_ids[i] or "")
        return note["illegal"] if note is not None else self.extra_illegal[i]

    def add(self, start: int, line: bytes) -> None:
        parsed = _parse(line)
        record: dict[str, Any] = parsed if isinstance(parsed, dict) else {}
        keys = tuple(None if record.get(k) is None else _key(record.get(k)) for k in _KEYS)
        call_id = record.get("call_id")
        extra = record.get("extra")
        illegal = extra.get("illegal") if isinstance(extra, dict) else None
        self.starts.append(start)
        self.ends.append(start + len(line))
        self.keys.append(keys)
        self.call_ids.append(None if call_id is None else str(call_id))
        self.extra_illegal.append(illegal if isinstance(illegal, bool) else None)
        self.size += _PER_CALL + sum(len(k) for k in keys if k) + len(self.call_ids[-1] or "")
        self.search = None


class Transcripts:
    """Transcript files indexed and read a page at a time (the viewer's server keeps one of these).

    `keep`: how many transcripts' indexes are kept at once; `max_bytes`: their estimated size, at most (the one
    being read is always kept, however large)."""

    def __init__(self, keep: int = KEEP, max_bytes: int = MEMORY_MB << 20) -> None:
        self._files: dict[Path, _Index] = {}  # the most recently read last
        self._lock = threading.Lock()
        self.keep = keep
        self.max_bytes = max_bytes

    @property
    def held_bytes(self) -> int:
        """The estimated size of the indexes held now."""
        return sum(index.size for index in self._files.values())

    def _index(self, file: Path) -> _Index:
        """`file`'s index, read on from the last read when the file grew; the caller holds the lock."""
        stat = file.stat()
        index = self._files.pop(file, None)
        if index is None or stat.st_size < index.offset or stat.st_ino != index.inode:
            index = _Index(inode=stat.st_ino)
        if stat.st_size > index.offset:
            with file.open("rb") as handle:
                handle.seek(index.offset)
                position, carry = index.offset, b""
                while position + len(carry) < stat.st_size:
                    chunk = handle.read(min(_CHUNK, stat.st_size - position - len(carry)))
                    if not chunk:
                        break
                    data = carry + chunk
                    end = data.rfind(b"\n") + 1
                    start = 0
                    while start < end:
                        stop = data.index(b"\n", start, end)
                        if data[start:stop].strip():
                            index.add(position + start, data[start:stop])
                        start = stop + 1
                    position, carry = position + end, data[end:]
            index.offset = position  # a last line without its newline is being written: later
        self._note(file, index)
        self._files[file] = index
        while len(self._files) > 1 and (
            len(self._files) > self.keep or sum(i.size for i in self._files.values()) > self.max_bytes
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
            index.search = None

    def _lines(self, file: Path, index: _Index, calls: Sequence[int]) -> Iterator[tuple[int, bytes]]:
        """The lines of `calls` (in the order given), read from disk."""
        with file.open("rb") as handle:
            for i in calls:
                handle.seek(index.starts[i])
                yield i, handle.read(index.ends[i] - index.starts[i])

    def _rows(self, file: Path, index: _Index, calls: Sequence[int]) -> list[dict[str, Any]]:
        rows = []
        for i, line in self._lines(file, index, calls):
            row = _row(i, line)
            note = index.notes.get(index.call_ids[i] or "")
            if note is not None:
                row["parsed"], row["illegal"] = note["parsed"], note["illegal"]
            rows.append(row)
        return rows

    def count(self, file: Path) -> int:
        """The calls in `file` now."""
        with self._lock:
            return len(self._index(file).starts)

    def rows(self, file: Path, calls: Sequence[int] | None = None) -> list[dict[str, Any]]:
        """The calls numbered `calls` of `file` (default: every call; a report picks), read from disk."""
        with self._lock:
            index = self._index(file)
            return self._rows(file, index, range(len(index.starts)) if calls is None else calls)

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
        with self._lock:
            index = self._index(file)
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
                    found = [i for i, line in self._lines(file, index, matched) if needle in _text(_row(i, line))]
                    index.search = (question, found)
                matched = index.search[1]
            facets: dict[str, set[str]] = {k: set() for k in FILTERS}
            for keys in index.keys:
                for k, value in zip(_KEYS, keys, strict=True):
                    if value is not None:
                        facets[k].add(value)
            facets["illegal"] = {_key(v) for i in range(total) if (v := index.illegal(i)) is not None}
            rows = self._rows(file, index, matched[offset : offset + limit])
        return {
            "total": total,
            "matched": len(matched),
            "offset": offset,
            "limit": limit,
            "rows": rows,
            "facets": {k: sorted(v, key=_natural) for k, v in facets.items()},
        }
