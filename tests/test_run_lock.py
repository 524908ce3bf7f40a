"""A run directory is held by one process at a time: a second writer exits 2 naming the holder; a killed holder
leaves nothing behind that blocks the next."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from sandbox.base.errors import UsageError
from sandbox.core.run_dir import hold
from tests.loopback_openai import loopback_openai
from tests.test_kill_and_resume import SANDBOX, SCENARIO, answer

HOLDER = "from sandbox.core.run_dir import hold\nimport sys, time\nwith hold(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(120)\n"


def test_a_second_process_is_refused_and_a_killed_holder_blocks_nothing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(UsageError, match=f"in use by process {holder.pid}"):
            with hold(run):
                pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with hold(run):  # the kernel dropped the killed holder's lock
        with hold(run):  # and holds nest within a process
            pass
    assert list(run.iterdir()) == []  # holding writes no file


def test_hold_of_what_is_not_a_run_directory_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a run directory"):
        with hold(tmp_path / "nowhere", create=False):
            pass
    assert not (tmp_path / "nowhere").exists()


def test_two_resumes_of_one_directory_at_once(tmp_path: Path) -> None:
    scenario = tmp_path / "killed.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    second_done = threading.Event()
    blocking = {"on": False}

    def held_answer(body: dict[str, Any]) -> str:  # the first resume waits in its calls until the second has tried
        if blocking["on"]:
            second_done.wait(timeout=120)
        return answer(body)

    with loopback_openai(held_answer, latency_s=0.05) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "test"}
        cut = tmp_path / "cut"
        first = subprocess.Popen(
            [SANDBOX, "run", str(scenario), "--out", str(cut)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        first.send_signal(signal.SIGKILL)  # a killed run: its lock must not block the resumes below
        first.wait()
        assert not (cut / "summary.json").exists()
        blocking["on"] = True
        server.requests.clear()
        one = subprocess.Popen(
            [SANDBOX, "resume", str(cut)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        try:
            two = subprocess.run([SANDBOX, "resume", str(cut)], env=env, capture_output=True, text=True, check=False)
        finally:
            second_done.set()
        assert two.returncode == 2, two.stderr
        assert f"in use by process {one.pid}" in " ".join(two.stderr.split()) and "resume" in two.stderr
        _, err = one.communicate(timeout=120)
        assert one.returncode == 0, err
    assert (cut / "summary.json").is_file()


def test_another_thread_of_the_process_is_refused_too(tmp_path: Path) -> None:
    run = tmp_path / "run"
    refused: list[str] = []
    with hold(run):

        def other() -> None:
            try:
                with hold(run):
                    pass
            except UsageError as error:
                refused.append(str(error))

        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert refused and "another thread or task of this process" in refused[0]
    with hold(run):  # released: the next holder of this thread gets it
        pass
