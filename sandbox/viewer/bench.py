"""`sandbox bench viewer`: the viewer lists 1,000 run directories, and opens and filters a run of 10,000 calls.

Made in a temporary folder: 1,000 small runs (a scenario, a status, a summary, a table and a transcript of 20
calls each, copied from one template) and one run whose transcript holds 10,000 calls. Measured, each against
`ls -R` of the same folder in the same run (both read it from the page cache):

* start to list: a server started in this process, then its first `/api/runs` (the catalog read cold);
* a poll: the same request again (rows cached, the folder walked again);
* the big run: its page (`/api/run`), its first page of calls (the transcript read once), a filtered page, and
  the bytes each answer holds against the transcript's size (a page is sent, never every row).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

RUNS = 1_000
CALLS = 10_000


def _call(i: int) -> dict[str, Any]:
    return {
        "call_id": f"0/{i // 100}/e{i}/propose/user-{i % 12}/0",
        "role": "assistant" if i % 6 == 0 else "user",
        "agent": f"user-{i % 12}",
        "run": 0,
        "epoch": i // 1000,
        "episode": f"e{i}",
        "step": "propose",
        "attempt": 0,
        "model": "embedded",
        "messages": [
            {"role": "system", "content": f"You are user-{i % 12}. You hold a norm: share fairly. " * 8},
            {"role": "user", "content": f"You have {10 + i % 90} dollars. What do you offer?"},
        ],
        "answer": f"For the {10 + i % 90} dollars, the proposer will get {i % 10}, and the responder the rest.",
        "seed": i,
        "latency_s": 0.5,
        "input_tokens": 300,
        "output_tokens": 20,
        "cache_hit": i % 3 == 0,
        "prompt_cached_tokens": 0,
        "error": None,
        "extra": {},
    }


def _make(root: Path) -> None:
    template = root / "template"
    template.mkdir(parents=True)
    (template / "scenario.yaml").write_text("name: bench\nseed: 1\nruns: 1\nepochs: 2\n")
    (template / "run.json").write_text(json.dumps({"created": 1.0e9, "status": "complete", "updated": 1.0e9 + 60}))
    (template / "summary.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "kind": "society",
                "scenario": "bench",
                "runs": 1,
                "epochs": 2,
                "acceptance_rate": 0.8,
            }
        )
    )
    (template / "episodes.csv").write_text(
        "run,epoch,offered_share\n" + "".join(f"0,{i % 2},0.{i}\n" for i in range(10))
    )
    (template / "transcripts.jsonl").write_text("".join(json.dumps(_call(i)) + "\n" for i in range(20)))
    runs = root / "runs"
    for i in range(RUNS):
        shutil.copytree(template, runs / f"group-{i // 100}" / f"run-{i:04d}")
    shutil.rmtree(template)
    big = runs / "big"
    shutil.copytree(runs / "group-0" / "run-0000", big)
    with (big / "transcripts.jsonl").open("w") as out:
        out.writelines(json.dumps(_call(i)) + "\n" for i in range(CALLS))


def _get(url: str) -> tuple[float, bytes]:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as answer:
        body = answer.read()
    return time.perf_counter() - started, body


def run() -> dict[str, Any]:
    from rich.console import Console
    from rich.table import Table

    from sandbox.viewer.server import Running

    with tempfile.TemporaryDirectory(prefix="sandbox-bench-viewer-") as tmp:
        root = Path(tmp)
        _make(root)
        runs = root / "runs"
        ls = []
        for _ in range(3):
            started = time.perf_counter()
            subprocess.run(["ls", "-R", str(runs)], check=True, stdout=subprocess.DEVNULL)
            ls.append(time.perf_counter() - started)
        baseline = sorted(ls)[1]
        started = time.perf_counter()
        with Running(runs) as server:
            _, body = _get(server.url + "api/runs")
            first = time.perf_counter() - started
            listed = len(json.loads(body)["runs"])
            poll, _ = _get(server.url + "api/runs")
            page, page_body = _get(server.url + "api/run?path=big")
            calls, calls_body = _get(server.url + "api/transcripts?path=big&offset=0&limit=50")
            filtered, filtered_body = _get(server.url + "api/transcripts?path=big&role=assistant&epoch=3&text=dollars")
        size = (runs / "big" / "transcripts.jsonl").stat().st_size
        matched = json.loads(filtered_body)["matched"]
    figures = {
        "runs_listed": listed,
        "start_to_list_s": round(first, 3),
        "poll_s": round(poll, 3),
        "ls_R_s": round(baseline, 3),
        "start_to_list_vs_ls_R": round(first / baseline, 1),
        "big_page_s": round(page, 3),
        "big_page_bytes": len(page_body),
        "first_calls_page_s": round(calls, 3),
        "first_calls_page_bytes": len(calls_body),
        "filtered_page_s": round(filtered, 3),
        "filtered_matched": matched,
        "transcript_bytes": size,
    }
    table = Table(title=f"sandbox view: {listed:,} runs listed; a run of {CALLS:,} calls opened and filtered")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for label, value in [
        ("start, then the first list of runs", f"{first:.3f} s"),
        ("`ls -R` of the same folder (median of 3)", f"{baseline:.3f} s"),
        ("start-to-list / ls -R", f"{first / baseline:.1f}x"),
        ("a poll of the list (rows cached)", f"{poll:.3f} s"),
        (f"the run page of {CALLS:,} calls", f"{page:.3f} s, {len(page_body):,} B"),
        ("its first page of 50 calls (transcript read once)", f"{calls:.3f} s, {len(calls_body):,} B"),
        (f"a filtered page ({matched} calls match)", f"{filtered:.3f} s, {len(filtered_body):,} B"),
        ("the whole transcript, never sent", f"{size:,} B"),
    ]:
        table.add_row(label, value)
    Console().print(table)
    return figures
