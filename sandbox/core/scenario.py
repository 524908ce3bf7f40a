"""The fields every scenario file shares, declared once, and the models per role that LLM kinds call.

* `NamedScenario`: `name`, `description`, `seed` (and `tracking:`, from `ScenarioModel`): every kind's file.
* `LLMScenario`: those, and `concurrency`, `budget`, `models`, `embedded`: the file of a kind that calls LLMs
  (a society, a labeling, a dialogue, a population). A kind whose roles differ declares its own `models`.
* `Models`, `ModelConfig`, `Sampling`: which model plays each role (`--model ROLE=SPEC`) and how it samples.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from sandbox.base.scenario_model import ScenarioModel, StrictModel
from sandbox.llm.budget import Budget, Price
from sandbox.llm.embedded_tuning import EmbeddedSettings

__all__ = [
    "ROLES",
    "LLMScenario",
    "ModelConfig",
    "Models",
    "NamedScenario",
    "Role",
    "Sampling",
    "model_config_from_shorthand",
]

Role = Literal["user", "assistant", "meta", "judge", "policy"]
ROLES: tuple[str, ...] = ("user", "assistant", "meta", "judge", "policy")


class Sampling(StrictModel):
    """Sampling parameters sent with every call of a role."""

    temperature: float = Field(0.2, ge=0.0, le=2.0, description="Sampling temperature.")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    max_tokens: int = Field(96, ge=1, le=8192, description="Most new tokens per answer.")


class ModelConfig(StrictModel):
    """Which model plays a role, and how it samples."""

    spec: str = Field(
        "embedded",
        description="Backend spec: embedded, openai:MODEL, openai:MODEL@URL1,URL2 (a pool "
        "of endpoints), hf:PATH, vllm:MODEL.",
    )
    sampling: Sampling = Field(default_factory=Sampling)
    price: Price | None = Field(None, description="US dollars per million tokens ({input, output}), for budget.usd.")

    @model_validator(mode="before")
    @classmethod
    def _limits(cls, data: Any) -> Any:
        """`requests_per_minute: N` and `tokens_per_minute: N` (with `spec: openai:...`) are written into the spec's
        options: openai:MODEL?requests_per_minute=N (`sandbox.llm.endpoints`)."""
        if not isinstance(data, dict) or not {"requests_per_minute", "tokens_per_minute"} & set(data):
            return data
        data = dict(data)
        spec = str(data.get("spec", ""))
        options = []
        for key in ("requests_per_minute", "tokens_per_minute"):
            if key in data:
                if not spec.startswith("openai:"):
                    raise ValueError(f"{key} goes with spec: openai:MODEL (an endpoint's limit), not {spec!r}")
                value = data.pop(key)
                if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                    raise ValueError(f"{key} is a number of a minute above 0, not {value!r}")
                options.append(f"{key}={value:g}")
        data["spec"] = spec + ("&" if "?" in spec else "?") + "&".join(options)
        return data

    @model_validator(mode="before")
    @classmethod
    def _endpoints(cls, data: Any) -> Any:
        """`endpoints: [URL1, URL2]` (with `spec: openai:MODEL`) is written into the spec: openai:MODEL@URL1,URL2."""
        if not isinstance(data, dict) or "endpoints" not in data:
            return data
        data = dict(data)
        urls = data.pop("endpoints")
        spec = str(data.get("spec", ""))
        if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
            raise ValueError(
                "endpoints is a list of base URLs, e.g. [http://10.0.0.1:8000/v1, http://10.0.0.2:8000/v1]"
            )
        if not spec.startswith("openai:") or "@" in spec:
            raise ValueError(f"endpoints go with spec: openai:MODEL (without @URLs), not {spec!r}")
        model, _, options = spec.partition("?")
        data["spec"] = f"{model}@{','.join(urls)}" + (f"?{options}" if options else "")
        return data

    @field_validator("spec")
    @classmethod
    def _known_backend(cls, spec: str) -> str:
        from sandbox.llm.resolve import (
            check_spec,  # late import: the LLM layer imports this module
        )

        check_spec(spec)
        return spec


def model_config_from_shorthand(value: Any) -> Any:
    return {"spec": value} if isinstance(value, str) else value


class Models(StrictModel):
    """Models per role. A role may be given as a bare spec string."""

    user: ModelConfig = Field(default_factory=ModelConfig)
    assistant: ModelConfig = Field(default_factory=ModelConfig)
    meta: ModelConfig = Field(default_factory=ModelConfig)
    judge: ModelConfig = Field(default_factory=ModelConfig)
    policy: ModelConfig = Field(default_factory=ModelConfig)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {key: model_config_from_shorthand(value) for key, value in data.items()}
        return data


class NamedScenario(ScenarioModel):
    """The fields of every kind's scenario file: its name, what it is, and the root of its seed tree."""

    name: str = Field(..., pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Used in run directory names.")
    description: str = ""
    seed: int = Field(0, ge=0, description="Root of the run's seed tree: every random draw is addressed from it.")


class LLMScenario(NamedScenario):
    """The fields of a scenario file whose runs call LLMs: how many calls in flight, the budget, the models per role
    and the embedded model's settings, beside the name, description and seed."""

    concurrency: int = Field(8, ge=1, le=4096, description="Most LLM calls in flight at once.")
    budget: Budget = Field(
        default_factory=Budget,
        description="Caps on the run's LLM calls, tokens and dollars; a run that reaches one stops, resumable.",
    )
    models: Models = Field(default_factory=Models)
    embedded: EmbeddedSettings = Field(
        default_factory=EmbeddedSettings, description="Slots, threads and prompt cache of the embedded model."
    )
