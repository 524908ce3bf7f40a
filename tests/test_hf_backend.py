"""The hf: backend through transformers, on a tiny random model built in-process (no hub)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from sandbox.base.errors import ModelUnavailableError
from sandbox.llm.resolve import build_backend
from tests.tiny_lm import build_tiny_lm


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpus = [
        "for the 10 dollars the proposer will get 5 and the responder will get 5",
        "accept reject yes no split apples coins",
        "<system> <user> <assistant>",
    ] * 10
    return build_tiny_lm(tmp_path_factory.mktemp("tiny"), corpus, n_embd=32, n_layer=1, init=0.02)


async def test_generates_with_token_counts_and_seeds(tiny_model: Path) -> None:
    model = build_backend(f"hf:{tiny_model}")
    messages = [SystemMessage("split apples"), HumanMessage("the proposer will get")]
    first = await model.ainvoke(messages, seed=3, temperature=1.0, max_tokens=8)
    again = await model.ainvoke(messages, seed=3, temperature=1.0, max_tokens=8)
    assert first.content == again.content  # the call's seed makes sampling repeatable
    assert first.usage_metadata["input_tokens"] > 0
    assert 0 < first.usage_metadata["output_tokens"] <= 8
    greedy = await model.ainvoke(messages, temperature=0.0, max_tokens=4)
    assert isinstance(greedy.content, str)


async def test_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    model = build_backend(f"hf:{tmp_path / 'nothing'}")
    with pytest.raises(ModelUnavailableError, match="no such model directory"):
        await model.ainvoke([HumanMessage("hi")])


async def test_log_probabilities_from_the_logits(tiny_model: Path) -> None:
    import math

    from sandbox.llm.contracts import TOKEN_LOGPROBS

    model = build_backend(f"hf:{tiny_model}")
    answer = await model.ainvoke([HumanMessage("accept or reject")], temperature=0.0, max_tokens=3, top_logprobs=5)
    entries = answer.response_metadata[TOKEN_LOGPROBS]
    assert 1 <= len(entries) <= 3
    for entry in entries:
        assert len(entry["top"]) <= 5 and sum(math.exp(v) for v in entry["top"].values()) <= 1.0 + 1e-6
        # greedy decoding picks the likeliest token, so its log-probability tops the list
        assert entry["logprob"] == pytest.approx(max(entry["top"].values()), abs=1e-5)
    plain = await model.ainvoke([HumanMessage("accept or reject")], temperature=0.0, max_tokens=3)
    assert TOKEN_LOGPROBS not in plain.response_metadata and plain.content == answer.content
