"""Benchmark: the floor under `sc-mlir analyze --format json --jobs 1`, part by part.

    python bench/floor.py [--data DIR] [--sizes 50] [--forms generic,pretty]
                          [--locs simple,xla] [--runs 3]

How fast could a reader that keeps today's checks make the command, if nothing but the
work itself were left? Each part of that work is measured by running it, in a fresh
process per run, on the generator's files (`bench/generate.py`, made here if missing):

* structure and last uses: a minimal reader written here for the generator's shapes only
  (regions, block labels and allocas found by C-level searches, one Python step per
  event, each alloca's last use by a backward search in its scope, no views: the
  generator writes none). It must give every alloca the program point, last use and line
  the fast reader gives, or the file is not measured;
* the checks the fast reader makes before it vouches for a file, timed in the fast reader
  itself: the `#loc` table (`trailing_table`), the whole-text checks (its `read` with the
  structure and liveness left out), and the checks of every use (every tracked name's
  uses found, and each use line classified, as `read/event_uses.py` does);
* records as columns (each alloca's func, scope, size and alignment), and the analyses
  over them (`stack_of`, `liveness_peak`, `pack`): every (func, memory space)'s stack
  peak, liveness peak, packed peak and alloca count must equal the command's;
* the output, as the command makes it (`analysis_object`, `to_json`): a columnar design
  still resolves the shown allocas' locations and writes the same document;
* the interpreter's start (`python -c pass`) and the command's imports.

Printed per file: the median of each part, their sum (the floor), and the floor and
sc-mlir `--jobs 1` as ratios of MLIR's C++ parser's whole-process time measured in the
same runs (the target of `--jobs 1` is 0.5). Nothing here is a test: timings are
printed, never asserted; the answers are checked.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from bisect import bisect_right
from itertools import accumulate, repeat
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate import bench_file_name  # noqa: E402  (bench/ is not a package)
from run import (  # noqa: E402
    CPP_SCRIPT,
    available,
    compile_bytecode,
    run_command,
    run_parser,
    run_sc_mlir,
)

PARTS = ("interpreter start", "imports", "read the file", "#loc table check",
         "whole-text checks", "structure and last uses", "checks of every use",
         "records as columns", "analyses", "JSON object", "JSON text")

# The minimal reader's searches: a `{` that ends a line, a `}` or a block label that
# starts one, an allocation op alone on its line (each pattern starts with a literal,
# which the engine searches for; a pattern that starts with a look-behind is tried at
# every byte, ten times slower).
_OPEN = re.compile(rb"\{\n")
_ALLOCA = re.compile(rb'\n[ \t]*+(%[\w$.\-]+) = ("?)memref\.alloca\2(?![\w$.\-])'
                     rb"([^\n]*?) loc\([^\n]*\)(?=\n)")
_OP_NAME = re.compile(rb'[ \t]*+(?:%[^=\n]*= )?"?([\w.$\-]+)')
_FUNC_NAME = re.compile(rb'@([\w$.\-]+)|sym_name = "([^"]+)"')
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.-")
_NEXT = (1).__add__


def minimal_read(data: bytes, closes: list[int], labels: list[int],
                 run_once: frozenset[bytes], scope_ops: frozenset[bytes]) -> dict[str, list]:
    """Every alloca's program point, last use and line, and what records need of the
    regions around it, from the `}`s and labels the fast reader's line checks found."""
    start = data.find(b"\n") + 1  # after the module's line
    body_end = data.find(b"\n#", data.rfind(b"}")) + 1
    events = [(m.start() << 2) | 2 for m in _OPEN.finditer(data, start, body_end)]
    events += [offset << 2 for offset in closes]
    events += [(offset << 2) | 3 for offset in labels]
    allocas = []
    for m in _ALLOCA.finditer(data, start, body_end):
        allocas.append(m)
        events.append((m.start(1) << 2) | 1)
    events.sort()
    offsets = [event >> 2 for event in events]
    line_starts = list(map(_NEXT, map(data.rfind, repeat(b"\n"), repeat(0), offsets)))
    first_line = data.count(b"\n", 0, start) + 1
    lines = list(accumulate(map(data.count, repeat(b"\n"), [start, *line_starts[:-1]],
                                line_starts), initial=first_line))[1:]
    # Regions and ops as columns; region 0 is the module's.
    parent, depth, region_end, owner = [-1], [0], [len(data)], [-1]
    scope_of, func_of = [-1], [-1]
    op_end, op_loop, op_order, func_names = [], [], [], {}
    region, non_ops, last_close_line, closed = 0, 0, -1, 0
    alloca_region, points, alloca_lines = [], [], []
    transitions, transition_regions = [start], [0]
    for event, line_start, line in zip(events, line_starts, lines, strict=True):
        kind = event & 3
        point = line - first_line - non_ops + 2  # the module's op is the first
        if kind == 1:
            alloca_region.append(region)
            points.append(point)
            alloca_lines.append(line)
        elif kind == 2:
            if last_close_line == line:  # `} else {`, `}, {`: the op's next region
                op, scope, func = owner[closed], scope_of[closed], func_of[closed]
            else:
                name = _OP_NAME.match(data, line_start).group(1).strip(b'"')
                op = len(op_end)
                op_end.append(-1)
                op_loop.append(name not in run_once)
                op_order.append(point)
                scope = op if name in scope_ops else scope_of[region]
                func = func_of[region]
                if name == b"func.func":
                    func = op
                    found = _FUNC_NAME.search(data, line_start, event >> 2)
                    func_names[op] = (found.group(1) or found.group(2)).decode()
            parent.append(region)
            depth.append(depth[region] + 1)
            region_end.append(-1)
            owner.append(op)
            scope_of.append(scope)
            func_of.append(func)
            region = len(parent) - 1
            transitions.append((event >> 2) + 1)
            transition_regions.append(region)
        elif kind == 0:
            region_end[region] = line_start
            op_end[owner[region]] = point - 1
            non_ops += 1
            last_close_line, closed = line, region
            region = parent[region]
            transitions.append(line_start)
            transition_regions.append(region)
        else:
            non_ops += 1
    non_op_lines = [line for event, line in zip(events, lines, strict=True)
                    if event & 3 in (0, 3)]
    live_ends = list(points)
    rfind = data.rfind
    for i, m in enumerate(allocas):
        name, scope_start = m.group(1), m.end()
        at = rfind(name, scope_start, region_end[alloca_region[i]])
        while at >= 0 and data[at + len(name)] in _NAME_BYTES:
            at = rfind(name, scope_start, at)
        if at < 0:
            continue
        k = bisect_right(offsets, at) - 1
        line = lines[k] + data.count(b"\n", offsets[k], at)
        end = line - first_line - bisect_right(non_op_lines, line) + 2
        # A use inside a loop below the alloca's region lasts to the loop's end.
        walk = transition_regions[bisect_right(transitions, at) - 1]
        while depth[walk] > depth[alloca_region[i]]:
            if op_loop[owner[walk]]:
                end = op_end[owner[walk]]
            walk = parent[walk]
        if end > live_ends[i]:
            live_ends[i] = end
    return {"allocas": allocas, "alloca_region": alloca_region, "points": points,
            "live_ends": live_ends, "lines": alloca_lines, "region_end": region_end,
            "scope_of": scope_of, "func_of": func_of, "op_order": op_order,
            "op_end": op_end, "func_names": func_names}


def check_every_use(data: bytes, read: dict[str, list], no_view_ops: frozenset[bytes]) -> int:
    """What the fast reader does with every use before it reads the last ones: each
    alloca's uses found in its scope, and each line that holds one classified by the text
    before its first use (`event_uses.UseSearch._search`, its first pass). Gives the plain
    lines."""
    from sc_mlir.read import event_uses as uses

    found: list[int] = []
    region_end, alloca_region = read["region_end"], read["alloca_region"]
    for number, m in enumerate(read["allocas"]):
        name = m.group(1).decode()
        finder = uses._FINDERS.get(name) or uses._uses_of(name)
        found += [hit.start() << 24 | number
                  for hit in finder(data, m.end(), region_end[alloca_region[number]])]
    found.sort()
    classes = uses._prefix_classes(no_view_ops)
    rfind, index, count, find = data.rfind, data.index, data.count, data.find
    line_end = -1
    plain_lines = 0  # lines of plain ops, which make nothing of the values they use
    for key in found:
        p = key >> 24
        if p < line_end:
            continue
        line_start = rfind(b"\n", 0, p) + 1
        line_end = index(b"\n", p)
        prefix = data[line_start:p]
        kind = classes.get(prefix)
        if kind is None:
            kind = classes[prefix] = uses._prefix_class(prefix, no_view_ops)
        if kind == uses._NOT_PLAIN_OP or data[line_end - 1] == uses._OPEN_BRACE:
            continue
        plain_lines += (kind == uses._PLAIN_RESULTS or count(b'"', p, line_end) == kind
                        or all(find(word, line_start, line_end) < 0
                               for word in uses._TERMINATOR_WORDS))
    return plain_lines


def as_columns(read: dict[str, list], facts: dict[bytes, tuple], space_facts: dict
               ) -> dict[tuple, tuple[list[int], ...]]:
    """Each (func, space)'s allocas as the columns the analyses take, in program order."""
    groups: dict[tuple, tuple[list[int], ...]] = {}
    scope_of, func_of = read["scope_of"], read["func_of"]
    op_order, op_end, regions = read["op_order"], read["op_end"], read["alloca_region"]
    for m, region, order, live_end in zip(read["allocas"], regions, read["points"],
                                          read["live_ends"], strict=True):
        words, space, alignment = facts[m.group(2) + m.group(3)]
        key = (func_of[region], space)
        columns = groups.get(key)
        if columns is None:
            columns = groups[key] = ([], [], [], [], [], [])
        scope = scope_of[region]
        scope_end = op_end[scope]
        end = live_end if live_end < scope_end else scope_end
        columns[0].append(order)
        columns[1].append(op_order[scope])
        columns[2].append(scope_end)
        columns[3].append(words or 0)
        columns[4].append(space_facts[space][1] if not alignment or alignment <= 0
                          else max(1, -(-alignment // 4)))
        columns[5].append(end if end > order else order)
    return groups


def analyse(groups: dict[tuple, tuple[list[int], ...]], space_facts: dict
            ) -> dict[tuple, tuple[int, ...]]:
    from sc_mlir.analysis.interference import pack
    from sc_mlir.analysis.liveness import liveness_peak
    from sc_mlir.analysis.stack import stack_of

    peaks = {}
    for (func, space), (orders, starts, ends, sizes, aligns, live_ends) in groups.items():
        stack = stack_of(orders, starts, ends, sizes, aligns, space_facts[space][0])
        intervals = list(zip(orders, live_ends, sizes, strict=True))
        _offsets, packed = pack(intervals, aligns)
        peaks[(func, space)] = (stack.peak_words, liveness_peak(intervals).words, packed,
                                len(orders))
    return peaks


def one_run(path: str) -> dict[str, float]:
    """Every part but the interpreter's start, timed in this (fresh) process; the answers
    checked against the command's."""
    import gc

    began = time.perf_counter()
    import sc_mlir.cli.analyze  # noqa: F401  (what the command imports)
    from sc_mlir.cli import main  # noqa: F401

    timings = {"imports": time.perf_counter() - began}
    from sc_mlir.analysis import _bounds_table, analyze
    from sc_mlir.formats.analysis_json import analysis_object
    from sc_mlir.formats.records import to_json
    from sc_mlir.model.allocation import build_allocations
    from sc_mlir.model.dump import Dump, FileSummary, LoadSettings
    from sc_mlir.read import events

    gc.disable()  # as the command reads (support.gcpause)
    settings = LoadSettings()

    def timed(part: str, work, *args):
        began = time.perf_counter()
        answer = work(*args)
        timings[part] = time.perf_counter() - began
        return answer

    data = timed("read the file", Path(path).read_bytes)

    class ChecksOnly(events._Reader):
        """The fast reader's `read` without its structure and liveness: its checks."""

        def _structure(self) -> None:
            self.allocas, self.live_end, self.live_end_line, self.funcs = [], [], [], []
            self.ops = 0

        def _liveness(self) -> None:
            pass

    checks = ChecksOnly(data, path, settings.scan)
    began = time.perf_counter()
    checks.read()
    with_table = time.perf_counter() - began
    prefix_end, prefix = checks._prefix()
    timed("#loc table check", events.trailing_table, data, prefix_end,
          prefix.chunks[-1].aliases)
    timings["whole-text checks"] = with_table - timings["#loc table check"]
    run_once = frozenset(name.encode() for name in settings.scan.run_once_ops)
    scope_ops = frozenset(name.encode() for name in settings.model.scope_ops)
    read = timed("structure and last uses", minimal_read, data, checks.close_braces,
                 checks.label_starts, run_once, scope_ops)
    timed("checks of every use", check_every_use, data, read, checks.no_view_ops)

    # The command's answers (its output timed), and what each alloca's body means there (a
    # few hundred distinct bodies: each read once).
    scan = events.read_events(path, settings.scan)
    if scan is None:
        raise SystemExit(f"{path}: the fast reader declines it")
    if [(a.order, a.live_end, a.line) for a in scan.allocas] != list(
            zip(read["points"], read["live_ends"], read["lines"], strict=True)):
        raise SystemExit(f"{path}: the minimal reader's points or last uses are not the "
                         "fast reader's (not a file of the generator's shapes?)")
    records, notes = build_allocations(scan, settings.model)
    dump = Dump(path, records, [FileSummary(path, scan.lines, scan.ops, len(scan.allocas))],
                notes, settings)
    analysis = analyze(dump)
    document = timed("JSON object", analysis_object, analysis, path)
    timed("JSON text", to_json, document)
    bounds = _bounds_table(None, None, None)
    facts = {}
    space_facts = {}
    for m, record in zip(read["allocas"], records, strict=True):
        space = (record.space.space_id, record.space.space_name)
        facts[m.group(2) + m.group(3)] = (record.words, space, record.alignment)
        if space not in space_facts:
            align_bytes = bounds.align_for(*space)[0]
            space_facts[space] = (bounds.bound_for(*space)[0], max(1, -(-align_bytes // 4)))
    theirs = {(r.func, r.space_id, r.space_name): (r.stack_peak_words, r.liveness_peak_words,
                                                    r.packed_peak_words, len(r.allocas))
              for r in analysis.reports}
    del scan, records, dump, analysis, document
    gc.collect()

    groups = timed("records as columns", as_columns, read, facts, space_facts)
    peaks = timed("analyses", analyse, groups, space_facts)
    names = read["func_names"]
    mine = {(names[func], *space): found for (func, space), found in peaks.items()}
    if mine != theirs:
        raise SystemExit(f"{path}: the floor's peaks differ from the command's")
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "sc-mlir-bench",
                        help="where the generated dumps are (made on first use)")
    parser.add_argument("--sizes", default="50")
    parser.add_argument("--forms", default="generic,pretty")
    parser.add_argument("--locs", default="simple,xla")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    compile_bytecode()
    if args.one:
        print(json.dumps(one_run(args.one)))
        return
    names = [bench_file_name(form, size, loc) for size in args.sizes.split(",")
             for loc in args.locs.split(",") for form in args.forms.split(",")]
    truth_file = args.data / "ground_truth.json"
    truth = json.loads(truth_file.read_text()) if truth_file.exists() else {}
    if any(name not in truth for name in names):
        subprocess.run([sys.executable, str(HERE / "generate.py"), str(args.data), "--sizes",
                        args.sizes, "--forms", args.forms, "--locs", args.locs, "--files",
                        "0"], check=True)
        truth = json.loads(truth_file.read_text())
    cpp = available("jaxlib")
    parts: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    cpp_seconds: dict[str, list[float]] = {name: [] for name in names}
    jobs1: dict[str, list[float]] = {name: [] for name in names}
    for run in range(args.runs):  # interleaved: a slow spell of the machine hits them all
        for name in names:
            print(f"run {run + 1}/{args.runs}: {name}", file=sys.stderr)
            path = args.data / name
            start = run_command([sys.executable, "-c", "pass"]).seconds
            done = subprocess.run([sys.executable, __file__, "--one", str(path)],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(done.stderr.strip().splitlines()[-1])
            parts[name].append({"interpreter start": start,
                                 **json.loads(done.stdout.splitlines()[-1])})
            jobs1[name].append(run_sc_mlir(path, truth[name], jobs=1).seconds)
            if cpp:
                cpp_seconds[name].append(run_parser(CPP_SCRIPT, path, None).seconds)
    print(f"\nmedians of {args.runs} run(s), s; floor: the parts' sum; x: / MLIR's C++ "
          "parser, whole process, same runs (--jobs 1 target: 0.5)")
    print(f"{'part':<26}" + "".join(f"{name.removesuffix('.mlir'):>20}" for name in names))
    floors = {}
    for part in PARTS:
        values = [statistics.median(run[part] for run in parts[name]) for name in names]
        print(f"{part:<26}" + "".join(f"{value:>20.3f}" for value in values))
    for name in names:
        floors[name] = sum(statistics.median(run[part] for run in parts[name])
                           for part in PARTS)
    rows = [("floor", floors), ("sc-mlir --jobs 1", {n: statistics.median(jobs1[n])
                                                      for n in names})]
    if cpp:
        rows.append(("C++ parser", {n: statistics.median(cpp_seconds[n]) for n in names}))
    for label, values in rows:
        print(f"{label:<26}" + "".join(f"{values[name]:>20.3f}" for name in names))
    if cpp:
        for label, values in rows[:2]:
            print(f"{label + ' x':<26}" + "".join(
                f"{values[name] / rows[2][1][name]:>20.2f}" for name in names))


if __name__ == "__main__":
    main()
