"""SSA liveness: which names hold (views of) which allocas, where each alloca is last
used, with uses inside loops lifted to the end of the loop and values followed through
views, yields and block arguments (see `ScanSettings`)."""

from __future__ import annotations

from collections.abc import Iterable

from sc_mlir.read.lexicon import _MISSING, _SSA
from sc_mlir.read.regions import Region


class ValueTracking:
    """`Scanner`'s SSA value tracking (state: `tracked`, `constants`, `live_end`,
    `live_end_line`, `def_depth`). Methods of `Scanner`; see `sc_mlir.read.scan`."""

    def _extend(self, ids: Iterable[int]) -> None:
        """These allocas are used up to the op numbered self.order."""
        end = self.order
        live_end = self.live_end
        for aid in ids:
            if live_end[aid] < end:
                live_end[aid] = end
                self.live_end_line[aid] = self.last_op_line

    def _makes_view(self, name: str, operands_and_types: str, generic: bool) -> bool:
        settings = self.settings
        if name in settings.view_ops:
            return True
        if name in settings.non_view_ops:
            return False
        rest = operands_and_types
        if "->" in rest:
            return "memref<" in rest.rsplit("->", 1)[1]
        if generic:
            return True  # result types follow the regions: assume a view
        if " to " in rest:
            return "memref<" in rest.rsplit(" to ", 1)[1]
        if " : " in rest:
            return "memref<" in rest.rsplit(" : ", 1)[1]
        return True

    def _yielded(self, ids: frozenset[int]) -> None:
        """Values yielded out of a region become (aliases among) the owner's results."""
        if len(self.regions) < 2:
            return
        owner = self.regions[-1].owner
        if owner is None or not owner.results:
            return
        parent = self.regions[-2]
        for result in owner.results:
            merged = self.tracked.get(result, frozenset()) | ids
            self._bind(self.tracked, result, merged, parent)

    def _bind(self, table: dict, name: str, value: object, region: Region) -> None:
        region.undo.append((table, name, table.get(name, _MISSING)))
        table[name] = value

    def _shadow(self, names: Iterable[str], region: Region) -> None:
        for name in names:
            if name in self.tracked:
                self._bind(self.tracked, name, frozenset(), region)
                del self.tracked[name]
            if name in self.constants:
                self._bind(self.constants, name, 0, region)
                del self.constants[name]

    def _uses(self, code: str, start: int, end: int, region: Region) -> frozenset[int]:
        """Record uses of tracked values in code[start:end]; return the allocas they reach."""
        tracked = self.tracked
        if not tracked or code.find("%", start, end) < 0:  # not `in code`: n^2 on a long line
            return frozenset()
        found: frozenset[int] = frozenset()
        for token in _SSA.findall(code, start, end):
            ids = tracked.get(token)
            if ids:
                found = found | ids
        if found:
            for aid in found:
                self._use(aid)
        return found

    def _use(self, aid: int) -> None:
        regions = self.regions
        depth = self.def_depth[aid]
        for k in range(depth + 1, len(regions)):
            owner = regions[k].owner
            if owner is not None and owner.loop_like:
                if owner.pending is None:
                    owner.pending = set()
                owner.pending.add(aid)
                break
        else:
            current = regions[-1]
            if current.cur_pending is None:
                current.cur_pending = set()
            current.cur_pending.add(aid)
        current = regions[-1]
        if current.used is None:
            current.used = set()
        current.used.add(aid)
