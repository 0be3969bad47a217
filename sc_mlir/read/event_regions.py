"""What the parts of the fast reader share: a region as the reader meets it, and the
exception by which any part declines a file (the careful reader then reads it)."""

from __future__ import annotations

from sc_mlir.read.records import OpFrame


class Unvouched(Exception):
    """The text has a shape the fast reader does not vouch for."""


class Region:
    __slots__ = ("child_counts", "depth", "end", "frames_cache", "generic", "had_ops",
                 "labels", "ops_at_open", "owner", "parent", "start")

    def __init__(self, owner: OpFrame | None, parent: Region | None, depth: int,
                 start: int, generic: bool) -> None:
        self.owner = owner
        self.parent = parent
        self.depth = depth
        self.start = start
        self.end = -1
        self.generic = generic  # opened by `({`: its op's `(` stays open
        self.had_ops = False
        self.ops_at_open = 0
        self.labels = 0
        self.frames_cache: tuple[OpFrame, ...] | None = None
        self.child_counts: dict[str, int] = {}

    @property
    def frames(self) -> tuple[OpFrame, ...]:
        if self.frames_cache is None:
            self.frames_cache = tuple(self.owner.ancestors()) if self.owner else ()
        return self.frames_cache
