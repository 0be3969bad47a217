"""What the parts of the fast reader share: a region as the reader meets it, and the
exception by which any part declines a file (the careful reader then reads it)."""

from __future__ import annotations

from sc_mlir.read.records import OpFrame


class Unvouched(Exception):
    """The text has a shape the fast reader does not vouch for."""


class Region:
    __slots__ = ("child_counts", "depth", "end", "frames_cache", "generic", "labels",
                 "ops_at_open", "owner", "parent", "start")

    def __init__(self, owner: OpFrame | None, parent: Region | None, depth: int,
                 start: int, generic: bool, ops_at_open: int = 0) -> None:
        self.owner = owner
        self.parent = parent
        self.depth = depth
        self.start = start
        self.end = -1
        self.generic = generic  # opened by `({`: its op's `(` stays open
        self.ops_at_open = ops_at_open  # the body's ops up to its opening line
        self.labels = 0
        self.frames_cache: tuple[OpFrame, ...] | None = None
        # Its region-holding ops so far, by name (None until it has one: most have none).
        self.child_counts: dict[str, int] | None = None

    @property
    def frames(self) -> tuple[OpFrame, ...]:
        """Its owner's ancestors, outermost first (`OpFrame.ancestors`): its parent's frames
        and its owner, as its owner is an op of its parent region."""
        frames = self.frames_cache
        if frames is None:
            # Up to the nearest region whose frames are known (no recursion: regions nest
            # as deep as the text does), then down again.
            unknown: list[Region] = []
            region: Region | None = self
            while region is not None and region.owner is not None:
                if region.frames_cache is not None:
                    break
                unknown.append(region)
                region = region.parent
            frames = region.frames_cache if region is not None and region.frames_cache else ()
            # The regions on the way keep their frames too (their other regions' allocas
            # then find them), but only near the top: each keeps a tuple of its depth, and
            # a chain of 10,000 nested regions would keep 50 million items (400 MB).
            for below in reversed(unknown):
                frames = (*frames, below.owner)  # type: ignore[has-type]
                if len(frames) <= _FRAMES_KEPT_DEPTH:
                    below.frames_cache = frames
            self.frames_cache = frames
        return frames


# Regions at most this deep keep their frames when a region below them works its own out.
_FRAMES_KEPT_DEPTH = 64
