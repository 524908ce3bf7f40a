"""The LLM layer's own errors, below every backend and wrapper (the retry wrapper retries the transient ones)."""

from __future__ import annotations

__all__ = ["TransientLLMError"]


class TransientLLMError(RuntimeError):
    """A failure worth retrying, raised by the sandbox's own backends."""
