"""A labeling run on the embedded model: the labels and accuracies are real, and the notebook reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from sandbox.core.scenario_files import load_scenario
from sandbox.proxy.label_run import label_scenario
from sandbox.proxy.scenario import apply_proxy_overrides
from sandbox.rewards.objectives import Offer, correct_response
from tests.test_notebooks import execute_notebook

NOTEBOOK = Path(__file__).parent.parent / "notebooks" / "proxy_rewards.ipynb"


@pytest.mark.slow(seconds=41)
def test_the_embedded_judge_labels_a_small_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = apply_proxy_overrides(
        load_scenario("scenarios/proxy/ultimatum/share30_10_examples.yaml", kind="proxy"), test_items=6
    )
    path = label_scenario(scenario, tmp_path / "runs" / "share30")
    labels = pd.read_csv(path / "labels.csv")
    llm = labels[labels["condition"] == "llm"]
    assert len(llm) == 6 and llm["parsed"].all()
    # the truth is the objective's, recomputed from the shown amounts
    for row in llm.itertuples():
        assert row.truth == (
            correct_response("reject_below_share", Offer(row.proposer, row.responder), threshold=0.3) == "reject"
        )
    # graded from the embedded model's log-probabilities: a probability, with real mass on Yes/No
    assert (llm["source"] == "logprob").all() and llm["p_yes"].between(0, 1).all() and (llm["mass"] > 0.01).all()
    assert (llm["label"] == (llm["answer"] == "Yes")).all()
    accuracy = pd.read_csv(path / "accuracy.csv").set_index("condition")
    assert accuracy.loc["llm", "accuracy"] == pytest.approx((llm["label"] == llm["truth"]).mean())
    summary = json.loads((path / "summary.json").read_text())
    records = [json.loads(line) for line in (path / "transcripts.jsonl").read_text().splitlines()]
    assert summary["judge_calls"] == len(records) == 12 and all(r["model"] == "embedded" for r in records)
    assert summary["judge_prompt_cached_tokens"] > 0  # the shared examples are computed once
    monkeypatch.setenv("PROXY_RUNS", str(tmp_path / "runs"))
    outputs = execute_notebook(NOTEBOOK)
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)
