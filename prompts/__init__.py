"""Every prompt of the sandbox, as jinja2 templates rendered in a sandboxed, strict environment.

Templates live beside this module (`*.j2`) and ship as package data. An
undefined variable is an error, never an empty string.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

__all__ = ["TEMPLATE_DIR", "environment", "render", "render_once", "round_units", "template_names"]

TEMPLATE_DIR = Path(__file__).parent


def round_units(value: float) -> str:
    """A quantity as a prompt shows it: whole numbers without a decimal point, others to at most 2 places.

    >>> round_units(10.0), round_units(12.5), round_units(1 / 3), round_units(1234567.891)
    ('10', '12.5', '0.33', '1234567.89')
    """
    return f"{float(value):.2f}".rstrip("0").rstrip(".")


@lru_cache(maxsize=1)
def environment() -> SandboxedEnvironment:
    """The shared template environment (filter `round_units`)."""
    env = SandboxedEnvironment(
        loader=FileSystemLoader(str(TEMPLATE_DIR)),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        autoescape=False,
        auto_reload=False,  # templates are package data; no stat() of the file on every render
    )
    env.filters["round_units"] = round_units
    return env


def render(name: str, **variables: Any) -> str:
    """Render template `name` (for example `ultimatum/propose.j2`) with `variables`, stripped."""
    return environment().get_template(name).render(**variables).strip()


def render_once(name: str, **variables: Any) -> str:
    """`render`, remembered for the last 4,096 distinct calls: for a template a population renders with the same
    few values thousands of times (a member's principle, the words offered). The values must be hashable
    (a tuple for a list)."""
    return _render_once(name, tuple(sorted(variables.items())))


@lru_cache(maxsize=4096)
def _render_once(name: str, variables: tuple[tuple[str, Any], ...]) -> str:
    return render(name, **dict(variables))


def template_names() -> list[str]:
    """Every template shipped, relative to the template directory."""
    return sorted(str(p.relative_to(TEMPLATE_DIR)) for p in TEMPLATE_DIR.rglob("*.j2"))
