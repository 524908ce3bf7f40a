"""A society's policies on its run page (a `Policies` section): each version of the assistant's policy by run, with
its word diff from the version before, the epochs it was written from and the episodes shown to its MetaLM."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

from sandbox.base.words import word_pieces
from sandbox.viewer.reading import inside, plain
from sandbox.viewer.sections import Policies

__all__ = ["diff_pieces", "policies_json"]

_EPISODE_EPOCH = re.compile(r"-e(\d+)-i\d+$")  # a society episode's id: r{run}-e{epoch}-i{index}


def diff_pieces(before: str, after: str) -> list[list[str]]:
    """`after` against `before`, word by word (`sandbox.base.words.word_pieces`), as the page draws it: `[op, text]`
    pieces, op `=` (kept), `-` (removed) or `+` (added), each but the last ending in the space before the next.

    >>> diff_pieces("give them nearly all", "give them half")
    [['=', 'give them '], ['-', 'nearly all '], ['+', 'half']]
    """
    pieces = [[op, words] for op, words in word_pieces(before, after)]
    for piece in pieces[:-1]:  # the spaces between pieces
        piece[1] += " "
    return pieces


def policies_json(section: Policies, path: Path) -> dict[str, Any] | None:
    file = inside(path, section.file)
    if file is None or not file.is_file():
        return None
    records = []
    for line in file.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line being written
        if isinstance(record, dict) and "policy" in record:
            records.append(record)
    episodes: dict[str, dict[str, Any]] = {}
    table = inside(path, section.episodes)
    if table is not None and table.is_file():
        frame = pd.read_csv(table)
        if "episode" in frame.columns:
            keep = [
                c
                for c in (
                    "episode",
                    "epoch",
                    "interaction",
                    "proposer",
                    "responder",
                    "amount",
                    "proposal",
                    "offered_share",
                    "response",
                    "decision",
                )
                if c in frame.columns
            ]
            episodes = {str(r["episode"]): {k: plain(v) for k, v in r.items()} for r in frame[keep].to_dict("records")}
    runs: dict[Any, list[dict[str, Any]]] = {}
    for record in records:
        versions = runs.setdefault(record.get("run", 0), [])
        before = versions[-1]["policy"] if versions else ""
        evidence = [str(e) for e in record.get("evidence") or []]
        rows = [episodes[e] for e in evidence if e in episodes]
        played = record.get("epoch")
        # the epochs of the interactions it was written from: the episodes' own, else read from their ids
        # (`r0-e3-i00012`: the table is written when the run ends); none for a version no MetaLM wrote
        read = sorted(
            {int(m.group(1)) for e in evidence if (m := _EPISODE_EPOCH.search(e))}
            | {r["epoch"] for r in rows if isinstance(r.get("epoch"), int)}
        )
        versions.append(
            {
                "version": record.get("version", len(versions)),
                "epoch": played,  # the epoch the version is played in
                "evidence_epochs": read,  # the epochs whose interactions it was written from
                "unchanged": bool(versions) and str(record["policy"]) == before,
                "source": record.get("source"),
                "policy": str(record["policy"]),
                "legal": record.get("legal", True),
                "diff": diff_pieces(before, str(record["policy"])) if versions else [["=", str(record["policy"])]],
                "evidence": evidence,
                "evidence_rows": rows,
                "answer": record.get("answer"),
                "illegal_answers": record.get("illegal_answers", 0),
            }
        )
    if not runs:
        return None
    return {
        "type": "policies",
        "title": section.title,
        "runs": [{"run": plain(k), "versions": v} for k, v in runs.items()],
    }
