"""A population's store that keeps a checkpoint a generation, not one a step: what it costs grows with the
generations, not with the generations times the steps.

The generation graph saves a checkpoint after each of its five steps (pair, play, score, revise, record), each the
whole state: 20,000 generations of 50 scripted agents wrote 652 MB beside 36 MB of tables. What a fork, a resume
and a replay read of a finished generation is only its boundary, the checkpoint after `record` (where the next
generation starts: `sandbox.engine.fork_plan` forks there). So when a boundary is saved, the four checkpoints inside
the generation before the last one, and their pending writes, are deleted:

* the last generation keeps its steps: a fork that adds generations at a run's end starts before its revision
  (`Steps.redo`), and a killed run resumes from its last checkpoint, whichever step that is;
* only checkpoints the loop wrote between two boundaries go: a generation that holds a fork's edit (`update`) or
  the run's `input` is kept whole, so a fork's history stays as written;
* a boundary is a checkpoint the loop wrote that changed `generation` (`record`, or the start), marked
  `"boundary": true` in its metadata. Its parent (the pruned `revise` checkpoint) keeps its id in
  `parent_checkpoint_id`, which tells a reader of the history that its writer was `record`
  (`sandbox.engine.fork_plan._at_step`).

A new store is made with `auto_vacuum = INCREMENTAL` and gives the deleted pages back whenever a quarter of the file
is free: SQLite reused too few of them (2,000 generations of 50 agents: 39% of the file's pages were free; the
minimal naming game at 10,000 agents: 55%). A store made before keeps its pages for reuse.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

__all__ = ["BOUNDARY", "GenerationStore"]

BOUNDARY = "boundary"  # metadata key of a generation's boundary checkpoint


class GenerationStore(AsyncSqliteSaver):
    """LangGraph's SQLite checkpointer, pruning each finished generation but the last to its boundary. The ids of the
    loop's checkpoints inside the current and the last generation are kept in memory as they are saved (a resumed
    run prunes from its second boundary on: what came before it stays). `open_store` gives it a serializer that encodes
    each large value of the state once per object (`encodes_once`: a population's steps never change the state in
    place, `sandbox.engine.generations.GenerationGame`)."""

    encodes_once = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._inside: dict[tuple[str, str], list[str]] = {}  # the current generation's steps, by thread
        self._last: dict[tuple[str, str], list[str] | None] = {}  # the last finished generation's

    async def setup(self) -> None:
        if not self.is_setup:  # a new store frees the pages it deletes (no effect once its tables exist)
            await self.conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        await super().setup()

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        loop = metadata.get("source") == "loop"
        boundary = loop and "generation" in new_versions
        if boundary:
            metadata = {**metadata, BOUNDARY: True}
        saved = await super().aput(config, checkpoint, metadata, new_versions)
        thread = (str(config["configurable"]["thread_id"]), config["configurable"]["checkpoint_ns"])
        if boundary:
            doomed = self._last.get(thread)
            self._last[thread] = self._inside.pop(thread, None)
            self._inside[thread] = []
            if doomed:
                await self._delete(thread, doomed)
        elif loop and thread in self._inside:
            self._inside[thread].append(checkpoint["id"])
        else:  # a fork's update, the input: the generation it falls in is kept as written
            self._inside.pop(thread, None)
        return saved

    async def _delete(self, thread: tuple[str, str], doomed: list[str]) -> None:
        marks = ",".join("?" * len(doomed))
        async with self.lock:
            for table in ("checkpoints", "writes"):
                await self.conn.execute(
                    f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id IN ({marks})",
                    (*thread, *doomed),
                )
            await self.conn.commit()
            if await self._pragma("freelist_count") * 4 > await self._pragma("page_count"):
                # a quarter of the file free: give it back (as a script, stepped to its end: run as a statement,
                # the pragma frees one page a call)
                await self.conn.executescript("PRAGMA incremental_vacuum;")

    async def _pragma(self, name: str) -> int:
        async with self.conn.execute(f"PRAGMA {name}") as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0
