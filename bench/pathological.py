"""Time per MB of sc-mlir on pathological lines: does any pattern go superlinear?

    python bench/pathological.py [--sizes 0.5,2] [--jobs 1]

Each case is one adversarial line (a string that never closes, thousands of `<{...}>`
before a stray quote, a 2 MB word, a type nested thousands deep...) inside a small valid
dump, read by `sc_mlir.load` and analysed, at two sizes. A linear reader takes the same
time per MB at both sizes; the last column is the growth of the time per MB (about 1.0 is
linear, about the size ratio is quadratic). A log case times `sc-mlir explain`'s reader.
Nothing is asserted: the test suite only guards against hangs (tests/read/test_hostile.py).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sc_mlir.failures.logs import read_log_text
from sc_mlir.model.dump import load

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
}


def dump_with(line: str) -> str:
    if line.startswith("#") or line.startswith("// -----"):
        return HEAD + TAIL + line
    return HEAD + line + TAIL


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="0.5,2", help="MB per pathological line: two sizes")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    small, large = (int(float(s) * 1_000_000) for s in args.sizes.split(","))
    print(f"{'case':<28}{'s/MB at ' + str(small / 1e6) + ' MB':>18}"
          f"{'s/MB at ' + str(large / 1e6) + ' MB':>18}{'growth':>9}")
    rows = [(name, lambda n, make=make: time_load(dump_with(make(n)), args.jobs))
            for name, make in CASES.items()]
    rows.append(("log: ANSI and phrase starts", time_log))
    for name, measure in rows:
        per_mb = [measure(n) / (n / 1e6) for n in (small, large)]
        print(f"{name:<28}{per_mb[0]:>18.3f}{per_mb[1]:>18.3f}{per_mb[1] / per_mb[0]:>9.2f}",
              flush=True)


if __name__ == "__main__":
    main()
