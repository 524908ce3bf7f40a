"""Backends by spec string, and the wrapper stack every role's model gets.

`embedded`, `openai:MODEL`, `hf:PATH` and `vllm:MODEL` name backends, and
`rules:FILE.py:FUNCTION` a user's function for a dry pipeline (not an LLM,
`sandbox.llm.rules`); a `scripted` model is never named in a scenario (it is
for tests) but passed as an object through the Python API. `BASE+adapter:DIR` puts a LoRA adapter
(PEFT format, e.g. a distillation's `adapter/`) on a base model named as the
trainers name it (`hf:PATH`, `gguf:FILE`, `embedded`, `smollm2`, `tiny`) and
runs it through transformers. The stack, outer to inner:

    recording (transcript + accounting) -> role sampling
        -> cache -> retry -> concurrency limit -> backend

The part under the sampling wrapper is shared by every role whose spec is the
same, so one limit holds for all of a backend's calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel

from sandbox.base.registry import Registry, UnknownNameError
from sandbox.llm.embedded_tuning import EmbeddedSettings
from sandbox.llm.specs import ADAPTER, split_adapter, split_spec


@dataclass(frozen=True)
class BackendOptions:
    """What a backend needs beyond its spec string: the embedded model's machine settings (a scenario's `embedded:`)."""

    embedded: EmbeddedSettings = field(default_factory=EmbeddedSettings)


# A backend is built from its spec's argument and the options (most backends need none).
BACKENDS: Registry[Callable[[str, BackendOptions], BaseChatModel]] = Registry("model backend")


@BACKENDS.register("embedded")
def _embedded(argument: str, options: BackendOptions) -> BaseChatModel:
    from sandbox.llm.embedded import EmbeddedChatModel

    return EmbeddedChatModel(model_path=argument or None, settings=options.embedded)


@BACKENDS.register("openai")
def _openai(argument: str, _: BackendOptions) -> BaseChatModel:
    from sandbox.llm.openai_compat import openai_chat_model

    return openai_chat_model(argument)


@BACKENDS.register("rules")
def _rules(argument: str, _: BackendOptions) -> BaseChatModel:
    from sandbox.llm.rules import RulesChatModel

    return RulesChatModel(argument=argument)


@BACKENDS.register("hf")
def _hf(argument: str, _: BackendOptions) -> BaseChatModel:
    from sandbox.llm.hf import HFChatModel

    return HFChatModel(path=argument)


@BACKENDS.register("base")
def _base(argument: str, _: BackendOptions) -> BaseChatModel:
    """`base:SPEC`: a trainer's base model (`sandbox.llm.base_model`: smollm2, gguf:FILE, embedded, ...) through
    transformers with no adapter, as a distilled student's untrained twin plays."""
    from sandbox.llm.hf import HFChatModel

    return HFChatModel(path="", base=argument)


@BACKENDS.register("vllm")
def _vllm(argument: str, _: BackendOptions) -> BaseChatModel:
    from sandbox.llm.vllm_backend import VLLMChatModel

    return VLLMChatModel(model=argument)


def _adapted(base: str, adapter: str) -> BaseChatModel:
    from pathlib import Path

    from sandbox.base.errors import ModelUnavailableError
    from sandbox.llm.hf import HFChatModel

    if not (Path(adapter).expanduser() / "adapter_config.json").is_file():
        raise ModelUnavailableError(f"{base}{ADAPTER}{adapter}: no LoRA adapter there (no adapter_config.json)")
    return HFChatModel(path="", base=base, adapter=str(Path(adapter).expanduser()))


def check_spec(spec: str) -> None:
    """Raise `ValueError` (with the known backends) when `spec` names no backend."""
    adapted = split_adapter(spec)
    if adapted is not None:
        from sandbox.llm.base_model import check_base_model_spec  # the base models the trainers load

        check_base_model_spec(adapted[0])
        if not adapted[1]:
            raise ValueError(f"{spec!r}: name the adapter's directory after {ADAPTER}")
        return
    name, argument = split_spec(spec)
    if name == "scripted":
        raise ValueError("the scripted model is for tests only; pass one through the Python API (models=...)")
    try:
        BACKENDS.get(name)
    except UnknownNameError as error:
        raise ValueError(
            f"{error}; write e.g. embedded, openai:gpt-4o-mini, hf:/path/to/model, rules:my_rules.py:answer"
        ) from None
    if name == "base":
        from sandbox.llm.base_model import check_base_model_spec

        check_base_model_spec(argument)
        if argument.partition(":")[0] == "tiny":
            raise ValueError(
                "base:tiny would build a new tiny model with another vocabulary; give the student's "
                "saved base: hf:RUN_DIR/student_base"
            )
        return
    if name == "rules":
        from sandbox.llm.rules import load_rules

        load_rules(argument)  # the file and the function, named when wrong
        return
    if name in {"openai", "hf", "vllm"} and not argument:
        raise ValueError(f"{name} needs an argument: {name}:{'PATH' if name == 'hf' else 'MODEL'}")
    if name == "openai":
        from sandbox.llm.endpoints import parse_endpoints

        parse_endpoints(argument)  # URLs and options, named when wrong


def build_backend(spec: str, options: BackendOptions | None = None) -> BaseChatModel:
    """The bare backend for `spec` (no wrappers)."""
    check_spec(spec)
    adapted = split_adapter(spec)
    if adapted is not None:
        return _adapted(*adapted)
    name, argument = split_spec(spec)
    return BACKENDS.get(name)(argument, options or BackendOptions())


@dataclass
class ModelStack:
    """Builds each role's wrapped model; shares backends, limits and the cache between roles."""

    cache: Any | None
    sinks: Sequence[Any]
    concurrency: int
    max_attempts: int = 5
    base_delay_s: float = 0.5
    timeout_s: float | None = None
    options: BackendOptions = field(default_factory=BackendOptions)
    ledgers: Sequence[Any] = ()  # budget ledgers (`sandbox.llm.budget`) every call that reaches a model counts in
    prices: Mapping[str, Any] = field(default_factory=dict)  # role -> `Price`, for the ledgers' dollars
    _shared: dict[Any, BaseChatModel] = field(default_factory=dict)

    def shared(self, key: Any, backend: BaseChatModel) -> BaseChatModel:
        """cache -> budget -> retry -> limit -> backend, built once per backend key (the budget only with ledgers)."""
        from sandbox.llm.budget import BudgetedChatModel
        from sandbox.llm.cache import CachedChatModel
        from sandbox.llm.limit import ConcurrencyLimitedChatModel
        from sandbox.llm.offline import OfflineChatModel, is_offline
        from sandbox.llm.retry import RetryingChatModel

        if key not in self._shared:
            limited = ConcurrencyLimitedChatModel(inner=backend, max_concurrency=self.concurrency)
            model: BaseChatModel = RetryingChatModel(
                inner=limited, max_attempts=self.max_attempts, base_delay_s=self.base_delay_s, timeout_s=self.timeout_s
            )
            if self.ledgers:
                model = BudgetedChatModel(inner=model, ledgers=list(self.ledgers), prices=dict(self.prices))
            if is_offline():  # a replay: what the cache does not hold is refused here, before any model
                model = OfflineChatModel(inner=model)
            if self.cache is not None:
                model = CachedChatModel(inner=model, responses=self.cache)
            self._shared[key] = model
        return self._shared[key]

    def backends(self) -> list[BaseChatModel]:
        """The bare backends under the shared stacks built so far (specs resolved, model objects given)."""
        from sandbox.llm.wrapper import ChatModelWrapper

        return [m.innermost() if isinstance(m, ChatModelWrapper) else m for m in self._shared.values()]

    def for_role(
        self, role: str, spec: str, sampling: Mapping[str, Any], given: BaseChatModel | None = None
    ) -> BaseChatModel:
        """The full stack for `role`: `given` (a model object) wins over `spec`."""
        from sandbox.llm.record import RecordingChatModel
        from sandbox.llm.sampling import SampledChatModel

        if given is not None:
            shared = self.shared(("object", id(given)), given)
            name = getattr(given, "_llm_type", type(given).__name__)
        else:
            shared = self.shared(("spec", spec), build_backend(spec, self.options))
            name = spec
        sampled = SampledChatModel(inner=shared, **dict(sampling))
        return RecordingChatModel(inner=sampled, sinks=list(self.sinks), role=role, model_name=name)


def model_stack(scenario: Any, cache: Any | None, sinks: Sequence[Any], ledgers: Sequence[Any] = ()) -> ModelStack:
    """The wrapper stack of a scenario's roles (a society, evaluation or labeling scenario): its concurrency limit,
    its embedded model's settings, and its budget ledgers with the roles' prices."""
    return ModelStack(
        cache=cache,
        sinks=list(sinks),
        concurrency=scenario.concurrency,
        options=BackendOptions(embedded=scenario.embedded),
        ledgers=list(ledgers),
        prices=scenario_prices(scenario, by="role"),
    )


@contextmanager
def scratch_model(role: str, spec: str, sampling: Mapping[str, Any]) -> Iterator[BaseChatModel]:
    """`role`'s model of `spec` over a cache in a temporary folder, gone afterwards: for a benchmark, where a
    repeated question is asked once but nothing is kept (no transcript, no budget, one call at a time)."""
    import tempfile

    from sandbox.llm.cache import ResponseCache

    with tempfile.TemporaryDirectory() as scratch:
        cache = ResponseCache(f"{scratch}/cache.sqlite")
        try:
            yield ModelStack(cache=cache, sinks=[], concurrency=1).for_role(role, spec, sampling)
        finally:
            cache.close()


def scenario_prices(scenario: Any, by: str = "spec") -> dict[str, Any]:
    """`Price` of the roles of `scenario` that have one (`models.<role>.price`), by spec or by role (`by`)."""
    models = getattr(scenario, "models", None)
    configs = {
        role: value
        for role, value in (vars(models).items() if models is not None else ())
        if hasattr(value, "spec") and getattr(value, "price", None) is not None
    }
    return {(config.spec if by == "spec" else role): config.price for role, config in configs.items()}
