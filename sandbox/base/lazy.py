"""Names a package exports but imports on first use (PEP 562's module `__getattr__`), so that importing the package
stays cheap: a package lists `{name: "module.path"}` and its `__getattr__` calls `lazy_attribute`.

>>> lazy_attribute("demo", {"sqrt": "math"}, "sqrt")(4.0)
2.0
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_attribute"]


def lazy_attribute(package: str, exports: Mapping[str, str], name: str) -> Any:
    """`name` from the module `exports[name]` names, imported now; `AttributeError` (as Python's) for another name."""
    if name not in exports:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return getattr(import_module(exports[name]), name)
