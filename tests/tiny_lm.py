"""The tiny in-process model of the tests (it lives in `sandbox.llm.tiny_model`, which scenario files use too)."""

from sandbox.llm.tiny_model import (
    CHAT_TEMPLATE,
    MATRIX_VOCABULARY,
    build_tiny_lm,
    tiny_lm,
)

__all__ = ["CHAT_TEMPLATE", "MATRIX_VOCABULARY", "build_tiny_lm", "tiny_lm"]
