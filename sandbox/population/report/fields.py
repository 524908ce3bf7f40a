"""The field reference of the `population:` block, written from the settings models themselves: the block's shared
fields, its members, revision and network, and every registered game's `game:` fields (type, default, description).

`python -m sandbox.population.report.fields` prints it; `docs/reference/population-fields.md` is its output, and a
test holds the page to what the models say now (a field added, renamed or described anew changes the page).
"""

from __future__ import annotations

import enum
import re
import types
import typing

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

__all__ = ["field_table", "population_fields"]

HEADER = "| field | type | default | description |\n|---|---|---|---|"


def _type(annotation: object) -> str:
    """An annotation as a reader writes it: `int`, `float | None`, `list[Member]`, `"a" | "b"` for a Literal."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" if not isinstance(a, str) else f'"{a}"' for a in args)
    if origin is typing.Annotated:
        return _type(args[0])
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(_type(a) for a in args)}]"
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type):
        return annotation.__name__
    return re.sub(r"\b(?:[a-z_]+\.)+", "", str(annotation))


def _default(info: FieldInfo) -> str:
    if info.default is PydanticUndefined:
        return "required" if info.default_factory is None else "(its own defaults)"
    value = info.default
    if isinstance(value, enum.Enum):
        value = value.value
    return f"`{value!r}`" if not isinstance(value, str) else f'`"{value}"`'


def field_table(model: type[BaseModel], skip: tuple[str, ...] = ()) -> str:
    """A Markdown table of `model`'s fields: name, type, default and description (one line each)."""
    rows = [HEADER]
    for name, info in model.model_fields.items():
        if name in skip:
            continue
        text = " ".join((info.description or "").split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {_type(info.annotation)} | {_default(info)} | {text} |")
    return "\n".join(rows)


def population_fields() -> str:
    """The whole reference page, in Markdown."""
    from sandbox.population.registry import games
    from sandbox.population.settings import Member, PopulationSettings, Revision
    from societies.society_block import Network

    parts = [
        "# The population block's fields",
        "",
        "Written from the settings models by `python -m sandbox.population.report.fields` (a test holds this page "
        "to them). The guide is [Emergent norms in populations](../methods/population.md).",
        "",
        "## `population:`",
        "",
        field_table(PopulationSettings, skip=("game",)),
        "",
        "`game:` holds one game's settings, chosen by its `kind` (below).",
        "",
        "### `population.members[]`",
        "",
        field_table(Member),
        "",
        "### `population.revision`",
        "",
        field_table(Revision),
        "",
        "### `population.network`",
        "",
        field_table(Network),
    ]
    for kind, entry in games().items():
        parts += ["", f"## `game: {{kind: {kind}}}`", "", entry.title + ".", "", field_table(entry.spec_class())]
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    print(population_fields(), end="")
