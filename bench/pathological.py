"""Time and memory per MB of sc-mlir on pathological lines: does any pattern go
superlinear?

    python bench/pathological.py [--sizes 0.5,2] [--jobs 1] [--only nest]

Each case is one adversarial line (a string that never closes, thousands of `<{...}>`
before a stray quote, a 2 MB word, a type nested thousands deep, thousands of region ops
nested on one line...) inside a small valid dump, read by `sc_mlir.load` and analysed, at
each size, each in a fresh process. A linear reader takes the same time and the same
memory per MB at every size; the `growth` columns divide the figure per MB at the largest
size by the one at the smallest (about 1.0 is linear, about the size ratio is quadratic).
Memory is the process's peak RSS above that of a process that read the bare dump (the
reference, measured in the same run). A log case times `sc-mlir explain`'s reader. Two
cases are many lines: a func of many allocas (the packing of allocas all live at once
stays quadratic in time, in linear memory: each is placed by walking those placed before
it).
Nothing is asserted: the test suite only guards against hangs (tests/read/test_hostile.py).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import compile_bytecode  # bench/ is not a package

from sc_mlir.failures.logs import read_log_text
from sc_mlir.notebook import load

HEAD = "module {\n  func.func @f(%arg0: memref<8xf32, 203>) {\n" \
       "    %0 = memref.alloca() : memref<64xf32, 201>\n"
TAIL = "    %9 = memref.alloca() : memref<8xf32, 201>\n    return\n  }\n}\n"


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


CASES: dict[str, Callable[[int], str]] = {
    "long string": lambda n: f'    "x.y"() {{s = "{_repeat("a", n)}"}} : () -> ()\n',
    "unterminated string": lambda n: f'    "x.y"() {{s = "{_repeat("a{", n)}\n',
    "escapes in a string":
        lambda n: f'    "x.y"() {{s = "{_repeat(chr(92) + "n", n)}"}} : () -> ()\n',
    "properties then a quote": lambda n: f'    %1 = "x.y"() {_repeat("<{{a = 1}}>", n)} "\n',
    "open braces": lambda n: f"    %1 = x.y {_repeat('{', n)}\n",
    "open parentheses": lambda n: f"    %1 = x.y {_repeat('(', n)}\n",
    "results without =": lambda n: f"    {_repeat('%a, ', n)}\n",
    "one long word": lambda n: f"    a.{_repeat('a', n)}\n",
    "operands": lambda n: f'    "x.y"({_repeat("%a, ", n)}%b) : () -> ()\n',
    "dump header": lambda n: f"// -----// IR Dump After {_repeat(' ', n)}x\n",
    "nested type in an alloca": lambda n: (
        "    %1 = memref.alloca() : memref<4x" + _repeat("vector<4x", n // 2)
        + "f32" + ">" * (n // 2 // 9) + ", 201>\n"),
    "alias never closed": lambda n: f"#loc1 = loc({_repeat('(', n)}\n",
    # Locations written inline (read without the grammar since 730fc87): one fused location
    # of thousands of parts, in the table and after an alloca, and names nested 100,000 deep.
    "inline: a wide fused table line":
        lambda n: "#loc1 = loc(fused[" + _repeat('"a.py":1:2, ', n) + '"a.py":1:2])\n',
    "inline: a wide fused op location": lambda n: (
        '    %1 = memref.alloca() : memref<4xf32, 201> loc(fused['
        + _repeat('"a.py":1:2, ', n) + '"a.py":1:2])\n'),
    "inline: names nested deep":
        lambda n: "#loc1 = loc(" + _repeat('"n"(', n // 2) + '"a.py":1:2'
        + ")" * (n // 2 // 4) + ")\n",
    # Region ops nested on one line, an alloca at the bottom (issue 13: 2,000 of them took
    # 15 s and 931 MB, 30,000 were killed at 12.9 GB).
    "nest: generic regions": lambda n: _nest(
        n, '"tpu.region"() ({ ', '"tpu.yield"() : () -> () }) : () -> () '),
    "nest: pretty loops": lambda n: _nest(n, "scf.for %i = %c0 to %c8 step %c1 { ", "} "),
    "nest: 500,000 braces": lambda n: "    " + _repeat("}", n) + "\n",
    # Many allocas in one func (lines, not one line): each used once on the next line, or
    # all live at once and crossing the bound (before: a search per name over the whole
    # body, the packing's list of every pair, the fix trying every entry at each slot).
    "allocas: one use each": lambda n: _allocas(n, live_together=False),
    "allocas: all live at once": lambda n: _allocas(n, live_together=True),
}


def _allocas(size: int, live_together: bool) -> str:
    count = max(1, size // 110)
    lines = []
    for k in range(count):
        lines.append(f"    %b{k} = memref.alloca() : memref<{1 + k % 64}xf32, 201>")
        if not live_together:
            lines.append(f"    memref.store %c, %b{k}[%i] : memref<64xf32, 201>")
    if live_together:
        lines += [f"    memref.store %c, %b{k}[%i] : memref<64xf32, 201>" for k in range(count)]
    return "\n".join(lines) + "\n"


def _nest(size: int, open_text: str, close_text: str) -> str:
    alloca = "%a = memref.alloca() : memref<4xf32, 201> "
    depth = max(1, size // (len(open_text) + len(close_text)))
    return "    " + open_text * depth + alloca + close_text * depth + "\n"


def dump_with(line: str) -> str:
    if line.startswith("#") or line.startswith("// -----"):
        return HEAD + TAIL + line
    return HEAD + line + TAIL


LOG_CASE = "log: ANSI and phrase starts"
BARE = "bare dump (reference)"


def time_load(text: str, jobs: int) -> float:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "case.mlir"
        path.write_text(text)
        start = time.perf_counter()
        dump = load(path, jobs=jobs)
        dump.analyze()
        return time.perf_counter() - start


def time_log(size: int) -> float:
    text = _repeat("\x1b]current allocation offset upper bound (", size)
    start = time.perf_counter()
    read_log_text(text)
    return time.perf_counter() - start


def measure_here(case: str, size: int, jobs: int) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of this process for one case."""
    if case == LOG_CASE:
        seconds = time_log(size)
    elif case == BARE:
        seconds = time_load(dump_with(""), jobs)
    else:
        seconds = time_load(dump_with(CASES[case](size)), jobs)
    return seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(case: str, size: int, jobs: int) -> tuple[float, float]:
    """`measure_here` in a fresh process: the peak RSS is this case's alone."""
    done = subprocess.run([sys.executable, __file__, "--one", case, str(size), "--jobs",
                           str(jobs)], capture_output=True, text=True, check=True)
    seconds, rss = done.stdout.split()
    return float(seconds), float(rss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="0.5,2", help="MB per pathological line, "
                        "comma-separated (two or more)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--only", default="", help="cases whose name contains this")
    parser.add_argument("--one", nargs=2, metavar=("CASE", "BYTES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    compile_bytecode()
    if args.one:
        seconds, rss = measure_here(args.one[0], int(args.one[1]), args.jobs)
        print(seconds, rss)
        return
    sizes = [int(float(s) * 1_000_000) for s in args.sizes.split(",")]
    _, base_rss = measure(BARE, 0, args.jobs)
    print(f"reference: a process that reads the bare dump peaks at {base_rss:.0f} MiB RSS")
    print(f"{'case':<28}" + "".join(f"{'s/MB @' + f'{n / 1e6:g}':>10}" for n in sizes)
          + f"{'growth':>8}" + "".join(f"{'MiB/MB @' + f'{n / 1e6:g}':>12}" for n in sizes)
          + f"{'growth':>8}")
    for name in [*CASES, LOG_CASE]:
        if args.only not in name:
            continue
        results = [measure(name, n, args.jobs) for n in sizes]
        per_mb = [seconds / (n / 1e6) for (seconds, _), n in zip(results, sizes, strict=True)]
        mem_mb = [max(rss - base_rss, 0.0) / (n / 1e6)
                  for (_, rss), n in zip(results, sizes, strict=True)]
        time_growth = per_mb[-1] / per_mb[0] if per_mb[0] else float("nan")
        mem_growth = mem_mb[-1] / mem_mb[0] if mem_mb[0] else float("nan")
        print(f"{name:<28}" + "".join(f"{v:>10.3f}" for v in per_mb) + f"{time_growth:>8.2f}"
              + "".join(f"{v:>12.1f}" for v in mem_mb) + f"{mem_growth:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
