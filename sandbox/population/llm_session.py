"""What every LLM population run holds while it plays: the run's cache, transcript, ledgers and model stack, and
what happens when it stops.

`llm_session(run_dir, scenario, ledgers, models)` yields a function that
returns the model of a role (`"user"`, `"judge"`), a given model object
(`models[role]`, for tests and notebooks) or the scenario's spec through the
stack. On an error the run is marked failed and `RunFailedError` says how to
resume it; on an interrupt (Ctrl-C, a kill, a budget reached) it is marked
interrupted and the interrupt goes on; the transcript and the cache are
closed either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.language_models import BaseChatModel

from sandbox import run_dir as layout
from sandbox.errors import RunFailedError
from sandbox.llm.cache import ResponseCache
from sandbox.llm.resolve import model_stack
from sandbox.llm.transcript import TranscriptWriter
from sandbox.run_dir import RunDirectory

__all__ = ["llm_session"]


@contextmanager
def llm_session(run_dir: RunDirectory, scenario: Any, ledgers: Sequence[Any],
                models: Mapping[str, BaseChatModel]) -> Iterator[Callable[[str], BaseChatModel]]:  # fmt: skip
    from sandbox.run_budget import budget_stop, run_ledgers

    path = run_dir.path
    cache = ResponseCache(path / layout.CACHE)
    transcript = TranscriptWriter(path / layout.TRANSCRIPTS)
    stack = model_stack(scenario, cache, [transcript], run_ledgers(run_dir, scenario, ledgers))

    def model(role: str) -> BaseChatModel:
        config = getattr(scenario.models, role)
        return stack.for_role(role, config.spec, config.sampling.model_dump(), given=models.get(role))

    try:
        yield model
    except BaseException as error:
        budget_stop(run_dir, [error])
        failed = isinstance(error, Exception)
        run_dir.write_status("failed" if failed else "interrupted", error=f"{type(error).__name__}: {error}")
        if failed:
            raise RunFailedError(f"population failed: {type(error).__name__}: {error}\n"
                                 f"The run directory is resumable: sandbox resume {path}") from error  # fmt: skip
        raise
    finally:
        transcript.close()
        cache.close()
