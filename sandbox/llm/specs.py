"""Model spec strings (`embedded`, `openai:MODEL@URL`, `hf:PATH`, `BASE+adapter:DIR`): split them and say the
extras each needs, without importing a backend (the kinds' registry reads them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ADAPTER", "RULES", "not_an_llm", "spec_extras", "split_adapter", "split_spec"]

ADAPTER = "+adapter:"
RULES = "rules"  # `rules:FILE.py:FUNCTION`: a user's function for a dry pipeline, not an LLM (`sandbox.llm.rules`)


def split_adapter(spec: str) -> tuple[str, str] | None:
    """`embedded+adapter:runs/x/adapter` -> (`embedded`, `runs/x/adapter`); None for a spec without an adapter."""
    base, sep, adapter = spec.partition(ADAPTER)
    return (base.strip(), adapter.strip()) if sep else None


def split_spec(spec: str) -> tuple[str, str]:
    """`openai:gpt-4o` -> (`openai`, `gpt-4o`); `embedded` -> (`embedded`, ``)."""
    name, _, argument = spec.partition(":")
    return name.strip(), argument.strip()


def spec_extras(spec: str) -> list[str]:
    """The optional extras (`sandbox.base.extras`) a model spec needs: transformers models (`hf:`, `base:`, an adapter)
    need train, SmolLM2 its package too, `vllm:` the vllm extra; the embedded model and endpoints need none.

    >>> spec_extras("embedded"), spec_extras("hf:runs/x/student"), spec_extras("smollm2+adapter:runs/a"), spec_extras("vllm:m")
    ([], ['train'], ['train', 'smollm2'], ['vllm'])
    """
    adapted = split_adapter(spec)
    name, argument = split_spec(adapted[0] if adapted else spec)
    if adapted is None and name not in {"hf", "base", "vllm", "smollm2"}:
        return []
    if name == "vllm":
        return ["vllm"]
    base = argument if name == "base" else adapted[0] if adapted else spec
    return ["train"] + (["smollm2"] if base.strip() == "smollm2" else [])


def not_an_llm(models: Any) -> dict[str, str]:
    """The roles of a scenario's `models` (as in its YAML: role -> a spec, or a mapping with `spec`) that a `rules:`
    model plays, with their specs.

    >>> not_an_llm({"user": {"spec": "rules:r.py:answer"}, "meta": "embedded"})
    {'user': 'rules:r.py:answer'}
    """
    found = {}
    for role, config in (models or {}).items() if isinstance(models, Mapping) else ():
        spec = config.get("spec") if isinstance(config, Mapping) else config
        if isinstance(spec, str) and spec.partition(":")[0].strip() == RULES:
            found[str(role)] = spec
    return found
