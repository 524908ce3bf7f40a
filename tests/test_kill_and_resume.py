"""A run killed with SIGKILL mid-epoch resumes to the same results (CLI, real HTTP, loopback server)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import yaml

from sandbox import RunResult
from tests.conftest import scripted_propose, scripted_respond
from tests.loopback_openai import loopback_openai

SANDBOX = str(Path(sys.executable).parent / "sandbox")
SCENARIO = {
    "name": "killed",
    "seed": 13,
    "runs": 2,
    "epochs": 2,
    "concurrency": 2,
    "models": {"user": "openai:loopback"},
    "society": {
        "size": 10,
        "norms": [{"norm": "selfish", "proportion": 0.5}, {"norm": "fair", "proportion": 0.5}],
    },
}


def answer(body: dict[str, Any]) -> str:
    messages = [SimpleNamespace(content=m["content"]) for m in body["messages"]]
    last = messages[-1].content
    return scripted_propose(messages, {}) if "You are the proposer" in last else scripted_respond(messages, {})


def test_sigkill_then_resume(tmp_path: Path) -> None:
    scenario = tmp_path / "killed.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    with loopback_openai(answer, latency_s=0.05) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "test"}
        whole = subprocess.run(
            [SANDBOX, "run", str(scenario), "--out", str(tmp_path / "whole")],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert whole.returncode == 0, whole.stderr
        calls_whole = len(server.requests)

        server.requests.clear()
        process = subprocess.Popen(
            [SANDBOX, "run", str(scenario), "--out", str(tmp_path / "cut")],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < calls_whole // 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert 0 < len(server.requests) < calls_whole
        assert not (tmp_path / "cut" / "summary.json").exists()

        server.requests.clear()
        resumed = subprocess.run(
            [SANDBOX, "resume", str(tmp_path / "cut")], env=env, capture_output=True, text=True, check=False
        )
        assert resumed.returncode == 0, resumed.stderr
        # finished episodes were not asked again
        assert len(server.requests) < calls_whole

    a, b = RunResult.load(tmp_path / "whole"), RunResult.load(tmp_path / "cut")
    pd.testing.assert_frame_equal(a.metrics, b.metrics)
    pd.testing.assert_frame_equal(a.episodes, b.episodes)
    columns = ["call_id", "messages", "answer", "seed"]
    pd.testing.assert_frame_equal(a.transcripts[columns], b.transcripts[columns])
