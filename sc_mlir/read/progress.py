"""Bytes read so far, for the progress of a long read: counted by the scanner as it goes,
in this process and in the worker processes, and summed here for the user's hook.

Workers cannot call the hook (it lives in this process), so each adds what it has scanned
to one shared counter, set up when the worker starts (`start_worker`); this process adds
its own bytes and reports the sum whenever it scans a block or waits for a worker.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type only: reading in one process never loads multiprocessing
    from multiprocessing.sharedctypes import Synchronized

# `(bytes done, bytes in all, file being read)`: the hook `load(progress=...)` calls.
ProgressHook = Callable[[int, int, str], None]
# What a scanner calls with the bytes it has read since its last call.
BytesRead = Callable[[int], None]

_worker_counter: Synchronized | None = None


def start_worker(counter: Synchronized | None) -> None:
    """Initializer of a reading worker: no cyclic GC (see gcpause), and the shared counter
    its scanners add to."""
    global _worker_counter
    gc.disable()
    _worker_counter = counter


def count_in_worker(nbytes: int) -> None:
    """A `BytesRead` for scanners in a worker process (does nothing elsewhere)."""
    if _worker_counter is not None and nbytes:
        with _worker_counter.get_lock():
            _worker_counter.value += nbytes


class ByteProgress:
    """The bytes of a read, from this process and its workers, reported to a hook.

    >>> calls = []
    >>> progress = ByteProgress(lambda done, total, path: calls.append((done, total)), 100)
    >>> read = progress.file("a.mlir")
    >>> read(30); read(30); progress.finish("a.mlir"); progress.complete()
    >>> calls
    [(30, 100), (60, 100), (60, 100), (100, 100)]
    """

    def __init__(self, hook: ProgressHook | None, total: int,
                 shared: Synchronized | None = None) -> None:
        self.hook = hook
        self.total = total
        self.shared = shared
        self.local = 0
        self.path = ""

    def file(self, path: str) -> BytesRead:
        """A `BytesRead` for the scanner of `path` in this process."""
        def read(nbytes: int) -> None:
            self.local += nbytes
            self.path = path
            self.report()
        return read

    def report(self) -> None:
        """Tell the hook the bytes done so far: at most the total (a file read again after
        a failed split counts twice)."""
        if self.hook is None:
            return
        done = self.local + (self.shared.value if self.shared is not None else 0)
        self.hook(min(done, self.total), self.total, self.path)

    def finish(self, path: str) -> None:
        """A file is done: what is read so far is reported."""
        self.path = path
        self.report()

    def complete(self) -> None:
        """Every file is done: the hook hears all the bytes, once more."""
        if self.hook is not None:
            self.hook(self.total, self.total, self.path)
