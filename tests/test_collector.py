"""The garbage collector during a run (`sandbox.base.collector`): what is alive when a run starts and what
survives a full collection is frozen; young garbage is still collected; the outermost block hands it back."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from sandbox.base.collector import during_run


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_a_run_freezes_what_is_alive_and_what_survives_a_full_collection_then_hands_it_back() -> None:
    before = _Node()
    with during_run():
        assert gc.get_freeze_count() > 0
        assert not _walked(before)  # frozen: in no generation the collector walks
        made = _Node()
        assert _walked(made, 0)  # young: the collector walks it
        gc.collect()  # a full collection: its survivors are frozen
        assert not _walked(made)
        with during_run():  # nested (the engine inside the command): the outer block's freezing
            pass
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
    assert _walked(made) and _walked(before)
    assert _freeze_survivors_removed()


def test_young_garbage_is_collected_during_a_run() -> None:
    with during_run():
        for _ in range(100):
            _Node()
        assert gc.collect(0) >= 100  # cycles made and dropped during the run are freed, not frozen


def test_the_command_line_leaves_its_objects_frozen() -> None:
    with during_run(keep=True):
        pass
    assert gc.get_freeze_count() > 0
    assert _freeze_survivors_removed()


def _walked(thing: object, generation: int | None = None) -> bool:
    return any(o is thing for o in gc.get_objects(generation))


def _freeze_survivors_removed() -> bool:
    from sandbox.base import collector

    return collector._freeze_survivors not in gc.callbacks
