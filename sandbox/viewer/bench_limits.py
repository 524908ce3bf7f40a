"""`sandbox bench viewer-limits`: the viewer and the report at the sizes the drills broke them.

Three measurements, each with its baseline from the same run:

* the list: 50 good runs beside a folder whose name is not UTF-8, a `summary.json` nested 100,000 deep, a name
  with a backslash and a binary transcript: the status of `/api/runs`, the rows, and the time of the first list
  and of a poll (rows cached) against `ls -R` of the folder;
* the report of a run of 50,000 calls (about 3 KB each, 150 MB): its size against the 5 MB limit and against the
  transcript, the time to write it, and the calls it left out;
* the server's memory: `sandbox view` in its own process, eight 200 MB transcripts opened one after the other
  (the first page of each, then a page at its end): its resident memory (`VmRSS`, and the peak `VmHWM`) before
  and after, against the transcripts' size, under `--transcript-memory-mb` (the named bound).

Sizes can be cut for a quick look: `SANDBOX_BENCH_SCALE=0.1 sandbox bench viewer-limits`.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from sandbox.viewer import bench

__all__ = ["make_long_run", "run"]

GOOD = 50
REPORT_CALLS = 50_000
BIG_MB = 200
BIG_FILES = 8
BOUNDS_MB = (256, 32)  # `sandbox view --transcript-memory-mb` for the memory measurement: its default, and a tight one


def _call(i: int) -> str:
    """Call `i` of a long SCAI run: `sandbox bench viewer`'s call with a 3 KB prompt, over 5 runs and 10 epochs."""
    record = bench._call(i)
    record["messages"][0]["content"] = f"You are user-{i % 12}. You hold a norm: share fairly with others. " * 50
    record.update(run=i % 5, epoch=(i // 1000) % 10, input_tokens=700)
    record["answer"] += f" (call {i})"
    return json.dumps(record) + "\n"


def make_long_run(path: Path, *, calls: int = REPORT_CALLS, size_mb: float | None = None) -> Path:
    """A finished run directory at `path` whose transcript holds `calls` calls of about 3 KB each (or, with
    `size_mb`, as many calls as make that size): what a long SCAI run leaves. Returns `path`."""
    path.mkdir(parents=True)
    (path / "scenario.yaml").write_text("name: long\nseed: 1\n")
    (path / "run.json").write_text(json.dumps({"created": 1.0e9, "status": "complete", "updated": 1.0e9 + 60}))
    (path / "summary.json").write_text(json.dumps({"schema_version": 1, "scenario": "long", "acceptance_rate": 0.8}))
    limit = None if size_mb is None else int(size_mb * 1e6)
    with (path / "transcripts.jsonl").open("w") as out:
        written, i = 0, 0
        while (limit is None and i < calls) or (limit is not None and written < limit):
            line = _call(i)
            out.write(line)
            written, i = written + len(line), i + 1
    return path


def _get(url: str) -> tuple[float, int, bytes]:
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=600) as answer:
            return time.perf_counter() - started, answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return time.perf_counter() - started, error.code, error.read()


def _memory(pid: int) -> dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024  # MiB
    return fields


def build_awkward(root: Path, template: Path, good: int = GOOD) -> Path:
    """`good` copies of the run `template` under `root`, and beside them the folders that must never take the list
    down: a name that is not UTF-8 (bytes ff fe), a `summary.json` nested 100,000 deep, a name with a backslash,
    and a transcript of binary bytes (`\\r` included, one `\\n`). Returns `root`."""
    import random

    root.mkdir(parents=True, exist_ok=True)
    skip = shutil.ignore_patterns("*.sqlite")
    for i in range(good):
        shutil.copytree(template, root / f"good-{i:02d}", ignore=skip)
    shutil.copytree(template, os.fsdecode(os.fsencode(root) + b"/bad-\xff\xfe"), ignore=skip)
    shutil.copytree(template, root / "deep", ignore=skip)
    (root / "deep" / "summary.json").write_text("[" * 100_000 + "]" * 100_000)
    shutil.copytree(template, root / "back\\slash", ignore=skip)
    shutil.copytree(template, root / "binary", ignore=skip)
    noise = random.Random(7).randbytes(200_000).replace(b"\n", b"\r")
    (root / "binary" / "transcripts.jsonl").write_bytes(noise + b"\n")
    return root


def _list(root: Path, scale: float) -> dict[str, Any]:
    from sandbox.viewer.server import Running

    template = make_long_run(root / "template", calls=20)
    runs = build_awkward(root / "list", template, good=max(2, int(GOOD * scale)))
    ls = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(["ls", "-R", str(runs)], check=True, stdout=subprocess.DEVNULL)
        ls.append(time.perf_counter() - started)
    with Running(runs) as server:
        first, status, body = _get(server.url + "api/runs")
        polls = [_get(server.url + "api/runs")[0] for _ in range(5)]
        deep_status = _get(server.url + "api/run?path=deep")[1]
    rows = json.loads(body)["runs"]
    return {
        "status": status,
        "rows": len(rows),
        "good_listed": sum(1 for r in rows if r["path"].startswith("good-") and r["status"] == "complete"),
        "corrupt_rows": sorted(r["path"] for r in rows if r["status"] == "corrupt"),
        "deep_page_status": deep_status,
        "first_list_s": round(first, 3),
        "poll_s": round(sorted(polls)[2], 4),
        "ls_R_s": round(sorted(ls)[1], 4),
    }


def _report(root: Path, scale: float) -> dict[str, Any]:
    from sandbox.viewer.report import build_report

    calls = max(1_000, int(REPORT_CALLS * scale))
    run = make_long_run(root / "long", calls=calls)
    started = time.perf_counter()
    written = build_report(run, root / "long.html")
    seconds = time.perf_counter() - started
    return {
        "calls": calls,
        "transcript_mb": round((run / "transcripts.jsonl").stat().st_size / 1e6, 1),
        "report_mb": round(written.bytes / 1e6, 2),
        "report_s": round(seconds, 1),
        "calls_held": written.calls,
        "calls_left_out": written.left_out,
        "warning": written.warning,
    }


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _big_runs(root: Path, scale: float) -> Path:
    runs = root / "big"
    first = make_long_run(runs / "big-0", size_mb=BIG_MB * scale)
    for i in range(1, BIG_FILES):  # the same bytes under eight names (hard links: each is its own transcript)
        (runs / f"big-{i}").mkdir()
        for name in ("scenario.yaml", "run.json", "summary.json", "transcripts.jsonl"):
            os.link(first / name, runs / f"big-{i}" / name)
    return runs


def _server_memory(runs: Path, bound_mb: int) -> dict[str, Any]:
    first = runs / "big-0"
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sandbox",
            "view",
            str(runs),
            "--port",
            str(port),
            "--transcript-memory-mb",
            str(bound_mb),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(600):
            try:
                _get(url + "api/runs")
                break
            except OSError:
                time.sleep(0.1)
        idle = _memory(server.pid)
        opened = []
        for i in range(BIG_FILES):
            seconds, status, body = _get(url + "api/transcripts?" + urllib.parse.urlencode({"path": f"big-{i}"}))
            total = json.loads(body)["total"]
            last = _get(url + "api/transcripts?" + urllib.parse.urlencode({"path": f"big-{i}", "offset": total - 50}))
            opened.append({"first_page_s": round(seconds, 2), "last_page_s": round(last[0], 3), "status": status})
        after = _memory(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {
        "transcript_mb": round((first / "transcripts.jsonl").stat().st_size / 1e6),
        "calls_each": total,
        "files": BIG_FILES,
        "bound_mib": bound_mb,
        "rss_idle_mib": round(idle["VmRSS"]),
        "rss_after_mib": round(after["VmRSS"]),
        "peak_mib": round(after["VmHWM"]),
        "first_page_s": [o["first_page_s"] for o in opened],
        "last_page_s": [o["last_page_s"] for o in opened],
    }


def run() -> dict[str, Any]:
    from rich.console import Console
    from rich.table import Table

    scale = float(os.environ.get("SANDBOX_BENCH_SCALE", "1"))
    with tempfile.TemporaryDirectory(prefix="sandbox-bench-limits-") as tmp:
        root = Path(tmp)
        listing = _list(root, scale)
        report = _report(root, scale)
        runs = _big_runs(root, scale)
        memories = [_server_memory(runs, bound) for bound in BOUNDS_MB]
    table = Table(title="sandbox view and sandbox report at the drills' sizes")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for label, value in [
        (
            f"/api/runs: {listing['good_listed']} good runs and {len(listing['corrupt_rows'])} bad folders",
            f"{listing['status']}, {listing['rows']} rows, corrupt: {', '.join(listing['corrupt_rows'])}",
        ),
        ("the deep summary's run page", str(listing["deep_page_status"])),
        (
            "first list / a poll (rows cached) / ls -R",
            f"{listing['first_list_s']} s / {listing['poll_s']} s / {listing['ls_R_s']} s",
        ),
        (
            f"report of {report['calls']:,} calls ({report['transcript_mb']} MB of transcript)",
            f"{report['report_mb']} MB ({report['report_mb'] / 5:.2f}x the 5 MB limit), {report['report_s']} s",
        ),
        ("calls held / left out (said on the page)", f"{report['calls_held']:,} / {report['calls_left_out']:,}"),
        *[
            row
            for memory in memories
            for row in (
                (
                    f"server RSS (--transcript-memory-mb {memory['bound_mib']}): idle, then {memory['files']} x "
                    f"{memory['transcript_mb']} MB transcripts opened one after the other",
                    f"{memory['rss_idle_mib']} MiB, then {memory['rss_after_mib']} MiB (peak {memory['peak_mib']} MiB)",
                ),
                (
                    "  its growth, against the transcripts' size",
                    f"{memory['rss_after_mib'] - memory['rss_idle_mib']} MiB, "
                    f"{(memory['rss_after_mib'] - memory['rss_idle_mib']) / (memory['files'] * memory['transcript_mb']):.3f}x",
                ),
                (
                    "  first page of each (indexed once) / a page at its end",
                    f"{max(memory['first_page_s'])} s at most / {max(memory['last_page_s'])} s at most",
                ),
            )
        ],
    ]:
        table.add_row(label, value)
    Console().print(table)
    return {"list": listing, "report": report, "memory": memories}
