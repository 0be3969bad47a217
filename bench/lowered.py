"""How cheaply the Pallas kernels of a lowered program are found: sc-mlir's text search
against the reference, jaxlib parsing the whole StableHLO and walking it for the calls
(what ../shared/tools/pallas_to_mlir.py does), measured in the same run.

    pip install -e '.[jax]' && python bench/lowered.py [--calls 10,1000,5000] [--runs 3]

The program is fixtures/lowered/two_kernels.stablehlo.mlir with its two custom calls
repeated (each about 5 KB of base64 body), so the file grows with the number of calls.
Both sides end with the same thing: every call's decoded body bytes (checked equal).
Printing and analysing the kernels is left out: it is the same work on both sides.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from sc_mlir.read.embedded import find_kernels

PROGRAM = Path(__file__).resolve().parent.parent / "fixtures" / "lowered" / \
    "two_kernels.stablehlo.mlir"


def program_with(calls: int) -> str:
    """The fixture's module with its two calls repeated to `calls` calls in all."""
    lines = PROGRAM.read_text().split("\n")
    body_start = next(i for i, line in enumerate(lines) if "custom_call" in line)
    pair = [lines[body_start], lines[body_start + 2]]  # the two calls (a slice in between)
    repeated = []
    for i in range(calls // 2):
        for line in pair:
            # Fresh result names keep the module valid for MLIR's parser.
            repeated.append(line.replace("%0 =", f"%c{i}a =").replace("%2 =", f"%c{i}b ="))
    at_return = body_start + 3  # after the slice the second call reads
    return "\n".join(lines[:at_return] + repeated + lines[at_return:])


def by_text_search(text: str) -> list[bytes]:
    return [k.body for k in find_kernels(text) if k.body is not None]


def by_mlir_parse(text: str) -> list[bytes]:
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    found: list[bytes] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if (op.name == "stablehlo.custom_call" and
                ir.StringAttr(op.attributes["call_target_name"]).value == "tpu_custom_call"):
            config = json.loads(ir.StringAttr(op.attributes["backend_config"]).value)
            found.append(base64.b64decode(config["custom_call_config"]["body"]))
        return ir.WalkResult.ADVANCE

    with jax_mlir.make_ir_context():
        module = ir.Module.parse(text)
        module.operation.walk(visit)
    return found


def timed(fn: Callable[[str], list[bytes]], text: str, runs: int) -> tuple[float, list[bytes]]:
    times = []
    result: list[bytes] = []
    for _ in range(runs):
        start = time.perf_counter()
        result = fn(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", default="10,1000,5000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    by_mlir_parse(program_with(2))  # jax's import and context setup, outside the timing
    print(f"{'calls':>6} {'MB':>7} {'text search s':>14} {'MLIR parse s':>13} {'speed x':>8}")
    for calls in (int(c) for c in args.calls.split(",")):
        text = program_with(calls)
        search_s, searched = timed(by_text_search, text, args.runs)
        parse_s, parsed = timed(by_mlir_parse, text, args.runs)
        assert searched == parsed and len(searched) == calls // 2 * 2 + 2, "different bodies"
        print(f"{len(searched):>6} {len(text) / 1e6:>7.1f} {search_s:>14.3f} {parse_s:>13.3f} "
              f"{parse_s / search_s:>8.1f}")


if __name__ == "__main__":
    main()
