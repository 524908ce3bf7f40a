"""The run viewer without a browser: the list of runs and their statuses, the run pages of every kind, paged
transcripts, the server's refusal of every path out of the runs folder, the report, and the commands."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import pandas as pd
import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from sandbox.cli.runs import app
from sandbox.core import kinds
from sandbox.core.run_dir import hold
from sandbox.viewer.catalog import Catalog, find_runs
from sandbox.viewer.policies import diff_pieces
from sandbox.viewer.report import LIMIT_MB, build_report, report_data
from sandbox.viewer.server import create_app, hosts_for, inside, is_local, run_json
from sandbox.viewer.transcripts import Transcripts
from tests.viewer_runs import HOSTILE

runner = CliRunner()


def _client(root: Path) -> TestClient:
    return TestClient(create_app(root), base_url="http://127.0.0.1")


def test_the_list_holds_a_run_of_every_kind_and_says_which_are_corrupt_or_half_written(viewer_root: Path) -> None:
    rows = {row["path"]: row for row in Catalog(viewer_root).rows()}
    for name in kinds.kinds():
        assert rows[name]["kind"] == name and rows[name]["status"] == "complete", rows[name]
        assert rows[name]["scenario"] and rows[name]["started"]
    assert rows["toy"]["kind"] == "toy"  # a kind not installed in this process keeps the name its summary gives
    assert rows["society"]["calls"] > 0 and rows["society"]["tokens"] > 0 and rows["society"]["headline"]
    assert rows["corrupt"]["status"] == "corrupt" and "summary.json" in rows["corrupt"]["problem"]
    assert rows["half"]["status"] == "incomplete"  # a scenario and nothing else, no process holds it: killed
    assert not any(p.startswith("sweep/") or p.startswith("chain/") for p in rows)  # cells and stages: on their pages


def test_a_held_run_shows_as_running_and_as_incomplete_once_its_process_is_gone(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "live"
    run.mkdir(parents=True)
    (run / "scenario.yaml").write_text("name: live\n")
    (run / "run.json").write_text(json.dumps({"status": "running", "created": 1.0}))
    catalog = Catalog(tmp_path / "runs")
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with hold(run):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(10)
    try:
        assert catalog.rows()[0]["status"] == "running"
    finally:
        release.set()
        thread.join()
    assert catalog.rows()[0]["status"] == "incomplete"


def test_every_kind_has_a_page_with_its_own_sections_and_none_fails(viewer_root: Path) -> None:
    catalog = Catalog(viewer_root)
    expected = {
        "society": {"chart", "policies", "table", "transcripts"},
        "training": {"chart", "table"},
        "sweep": {"cells"},
        "chain": {"chart", "table", "runs"},
        "dialogue": {"table", "figures", "tree"},
        "proxy": {"chart", "table"},
        "distill": {"chart", "table"},
        "judge": {"table"},
        "population": {"chart", "table"},
    }
    for name in kinds.kinds():
        page = run_json(viewer_root, (viewer_root / name).resolve(), catalog)
        types = {s["type"] for s in page["sections"]}
        assert "error" not in types, (name, [s for s in page["sections"] if s["type"] == "error"])
        assert expected[name] <= types, (name, types)
    sweep = run_json(viewer_root, (viewer_root / "sweep").resolve(), catalog)
    cells = next(s for s in sweep["sections"] if s["type"] == "cells")
    assert cells["links"] and all(link and link.startswith("sweep/runs/run-") for link in cells["links"])
    dialogue = run_json(viewer_root, (viewer_root / "dialogue").resolve(), catalog)
    tree = next(s for s in dialogue["sections"] if s["type"] == "tree")
    dialogues = pd.read_csv(viewer_root / "dialogue" / "dialogues.csv")
    roots = [i for i, parent in enumerate(tree["parents"]) if parent == ""]
    assert sum(tree["values"][i] for i in roots) == len(dialogues)  # every terminal dialogue under the roots
    leaves = set(tree["ids"]) - set(tree["parents"])
    assert len(leaves) == len(dialogues.drop_duplicates(["setup", "instructions", "seeds"]))
    corrupt = run_json(viewer_root, (viewer_root / "corrupt").resolve(), catalog)
    assert corrupt["row"]["status"] == "corrupt" and corrupt["sections"]  # the page still shows what it can


def test_a_kind_without_a_view_gets_its_tables_figures_and_transcripts(viewer_root: Path) -> None:
    from tests.toy_kind import TOY

    kinds.register(TOY)
    try:
        page = run_json(viewer_root, (viewer_root / "toy").resolve(), Catalog(viewer_root))
    finally:
        kinds.unregister(TOY.name)
    assert [s["type"] for s in page["sections"]] == ["table"] and page["sections"][0]["file"] == "steps.csv"


def test_the_server_serves_files_inside_the_folder_only(viewer_root: Path) -> None:
    client = _client(viewer_root)
    assert client.get("/files/society/episodes.csv").status_code == 200
    secret = f"{viewer_root.name}-secret.txt"
    for url in [
        "/files/../" + secret,
        "/files/%2e%2e/" + secret,
        "/files/society/%2e%2e/%2e%2e/" + secret,
        "/files/society/leak.txt",
        f"/files/society/up/{secret}",
        "/files//etc/passwd",
        "/files/%2Fetc%2Fpasswd",
        "/static/../server.py",
        "/static/page.py",
    ]:
        answer = client.get(url)
        assert answer.status_code == 404 and "secret" not in answer.text and "root:" not in answer.text, url
    for path in ["..", "/etc", "society/up", "society/../..", "nothing"]:
        assert client.get("/api/run", params={"path": path}).status_code == 404, path
        assert client.get("/api/transcripts", params={"path": path}).status_code == 404, path
    assert (
        client.get("/api/transcripts", params={"path": "society", "file": "../hostile/transcripts.jsonl"}).status_code
        == 404
    )
    assert (
        client.post("/api/runs").status_code == 405 and client.delete("/files/society/episodes.csv").status_code == 405
    )
    assert inside(viewer_root, "society/episodes.csv") is not None and inside(viewer_root, "society\\..\\x") is None
    assert is_local("127.0.0.1") and is_local("::1") and is_local("localhost") and not is_local("0.0.0.0")


def test_transcripts_come_a_page_at_a_time_filtered_and_a_cut_line_is_a_row_that_says_so(tmp_path: Path) -> None:
    file = tmp_path / "transcripts.jsonl"
    with file.open("w") as out:
        for i in range(10_000):
            out.write(
                json.dumps(
                    {
                        "call_id": str(i),
                        "role": "assistant" if i % 10 == 0 else "user",
                        "agent": f"user-{i % 7}",
                        "run": i % 2,
                        "epoch": i // 1000,
                        "answer": f"offer {i}",
                        "input_tokens": 3,
                        "output_tokens": 1,
                        "cache_hit": False,
                        "messages": [{"role": "user", "content": "Offer?"}],
                    }
                )
                + "\n"
            )
        out.write('{"call_id": "cut"')  # a line being written: not read until it ends
    reader = Transcripts()
    page = reader.query(file, offset=100, limit=50)
    assert page["total"] == 10_000 and page["matched"] == 10_000 and len(page["rows"]) == 50
    assert page["rows"][0]["index"] == 100 and page["facets"]["epoch"] == [str(e) for e in range(10)]
    narrowed = reader.query(file, role="assistant", epoch="3", text="OFFER 31")
    assert narrowed["matched"] == 10 and {r["agent"] for r in narrowed["rows"]} <= {f"user-{k}" for k in range(7)}
    with file.open("a") as out:
        out.write(', "role": "user"}\nnot json\n')
    grown = reader.query(file, offset=10_000)
    assert grown["total"] == 10_002 and grown["rows"][0]["role"] == "user"
    assert grown["rows"][1]["error"].startswith("a line that is not JSON")


def test_the_word_diff_keeps_removes_and_adds() -> None:
    pieces = diff_pieces("Put others first and give them nearly all.", "Look after yourself and keep nearly all.")
    assert "".join(t for op, t in pieces if op != "+").split() == "Put others first and give them nearly all.".split()
    assert "".join(t for op, t in pieces if op != "-").split() == "Look after yourself and keep nearly all.".split()
    assert ["=", "and "] in pieces


def test_the_report_is_one_file_that_loads_nothing_and_holds_no_live_markup(viewer_root: Path, tmp_path: Path) -> None:
    out = build_report(viewer_root / "hostile", tmp_path / "hostile.html").path
    html = out.read_text()
    assert out.stat().st_size < 5_000_000
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # nothing fetched from anywhere
    assert "Content-Security-Policy" in html and "connect-src 'none'" in html
    assert HOSTILE not in html and "<script>window.__pwned" not in html
    data = json.loads(re.search(r"window.SANDBOX_REPORT = (.*?);</script>", html, re.S).group(1))
    assert data["transcripts"]["transcripts.jsonl"][0]["answer"] == HOSTILE  # kept as data, shown as text
    assert any(
        s["type"] == "figures" and s["items"][0]["url"].startswith("data:image/png;base64,")
        for s in data["run"]["sections"]
    )


def test_the_commands_refuse_bad_input_with_exit_2_and_write_nothing(viewer_root: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["view", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "is not a folder" in result.output
    result = runner.invoke(app, ["report", str(tmp_path), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and "not a run directory" in result.output and not (tmp_path / "r.html").exists()
    result = runner.invoke(app, ["report", str(viewer_root / "society"), "--out", str(tmp_path / "r.txt")])
    assert result.exit_code == 2 and ".html" in result.output and not (tmp_path / "r.txt").exists()
    result = runner.invoke(app, ["report", str(viewer_root / "society"), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 0 and (tmp_path / "r.html").stat().st_size > 1_000_000


def test_find_runs_does_not_descend_into_a_run_or_follow_links(viewer_root: Path) -> None:
    found = [p.relative_to(viewer_root).as_posix() for p in find_runs(viewer_root)]
    assert "sweep" in found and not any("/" in p for p in found)


def test_each_call_shows_the_move_its_game_read_and_a_garbage_answer_is_an_illegal_move(tmp_path: Path) -> None:
    import sandbox
    from sandbox.llm.scripted import scripted
    from tests.conftest import norm_of, scripted_propose, scripted_respond, small_scenario

    def garbage_from_selfish(messages: list, kwargs: dict) -> str:  # selfish proposers answer nothing legal
        return "banana" if norm_of(messages) == "selfish" else scripted_propose(messages, kwargs)

    model = scripted([(r"You are the proposer", garbage_from_selfish), (r"You are the responder", scripted_respond)])
    result = sandbox.run(small_scenario(runs=1, epochs=1), out=tmp_path / "runs" / "small", models={"user": model})
    reader = Transcripts()
    file = result.path / "transcripts.jsonl"
    rows = reader.query(file, limit=500)["rows"]
    proposals = [r for r in rows if r["step"] == "propose"]
    assert proposals and all(r["illegal"] in (True, False) for r in proposals)
    legal = [r for r in proposals if r["illegal"] is False]
    illegal = reader.query(file, illegal="true", limit=500)
    assert legal and all(
        set(r["parsed"]) == {"proposer", "responder"} and str(r["parsed"]["responder"]) in r["answer"] for r in legal
    )
    assert illegal["matched"] > 0 and all(r["answer"] == "banana" and r["parsed"] is None for r in illegal["rows"])
    episodes = result.table("episodes")
    assert illegal["matched"] == int(episodes["proposal_illegal_answers"].sum())  # the game's own count agrees
    assert set(reader.query(file)["facets"]["illegal"]) == {"false", "true"}


def test_sandbox_view_prints_its_address_serves_the_list_and_warns_beyond_localhost(viewer_root: Path) -> None:
    import subprocess
    import sys
    import time
    import urllib.request

    def start(*options: str) -> tuple[subprocess.Popen, str]:
        process = subprocess.Popen(
            [sys.executable, "-m", "sandbox", "view", str(viewer_root), *options], stderr=subprocess.PIPE, text=True
        )
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            lines.append(line)
            if "http://" in line:
                return process, "".join(lines)
        process.kill()
        raise AssertionError("".join(lines))

    process, printed = start()
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/", printed).group(0)
        with urllib.request.urlopen(url + "api/runs", timeout=30) as answer:
            assert {"society", "sweep"} <= {r["path"] for r in json.load(answer)["runs"]}
        assert "warning" not in printed
    finally:
        process.terminate()
        process.wait(30)
    process, printed = start("--host", "0.0.0.0")
    process.terminate()
    process.wait(30)
    assert "warning" in printed and "beyond this machine" in printed


def test_a_page_from_elsewhere_that_names_itself_127_0_0_1_is_refused(viewer_root: Path) -> None:
    client = _client(viewer_root)
    assert client.get("/api/runs").status_code == 200
    assert client.get("/api/runs", headers={"Host": "localhost:8000"}).status_code == 200
    assert client.get("/api/runs", headers={"Host": "attacker.example:8000"}).status_code == 400  # DNS rebinding
    assert (
        TestClient(create_app(viewer_root, hosts=hosts_for("0.0.0.0")), base_url="http://box.lan")
        .get("/api/runs")
        .status_code
        == 200
    )  # listening beyond this machine (with its warning): any name


def test_odd_run_directories_never_break_the_list_and_never_show_what_lies_outside(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"schema_version": 1, "kind": "society", "scenario": "hunter2", "secret": "hunter2"}))
    for name, files in {
        "linked": {"scenario.yaml": "name: linked\n"},
        "nan": {
            "scenario.yaml": "name: nan\n",
            "run.json": json.dumps({"status": "complete", "created": 1.0}),
            "summary.json": '{"schema_version": 1, "kind": "society", "scenario": "nan", "acceptance_rate": NaN}',
        },
        "null-status": {"scenario.yaml": "name: x\n", "run.json": "null"},
        "text-times": {
            "scenario.yaml": "name: y\n",
            "run.json": json.dumps({"status": "complete", "created": "x", "updated": "y"}),
        },
    }.items():
        (root / name).mkdir(parents=True)
        for file, text in files.items():
            (root / name / file).write_text(text)
    (root / "linked" / "summary.json").symlink_to(outside)
    client = _client(root)
    answer = client.get("/api/runs")
    assert answer.status_code == 200 and "hunter2" not in answer.text
    rows = {r["path"]: r for r in answer.json()["runs"]}
    assert rows["linked"]["status"] == "corrupt" and "symlink" in rows["linked"]["problem"]
    assert rows["null-status"]["status"] == "corrupt" and rows["text-times"]["duration"] is None
    assert rows["nan"]["headline"] == {"acceptance_rate": None}  # NaN is no JSON: it goes as null
    for name in rows:
        page = client.get("/api/run", params={"path": name})
        assert page.status_code == 200 and "hunter2" not in page.text, name


def test_folders_that_cannot_be_read_or_named_are_corrupt_rows_and_the_list_goes_on(
    viewer_root: Path, tmp_path: Path
) -> None:
    from sandbox.viewer.bench_limits import build_awkward

    root = build_awkward(tmp_path / "runs", viewer_root / "toy", good=5)
    client = _client(root)
    answer = client.get("/api/runs")
    assert answer.status_code == 200  # was 500: a name that is not UTF-8 could not be encoded
    rows = {row["path"]: row for row in answer.json()["runs"]}
    assert {f"good-{i:02d}" for i in range(5)} <= set(rows) and all(
        rows[f"good-{i:02d}"]["status"] == "complete" for i in range(5)
    )
    bad = rows["bad-\\xff\\xfe"]
    assert bad["status"] == "corrupt" and "not valid UTF-8" in bad["problem"] and bad["opens"] is False
    assert rows["back\\slash"]["status"] == "corrupt" and "backslash" in rows["back\\slash"]["problem"]
    assert rows["back\\slash"]["opens"] is False and rows["good-00"]["opens"] is True
    assert rows["deep"]["status"] == "corrupt" and "RecursionError" in rows["deep"]["problem"]
    page = client.get("/api/run", params={"path": "deep"})  # was 500: RecursionError was not caught
    assert page.status_code == 200 and page.json()["row"]["status"] == "corrupt" and page.json()["summary"] == {}
    # a binary transcript: the list and the page count the same calls (lines split at \n only)
    listed = rows["binary"]["calls"]
    paged = client.get("/api/transcripts", params={"path": "binary"}).json()
    assert listed == paged["total"] == 1 and paged["rows"][0]["error"].startswith("a line that is not JSON")


def test_a_report_keeps_to_5_mb_says_what_it_left_out_and_warns_when_asked_for_more(tmp_path: Path) -> None:
    from sandbox.viewer.bench_limits import make_long_run

    run = make_long_run(tmp_path / "long", calls=3_000)
    written = build_report(run, tmp_path / "sampled.html")
    assert written.bytes <= 5_000_000 and written.warning is None
    assert 0 < written.calls < 3_000 and written.calls + written.left_out == 3_000
    data = json.loads(re.search(r"window.SANDBOX_REPORT = (.*?);</script>", written.path.read_text(), re.S).group(1))
    section = next(s for s in data["run"]["sections"] if s["type"] == "transcripts")
    assert section["held"] == written.calls and section["total"] == 3_000
    assert (
        "of the 3,000 calls" in section["note"]
        and "--transcripts all" in section["note"]
        and "`" not in section["note"]
    )
    held = [row["index"] for row in data["transcripts"]["transcripts.jsonl"]]
    assert held[0] == 0 and held[-1] > 2_500 and held == sorted(held)  # spread over the whole run
    every = build_report(run, tmp_path / "all.html", transcripts="all")
    assert every.calls == 3_000 and every.left_out == 0 and every.bytes > 5_000_000 and "5 MB" in every.warning
    assert build_report(run, tmp_path / "none.html", transcripts="none").calls == 0
    assert build_report(run, tmp_path / "ten.html", max_calls=10).calls == 10
    (run / "figure.png").write_bytes(bytes(range(256)) * 6_000)  # 1.5 MB of figure: the sample makes room
    crowded = build_report(run, tmp_path / "crowded.html")
    assert crowded.bytes <= 5_000_000 and 0 < crowded.calls < written.calls
    result = runner.invoke(app, ["report", str(run), "--out", str(tmp_path / "cli.html"), "--transcripts", "all"])
    assert result.exit_code == 0 and "warning" in result.output and "3,000 calls" in result.output
    result = runner.invoke(app, ["report", str(run), "--out", str(tmp_path / "x.html"), "--transcripts", "some"])
    assert result.exit_code == 2 and "--transcripts some" in result.output and not (tmp_path / "x.html").exists()


def test_transcripts_are_read_by_pages_from_disk_within_a_memory_bound(tmp_path: Path) -> None:
    from sandbox.viewer.bench_limits import make_long_run

    runs = [make_long_run(tmp_path / f"long-{i}", calls=2_000) for i in range(4)]
    bound = 1 << 20  # 1 MiB: room for about two of these indexes
    reader = Transcripts(max_bytes=bound)
    for run in runs:
        page = reader.query(run / "transcripts.jsonl", offset=1_990, limit=50)
        assert page["total"] == 2_000 and [r["index"] for r in page["rows"]] == list(range(1_990, 2_000))
        assert (
            page["rows"][0]["answer"]
            == json.loads((run / "transcripts.jsonl").read_text().splitlines()[1_990])["answer"]
        )
        assert reader.held_bytes <= bound
    assert 1 <= len(reader._files) < 4  # the oldest let go
    found = reader.query(runs[0] / "transcripts.jsonl", text="DOLLARS", role="user", limit=5)
    assert found["matched"] == sum(1 for i in range(2_000) if i % 6) and len(found["rows"]) == 5
    import tracemalloc

    fresh = Transcripts()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    fresh.query(runs[0] / "transcripts.jsonl")
    real = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert real <= fresh.held_bytes <= 1.5 * real  # the bound is honest: the estimate is not below what is held


def test_a_transcript_without_a_newline_is_scanned_once_and_its_lines_read_when_they_end(tmp_path: Path) -> None:
    file = tmp_path / "transcripts.jsonl"
    file.write_bytes(b"\0" * 3_000_000)  # what a crash can leave: no line ends
    reader = Transcripts()
    assert reader.query(file)["total"] == 0
    index = reader._files[file]
    assert index.offset == 0 and index.scanned == 3_000_000  # the next query reads only what is new
    from sandbox.viewer.catalog import _STATS

    assert _STATS.of(file)["calls"] == 0 and _STATS._seen[file][1:3] == (0, 3_000_000)  # the list's count too
    with file.open("ab") as out:
        out.write(b"\n" + json.dumps({"role": "user", "answer": "hi"}).encode() + b"\n")
    page = reader.query(file)
    assert page["total"] == 2 and page["rows"][0]["corrupt"] and page["rows"][1]["answer"] == "hi"
    assert _STATS.of(file)["calls"] == 2


def test_files_of_a_run_are_served_sandboxed_and_only_images_inline(viewer_root: Path, tmp_path: Path) -> None:
    root = tmp_path / "runs"
    (root / "r").mkdir(parents=True)
    (root / "r" / "summary.json").write_text("{}")
    (root / "r" / "page.html").write_text("<form action='https://example.com'><script>alert(1)</script>")
    (root / "r" / "plot.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    client = _client(root)
    html = client.get("/files/r/page.html")
    assert html.headers["content-disposition"] == "attachment"
    assert (
        html.headers["content-security-policy"].startswith("sandbox;")
        and "form-action 'none'" in html.headers["content-security-policy"]
    )
    svg = client.get("/files/r/plot.svg")
    assert svg.headers["content-disposition"] == "inline" and "sandbox" in svg.headers["content-security-policy"]
    assert "form-action 'none'" in client.get("/").headers["content-security-policy"]


def test_policy_versions_name_the_epoch_they_were_written_from_and_mark_unchanged_ones(tmp_path: Path) -> None:
    from sandbox.viewer.page import render
    from sandbox.viewer.sections import Policies

    run = tmp_path / "scai"
    run.mkdir()
    records = [
        {"run": 0, "version": 0, "epoch": 0, "policy": "Share fairly.", "source": "initial", "evidence": []},
        {"run": 0, "version": 1, "epoch": 1, "policy": "Share half.", "source": "meta", "evidence": ["e0", "e1"]},
        {"run": 0, "version": 2, "epoch": 2, "policy": "Share half.", "source": "meta", "evidence": ["r0-e1-i00000"]},
        {"run": 0, "version": 3, "epoch": 3, "policy": "Share all.", "source": "meta", "evidence": []},
    ]
    (run / "policies.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (run / "episodes.csv").write_text("episode,epoch,offered_share\ne0,0,0.5\ne1,0,0.4\n")
    versions = render(Policies(), run, base="scai", link=str)["runs"][0]["versions"]
    # version 1 holds epoch 0's evidence (from the table); version 2's is read from its id (the table of a run in
    # progress is not written yet); version 3 read none, so it names no epoch
    assert [v["evidence_epochs"] for v in versions] == [[], [0], [1], []]
    assert [v["epoch"] for v in versions] == [0, 1, 2, 3]  # the epoch each is played in
    assert [v["unchanged"] for v in versions] == [False, False, True, False]


def test_the_duration_counts_on_while_a_run_is_held_and_leaves_out_the_time_it_was_killed(tmp_path: Path) -> None:
    import time

    from sandbox.core.run_dir import RunDirectory

    path = tmp_path / "runs" / "r"
    path.mkdir(parents=True)
    (path / "scenario.yaml").write_text("name: r\n")
    catalog = Catalog(tmp_path / "runs")
    with hold(path):
        RunDirectory(path).write_status("running", created=time.time())
        time.sleep(0.3)
        first = catalog.rows()[0]["duration"]
        time.sleep(0.3)
        second = catalog.rows()[0]["duration"]
    assert first >= 0.3 and second >= first + 0.25  # was 0.0 s until the run wrote its status again
    status = json.loads((path / "run.json").read_text())
    status["session_started"] -= 3600  # as if a killed session had run for an hour, its last write 10 s in
    status["active_before"] = 0.0
    (path / "run.json").write_text(json.dumps(status))
    (path / "transcripts.jsonl").write_text("")
    os_time = status["session_started"] + 10
    import os

    os.utime(path / "transcripts.jsonl", (os_time, os_time))
    os.utime(path / "scenario.yaml", (os_time, os_time))
    os.utime(path / "run.json", (os_time, os_time))
    status["updated"] = os_time
    (path / "run.json").write_text(json.dumps(status))
    os.utime(path / "run.json", (os_time, os_time))
    assert abs(Catalog(tmp_path / "runs").rows()[0]["duration"] - 10) < 0.5  # killed: up to its last write
    time.sleep(0.2)
    with hold(path):  # resumed an hour later: the hour it lay killed is not counted
        time.sleep(0.2)
        RunDirectory(path).write_status("complete")
    done = json.loads((path / "run.json").read_text())
    assert 10.1 < done["active_seconds"] < 11 and done["active_before"] == 10.0
    assert abs(Catalog(tmp_path / "runs").rows()[0]["duration"] - done["active_seconds"]) < 0.01
    (path / "report.html").write_text("written a day later")  # not the run's work: changes nothing
    RunDirectory(path).write_status("complete")  # a status written without a hold: changes nothing either
    assert abs(Catalog(tmp_path / "runs").rows()[0]["duration"] - done["active_seconds"]) < 0.01


def test_a_resumed_run_counts_on_only_once_its_new_session_writes_and_an_old_run_keeps_its_time(
    tmp_path: Path,
) -> None:
    import time

    from sandbox.core.run_dir import RunDirectory

    path = tmp_path / "runs" / "r"
    path.mkdir(parents=True)
    (path / "scenario.yaml").write_text("name: r\n")
    day = 86_400
    # killed three days ago after 60 s of work; resumed now, its status not written yet
    killed = {"status": "running", "created": time.time() - 3 * day, "active_before": 0.0}
    killed.update(session_started=killed["created"], updated=killed["created"] + 60, session_pid=1)
    (path / "run.json").write_text(json.dumps(killed))
    os.utime(path / "run.json", (killed["updated"], killed["updated"]))  # its last status, as the killed run wrote it
    catalog = Catalog(tmp_path / "runs")
    with hold(path):
        row = catalog.rows()[0]
        assert row["status"] == "running" and abs(row["duration"] - 60) < 1  # was: three days, counting on
        RunDirectory(path).write_status("running")
        assert 60 <= catalog.rows()[0]["duration"] < 62  # now this session counts on
    # a run from before the sessions were kept: its own seconds are kept when it is resumed
    (path / "run.json").write_text(json.dumps({"status": "stopped", "created": 1.0, "updated": 2.0, "seconds": 3600}))
    with hold(path):
        RunDirectory(path).write_status("complete")
    assert 3600 <= json.loads((path / "run.json").read_text())["active_seconds"] < 3601


def test_a_scenario_nested_100000_deep_is_a_corrupt_row_not_a_crash_of_the_viewer(tmp_path: Path) -> None:
    import subprocess
    import sys

    run = tmp_path / "runs" / "deep-yaml"
    run.mkdir(parents=True)
    (run / "scenario.yaml").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "runs" / "fine").mkdir()
    (tmp_path / "runs" / "fine" / "scenario.yaml").write_text("name: fine\nsociety: {size: 4}\n")
    listing = (
        "import json, sys; from sandbox.viewer.catalog import Catalog; print(json.dumps(Catalog(sys.argv[1]).rows()))"
    )
    done = subprocess.run([sys.executable, "-c", listing, str(tmp_path / "runs")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-500:]  # was -11: libyaml's parser recursed until the process died
    rows = {row["path"]: row for row in json.loads(done.stdout)}
    assert rows["deep-yaml"]["status"] == "corrupt" and "RecursionError" in rows["deep-yaml"]["problem"]
    assert rows["fine"]["scenario"] == "fine"


def test_a_forked_run_shows_its_branches_as_a_tree_and_a_divergence_plot(tmp_path: Path) -> None:
    from tests.viewer_runs import build_family

    root = build_family(tmp_path / "runs").resolve()
    catalog = Catalog(root)
    rows = {row["path"]: row for row in catalog.rows()}
    assert rows["fork"]["fork"] == {"parent": "parent", "at": 3, "unit": "generation"}
    assert rows["parent"]["fork"] is None
    for name in ("parent", "fork", "grandchild"):  # every run of the family shows the whole tree
        page = run_json(root, root / name, catalog)
        assert "error" not in {s["type"] for s in page["sections"]}, page["sections"]
        section = next(s for s in page["sections"] if s["type"] == "branches")
        runs = section["runs"]
        assert [(r["name"], r["parent"], r["at"]) for r in runs] == [
            ("parent", None, None),
            ("fork", 0, 3),
            ("grandchild", 1, 4),
        ]
        assert [r["name"] for r in runs if r["current"]] == [name]
        assert [r["link"] for r in runs] == ["parent", "fork", "grandchild"]
        assert runs[1]["changes"] == "population.revision.beta=5.0" and runs[1]["unit"] == "generation"
        chart = section["chart"]
        assert chart["x_title"] == "generation" and chart["y_title"] == "cooperation"
        assert [m["x"] for m in chart["marks"]] == [3, 4]
        traces = {t["name"]: t for t in chart["traces"]}
        generations = pd.read_csv(root / "parent" / "generations.csv")
        assert traces["parent"]["x"] == list(generations["generation"])  # the root's every step
        assert traces["parent"]["y"] == pytest.approx(list(generations["cooperation"]))
        assert traces["fork"]["x"][0] == 2 and traces["grandchild"]["x"][0] == 3  # from the last step before the fork
        assert traces["fork"]["y"][0] == pytest.approx(generations["cooperation"][2])  # leaving the parent's curve
    # the report of a fork says whose fork it is, and draws the parent's curve
    report = report_data(root / "fork")
    assert report["run"]["row"]["fork"]["parent"] == "parent"
    branches = next(s for s in report["run"]["sections"] if s["type"] == "branches")
    assert {t["name"] for t in branches["chart"]["traces"]} == {"parent", "fork", "grandchild"}
    written = build_report(root / "fork", tmp_path / "fork.html")
    assert written.warning is None and written.bytes < LIMIT_MB * 1_000_000


def test_a_fork_whose_parent_was_deleted_or_whose_table_is_gone_still_renders(tmp_path: Path) -> None:
    import shutil

    from tests.viewer_runs import build_family

    root = build_family(tmp_path / "runs").resolve()
    shutil.rmtree(root / "parent")
    client = _client(root)
    page = client.get("/api/run", params={"path": "fork"}).json()
    assert "error" not in {s["type"] for s in page["sections"]}, page["sections"]
    section = next(s for s in page["sections"] if s["type"] == "branches")
    parent = section["runs"][0]
    assert parent["name"] == "parent" and not parent["exists"] and parent["link"] is None
    assert [r["name"] for r in section["runs"]] == ["parent", "fork", "grandchild"]
    traces = {t["name"]: t for t in section["chart"]["traces"]}
    assert "parent" not in traces and traces["fork"]["x"][0] == 0  # the parent's steps, from the fork's own table
    (root / "fork" / "generations.csv").unlink()
    (root / "grandchild" / "generations.csv").unlink()
    page = client.get("/api/run", params={"path": "grandchild"}).json()
    section = next(s for s in page["sections"] if s["type"] == "branches")
    assert section["chart"] is None and len(section["runs"]) == 3  # no curve to draw: the tree alone
    listed = {row["path"]: row for row in client.get("/api/runs").json()["runs"]}
    assert listed["fork"]["fork"]["parent"] == "parent" and listed["grandchild"]["fork"]["parent"] == "fork"


def test_the_vendored_scripts_are_the_published_ones() -> None:
    import hashlib

    from sandbox.viewer.server import VENDORED, asset

    for name, digest in VENDORED.items():
        assert hashlib.sha256(asset(name)).hexdigest() == digest, name
    licenses = Path(__file__).resolve().parent.parent / "sandbox" / "viewer" / "static"
    assert {"LICENSE-sigma.txt", "LICENSE-graphology.txt"} <= {p.name for p in licenses.iterdir()}


def test_a_population_page_sends_its_network_as_compact_arrays(tmp_path: Path) -> None:
    import base64

    import numpy as np

    from sandbox.core.scenario_files import parse_kind
    from sandbox.population.held import read_held
    from sandbox.population.run import run_population
    from sandbox.viewer.catalog import Catalog
    from sandbox.viewer.server import run_json

    block = {
        "agents": 30,
        "generations": 4,
        "members": [{"strategy": "A", "share": 0.2, "fixed": True}, {"strategy": "B", "share": 0.8}],
        "game": {"kind": "naming", "play": "scripted", "words": ["A", "B"], "stop_at_consensus": False},
        "network": {"kind": "ring_lattice", "k": 4},
        "revision": {"rule": "memory"},
    }
    run = run_population(parse_kind("population", {"name": "net", "seed": 1, "population": block}), tmp_path / "r")
    page = run_json(tmp_path, run.resolve(), Catalog(tmp_path))
    network = next(s for s in page["sections"] if s["type"] == "network")
    held = read_held(run)
    codes = np.frombuffer(base64.b64decode(network["codes"]), dtype=np.uint8).reshape(network["frames"], 30)
    texts = np.array(network["texts"], dtype=object)
    assert [list(texts[row]) for row in codes] == [held.at(g) for g in held.generations]  # what each agent held
    assert network["steps"] == [-1, 0, 1, 2, 3] and len(base64.b64decode(network["edges"])) == 30 * 2 * 2 * 4
    marked = np.frombuffer(base64.b64decode(network["marked"]), dtype=np.uint8)
    assert marked.sum() == 6 and set(texts[codes[0][marked == 1]]) == {"A"}  # the committed agents hold A
    x = np.frombuffer(base64.b64decode(network["x"]), dtype=np.float32)
    assert np.allclose(x, np.cos(2 * np.pi * np.arange(30) / 30), atol=1e-4)  # a ring lattice on a circle
    assert (run / "layout.csv").is_file() and "ring_lattice, k=4" in network["caption"]


def test_lineage_names_the_agent_each_revision_took_from() -> None:
    """The network view's lineage (`lineage_of_run`) from the recorded tables: an LLM game's `revisions.csv` (its
    partner's name read as that generation's agent index) and the scripted matrix game's `lineage.csv`."""
    import pandas as pd

    from sandbox.population.report.lineage import lineage_of_run
    from tests.golden_populations import GOLDEN

    run = GOLDEN / "population" / "donor_imitate_ring"
    lineage = lineage_of_run(run)
    assert lineage is not None
    revisions = pd.read_csv(run / "revisions.csv", keep_default_na=False)
    changed = revisions[revisions["outcome"].isin(["copied", "new", "duplicate"])]
    assert lineage.agents.tolist() == changed["agent"].tolist()
    population = pd.read_csv(run / "population.csv", keep_default_na=False)
    for g, agent, source, how in zip(lineage.generations, lineage.agents, lineage.sources, lineage.how):
        row = changed[(changed["generation"] == g) & (changed["agent"] == agent)].iloc[0]
        if row["partner"]:  # the partner's index among that generation's agents
            named = population[(population["generation"] == g) & (population["name"] == row["partner"])]
            assert source == named["agent"].iloc[0]
        else:
            assert source == -1
        assert lineage.hows[how].startswith("wrote a new norm (rule: " + row["rule"])
    scripted = lineage_of_run(GOLDEN / "population" / "pd_grid_nowak_may")
    assert scripted is not None and len(scripted) == 63 and scripted.hows == ["copied"]
    assert lineage_of_run(GOLDEN / "population" / "naming_small") is None  # the naming game records no source
