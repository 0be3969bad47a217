"""`paused_gc()`: run a block without the cyclic garbage collector.

Reading a dump allocates millions of small objects that all stay alive until the end, and
none of them form reference cycles. CPython's collector still walks them again and again as
they age (a third of the run time on a 50 MB dump). Reference counting frees everything
that is not cyclic either way; the few cycles made meanwhile are collected when the
collector is back on.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
