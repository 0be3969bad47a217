"""Where the fast reader (`sc_mlir/read/events.py`) spends its time, part by part.

    python bench/reader_parts.py /tmp/sc-mlir-bench/generic_xla_50mb.mlir [--runs 3]

The reader's parts are timed by wrapping its methods: the location table, regions and ops
(of which the allocation lines), liveness; the rest of the reader is its checks over the
whole text. The first run is a cold one, as the command's (the alloca bodies are parsed
with the grammar once per distinct text, then cached); the later runs, warm, are given as
their minimum. `bench/phases.py` splits the whole command the same way, in fresh
processes. Printed, never asserted; also printed: allocations per MB, which most parts
scale with.
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from collections.abc import Callable
from typing import Any

from sc_mlir.model.dump import LoadSettings
from sc_mlir.read import events

# Parts of the fast reader, timed by wrapping its methods (the wrapper's own cost, well
# under a microsecond per call, lands in the allocation lines' figure).
READER_PARTS = {"_table": "location table", "_structure": "regions, ops, allocas",
                "_alloca": "  of which allocation lines", "_liveness": "liveness"}


def _timed(totals: dict[str, float], name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            totals[name] = totals.get(name, 0.0) + time.perf_counter() - began
    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    totals: dict[str, float] = {}
    for name in READER_PARTS:
        setattr(events._Reader, name, _timed(totals, name, getattr(events._Reader, name)))
    settings = LoadSettings()
    gc.disable()  # as the command reads (support.gcpause)
    runs: list[dict[str, float]] = []
    allocas = 0
    for _ in range(max(args.runs, 2)):
        totals.clear()
        began = time.perf_counter()
        scan = events.read_events(args.file, settings.scan)
        whole = time.perf_counter() - began
        if scan is None:
            raise SystemExit(f"{args.file}: the fast reader declines it (the careful one reads it)")
        allocas = len(scan.allocas)
        parts = {label: totals.get(name, 0.0) for name, label in READER_PARTS.items()}
        parts["checks and the rest"] = whole - sum(
            v for k, v in totals.items() if k != "_alloca")
        runs.append({"fast reader": whole, **parts})
        del scan
        gc.collect()
    size_mb = os.path.getsize(args.file) / 1e6
    print(f"{args.file}: {size_mb:.1f} MB, {allocas} allocations ({allocas / size_mb:.0f} per MB)")
    print(f"{'seconds':<30}{'cold':>8}{'warm (min)':>12}")
    for key in runs[0]:
        warm = min(run[key] for run in runs[1:])
        print(f"{key:<30}{runs[0][key]:>8.3f}{warm:>12.3f}")


if __name__ == "__main__":
    main()
