"""A small registry of named things (games, norms, manners, networks, backends).

Registries let YAML name a thing while Python code can pass the thing itself
(house rule 6). An unknown name is a clear error that lists the known ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownNameError(KeyError):
    """Raised when a registry is asked for a name it does not hold."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the sentence readable
        return str(self.args[0])


class Registry(Generic[T]):
    """A mapping from names to objects, filled by a decorator or by `add`."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def add(self, name: str, item: T) -> T:
        """Register `item` under `name`; a name can be registered only once."""
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = item
        return item

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of `add`."""

        def decorator(item: T) -> T:
            return self.add(name, item)

        return decorator

    def get(self, name: str) -> T:
        """Return the item named `name`, or raise `UnknownNameError` listing the known names."""
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise UnknownNameError(f"unknown {self.kind} {name!r} (known: {known})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._items)
