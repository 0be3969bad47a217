"""Where `sc-mlir analyze FILE --format json` spends its time, phase by phase, in one process.

    python bench/phases.py /tmp/sc-mlir-bench/generic_xla_50mb.mlir [--runs 3]

Phases, each the minimum over `--runs` runs in this process (the imports are timed once,
first): the CLI's imports; the fast reader (`read_events`) and within it the location table,
regions and ops, allocation lines and liveness; building the records; the analyses; the JSON
object and its text. The sum is compared with the whole reading (`load`, which is the reader
and the records together). Printed, never asserted: what `bench/run.py` measures end to end,
this splits up. Also printed: allocations per MB, which is what most phases scale with.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

start = time.perf_counter()
import sc_mlir.cli  # noqa: E402  (the imports are a phase)
import sc_mlir.cli.analyze  # noqa: E402,F401

IMPORTS = time.perf_counter() - start

from sc_mlir.analysis import analyze  # noqa: E402
from sc_mlir.formats.analysis_json import analysis_object  # noqa: E402
from sc_mlir.formats.records import to_json  # noqa: E402
from sc_mlir.model.allocation import build_allocations  # noqa: E402
from sc_mlir.model.dump import LoadSettings, load  # noqa: E402
from sc_mlir.read import events  # noqa: E402

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
    best: dict[str, float] = {}
    settings = LoadSettings()
    allocas = 0
    gc.disable()  # as the CLI reads (support.gcpause), and so that runs compare
    for _ in range(args.runs):
        totals.clear()
        figures: dict[str, float] = {}
        began = time.perf_counter()
        scan = events.read_events(args.file, settings.scan)
        figures["fast reader"] = time.perf_counter() - began
        if scan is None:
            raise SystemExit(f"{args.file}: the fast reader declines it (the careful one reads it)")
        allocas = len(scan.allocas)
        figures.update({READER_PARTS[k]: v for k, v in totals.items()})
        began = time.perf_counter()
        build_allocations(scan, settings.model)
        figures["records"] = time.perf_counter() - began
        del scan
        began = time.perf_counter()
        dump = load(args.file, settings=settings)
        figures["load (reader + records)"] = time.perf_counter() - began
        began = time.perf_counter()
        analysis = analyze(dump, None)
        figures["analyses"] = time.perf_counter() - began
        began = time.perf_counter()
        report = analysis_object(analysis, args.file, False, None)
        figures["JSON object"] = time.perf_counter() - began
        began = time.perf_counter()
        to_json(report)
        figures["JSON text"] = time.perf_counter() - began
        del dump, analysis, report
        gc.collect()
        for key, value in figures.items():
            best[key] = min(best.get(key, value), value)
    size_mb = __import__("os").path.getsize(args.file) / 1e6
    print(f"{args.file}: {size_mb:.1f} MB, {allocas} allocations ({allocas / size_mb:.0f} per MB); "
          f"seconds, min of {args.runs}")
    print(f"{'imports (CLI, JSON path)':<34}{IMPORTS:>7.3f}")
    for key in ("fast reader", *READER_PARTS.values(), "records", "load (reader + records)",
                "analyses", "JSON object", "JSON text"):
        if key in best:
            print(f"{key:<34}{best[key]:>7.3f}")
    total = IMPORTS + best["load (reader + records)"] + best["analyses"] + best["JSON object"] \
        + best["JSON text"]
    print(f"{'sum (imports, load, analyses, JSON)':<34}{total:>7.3f}")


if __name__ == "__main__":
    main()
