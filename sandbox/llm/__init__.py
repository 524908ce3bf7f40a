"""The LLM layer: every backend a LangChain chat model, every concern a wrapper with the same interface."""

from sandbox.llm.accounting import TokenLedger
from sandbox.llm.cache import CachedChatModel, ResponseCache
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.llm.errors import TransientLLMError
from sandbox.llm.limit import ConcurrencyLimitedChatModel
from sandbox.llm.record import CallRecord, RecordingChatModel
from sandbox.llm.resolve import BACKENDS, ModelStack, build_backend, check_spec
from sandbox.llm.retry import RetryExhaustedError, RetryingChatModel
from sandbox.llm.sampling import SampledChatModel
from sandbox.llm.scripted import ScriptedChatModel, UnexpectedPromptError, scripted
from sandbox.llm.transcript import (
    TranscriptWriter,
    compact_transcript,
    finalize_transcript,
    read_transcript,
)

__all__ = [
    "BACKENDS",
    "CachedChatModel",
    "CallInfo",
    "CallRecord",
    "ConcurrencyLimitedChatModel",
    "Constraint",
    "ModelStack",
    "RecordingChatModel",
    "ResponseCache",
    "RetryExhaustedError",
    "RetryingChatModel",
    "SampledChatModel",
    "ScriptedChatModel",
    "TokenLedger",
    "TranscriptWriter",
    "TransientLLMError",
    "UnexpectedPromptError",
    "build_backend",
    "check_spec",
    "compact_transcript",
    "finalize_transcript",
    "read_transcript",
    "scripted",
]
