"""Benchmark: where `sc-mlir analyze --format json` spends its time after the reader.

    python bench/phases.py FILE [FILE ...] [--runs 3]

Each run is a fresh process (no cache warmed by an earlier run) that times, in turn, the
imports of the command line, the reader (`read_events`, the fast reader alone), building
the records (`build_allocations`), the analysis, the JSON object (which resolves the
locations the report shows) and its text. The cyclic collector is off, as in the command.
Printed: the median of `--runs` runs per phase, and each phase as a ratio of the reader's
time measured in the same runs (once the reader is fast, the phases after it must stay
well under it). Nothing here is a test: timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import compile_bytecode  # bench/ is not a package

PHASES = ("imports", "read_events", "build", "analyze", "object", "dumps")


def one_run(path: str) -> dict[str, float]:
    """The phases of one run, in this process (called in a fresh process by `main`)."""
    import gc

    start = time.perf_counter()
    import sc_mlir.cli.analyze  # noqa: F401  (what the command imports)
    from sc_mlir.cli import main  # noqa: F401

    imported = time.perf_counter()
    from sc_mlir.analysis import analyze
    from sc_mlir.formats.analysis_json import analysis_object
    from sc_mlir.formats.records import to_json
    from sc_mlir.model.allocation import build_allocations
    from sc_mlir.model.dump import Dump, FileSummary, LoadSettings
    from sc_mlir.read.events import read_events

    gc.disable()
    settings = LoadSettings()
    marks = [time.perf_counter()]
    scan = read_events(path, settings.scan)
    if scan is None:
        raise SystemExit(f"{path}: the fast reader does not vouch for this file")
    marks.append(time.perf_counter())
    records, notes = build_allocations(scan, settings.model)
    marks.append(time.perf_counter())
    dump = Dump(path, records, [FileSummary(path, scan.lines, scan.ops, len(scan.allocas))],
                notes, settings)
    analysis = analyze(dump)
    marks.append(time.perf_counter())
    document = analysis_object(analysis, path)
    marks.append(time.perf_counter())
    to_json(document)
    marks.append(time.perf_counter())
    spans = [imported - start] + [b - a for a, b in pairwise(marks)]
    return dict(zip(PHASES, spans, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    compile_bytecode()
    if args.one:
        print(json.dumps(one_run(args.files[0])))
        return
    print(f"medians of {args.runs} run(s), s; x: the phase / read_events in the same runs")
    print(f"{'file':28}" + "".join(f"{p:>13}" for p in PHASES) + f"{'after reader':>14}")
    for path in args.files:
        runs = []
        for _ in range(args.runs):
            done = subprocess.run([sys.executable, __file__, "--one", path],
                                  capture_output=True, text=True, check=True)
            runs.append(json.loads(done.stdout.splitlines()[-1]))
        median = {p: statistics.median(r[p] for r in runs) for p in PHASES}
        after = sum(median[p] for p in PHASES if p not in ("imports", "read_events"))
        reader = median["read_events"] or float("nan")
        name = path.rsplit("/", 1)[-1][:27]
        print(f"{name:28}" + "".join(f"{median[p]:13.3f}" for p in PHASES) + f"{after:14.3f}")
        print(f"{'  x read_events':28}" + "".join(f"{median[p] / reader:13.2f}" for p in PHASES)
              + f"{after / reader:14.2f}")


if __name__ == "__main__":
    main()
