"""A run's LLM calls, one page at a time: filtered by run, epoch, agent, role and text, never all sent at once.

A transcript (`transcripts.jsonl`, one record per call: `sandbox.llm.record.CallRecord`) is read once into
compact rows and kept while its size and time stay the same; a transcript that grows (a run in progress) is read
on from where the last read stopped. A line that is not JSON (half-written, or corrupt) becomes a row that says
so. What the game read from each answer (its parsed move, or that it held none: illegal) comes from the notes
beside the transcript (`sandbox.llm.moves`), read again when they change. A query returns the rows of one page,
the count that match, and the values each filter can take.

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
import threading
from pathlib import Path
from typing import Any

from sandbox.llm.moves import notes_path, read_notes

__all__ = ["FILTERS", "PAGE", "Transcripts", "compact"]

PAGE = 50  # rows a page holds by default
KEEP = 8  # transcripts kept in memory at once
MAX_PAGE = 500
FILTERS = ("run", "epoch", "agent", "role", "illegal")  # exact-match filters; `text` searches prompt and answer


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


def _text(row: dict[str, Any]) -> str:
    return " ".join([str(row.get("answer") or ""), *(m["content"] for m in row["prompt"])]).lower()


class Transcripts:
    """Transcript files read into rows and kept between queries (the viewer's server keeps one)."""

    def __init__(self, keep: int = KEEP) -> None:
        self._files: dict[Path, dict[str, Any]] = {}  # the most recently read last
        self._lock = threading.Lock()
        self.keep = keep

    def rows(self, file: Path) -> list[dict[str, Any]]:
        """Every call of `file`, read on from the last read when the file grew."""
        return self._read(file)["rows"]

    def _read(self, file: Path) -> dict[str, Any]:
        stat = file.stat()
        with self._lock:
            held = self._files.get(file)
            if held is None or stat.st_size < held["offset"] or stat.st_ino != held["inode"]:
                held = {"offset": 0, "inode": stat.st_ino, "rows": [], "texts": []}
            if stat.st_size > held["offset"]:
                with file.open("rb") as handle:
                    handle.seek(held["offset"])
                    data = handle.read(stat.st_size - held["offset"])
                end = data.rfind(b"\n") + 1  # a last line without its newline is being written: later
                for line in data[:end].splitlines():
                    if not line.strip():
                        continue
                    try:
                        record = json.loads(line)
                    except ValueError:
                        record = None
                    row = compact(len(held["rows"]), record)
                    if record is None:
                        row["error"] = "a line that is not JSON (corrupt, or cut when the run was killed)"
                    held["rows"].append(row)
                    held["texts"].append(_text(row))
                held["offset"] += end
            self._note(file, held)
            self._files.pop(file, None)
            self._files[file] = held
            while len(self._files) > self.keep:  # the transcripts read longest ago are let go
                self._files.pop(next(iter(self._files)))
            return {"rows": list(held["rows"]), "texts": list(held["texts"])}

    @staticmethod
    def _note(file: Path, held: dict[str, Any]) -> None:
        """Lay the games' notes (parsed move, illegal) on the rows, when the notes changed since the last read."""
        try:
            stat = notes_path(file).stat()
            signature = (stat.st_size, stat.st_mtime_ns)
        except OSError:
            signature = None
        if signature == held.get("notes") and len(held["rows"]) == held.get("noted"):
            return
        notes = read_notes(file) if signature else {}
        for row in held["rows"]:
            note = notes.get(str(row.get("call_id")))
            if note is not None:
                row["parsed"], row["illegal"] = note["parsed"], note["illegal"]
        held["notes"], held["noted"] = signature, len(held["rows"])

    def query(
        self, file: Path, *, offset: int = 0, limit: int = PAGE, text: str = "", **filters: str | None
    ) -> dict[str, Any]:
        """One page of the calls that match: `filters` (run, epoch, agent, role) compared as text, `text` searched
        in the prompt and the answer (any case). Returns the page's rows, `matched`, `total` and each filter's
        values (`facets`)."""
        read = self._read(file)
        rows, texts = read["rows"], read["texts"]
        wanted = {k: str(v) for k, v in filters.items() if k in FILTERS and v not in (None, "")}
        needle = text.strip().lower()
        matched = [
            row
            for row, body in zip(rows, texts, strict=True)
            if all(_key(row.get(k)) == v for k, v in wanted.items()) and (not needle or needle in body)
        ]
        limit = max(1, min(int(limit), MAX_PAGE))
        offset = max(0, int(offset))
        facets = {k: sorted({_key(r.get(k)) for r in rows if r.get(k) is not None}, key=_natural) for k in FILTERS}
        return {
            "total": len(rows),
            "matched": len(matched),
            "offset": offset,
            "limit": limit,
            "rows": matched[offset : offset + limit],
            "facets": facets,
        }


def _key(value: Any) -> str:
    """A value as a filter compares it: as JavaScript's `String` writes it (`true`, not Python's `True`)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _natural(value: str) -> tuple[Any, ...]:
    """Sort "user-10" after "user-9", and 10 after 9."""
    import re

    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", value))
