"""Peak memory of `sc-mlir passes` as the number of passes grows: does it stay flat?

    python bench/passes_rss.py [--chunks 50,500] [--module-kb 100] [--runs 1]

Writes a print-after-all dump: one generated SparseCore-like module (bench/generate.py)
printed after each of N passes (`// -----// IR Dump After PassK (pass-k) //----- //`),
with one buffer growing by 8 words every 10 passes so that passes do change something.
Then measures the peak RSS (process and children, sampled) and the time of

* `sc-mlir passes FILE --format json`, which reads one chunk at a time, and
* the reference, in the same run on the same files: `sc-mlir analyze FILE --format json
  --jobs 1`, which holds every chunk's allocas at once;

and prints each one's growth from the fewest chunks (RSS at N / RSS at the fewest). Flat is
about 1.0; memory that grows with the passes is about the ratio of chunk counts. The first
hundreds of chunks still raise `passes`' peak a little (the allocator's high-water mark:
each chunk's objects are freed between objects that live on); a third count (`--chunks
50,500,1000`) shows where it levels off.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
from pathlib import Path

from generate import write_module
from run import MIB, Run, compile_bytecode, run_command, sc_mlir_command

_GROWING = re.compile(r"memref<(\d+)xf32, 201>")


def write_passes(path: Path, module: str, chunks: int) -> None:
    """`chunks` dumps of `module`; the first f32 buffer of space 201 grows every 10."""
    first = _GROWING.search(module)
    assert first is not None, "the generated module has no f32 buffer in space 201"
    head, tail = module[: first.start()], module[first.end():]
    size = int(first.group(1))
    with open(path, "w") as out:
        for k in range(chunks):
            out.write(f"// -----// IR Dump After Pass{k} (pass-{k}) //----- //\n")
            out.write(head + f"memref<{size + 8 * (k // 10)}xf32, 201>" + tail)


def measure(command: list[str], runs: int) -> tuple[float, float]:
    results: list[Run] = []
    for _ in range(runs):
        result = run_command(command)
        if result.code not in (0, 1):
            raise SystemExit(f"{' '.join(command)} failed ({result.code}):\n{result.error}")
        results.append(result)
    return (statistics.median(r.rss for r in results) / MIB,
            statistics.median(r.seconds for r in results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", default="50,500", help="pass counts, comma separated")
    parser.add_argument("--module-kb", type=int, default=100, help="size of one module")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    compile_bytecode()
    counts = [int(c) for c in args.chunks.split(",")]
    base = sc_mlir_command()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        module_path = Path(tmp) / "module.mlir"
        write_module(module_path, "pretty", args.module_kb * 1000, seed=17)
        module = module_path.read_text()
        for n in counts:
            path = Path(tmp) / f"after_all_{n}.mlir"
            write_passes(path, module, n)
            size = path.stat().st_size / 1e6
            passes = measure([*base, "passes", str(path), "--format", "json"], args.runs)
            analyze = measure([*base, "analyze", str(path), "--format", "json", "--jobs", "1",
                               "--quiet"], args.runs)
            rows.append((n, size, passes, analyze))
            print(f"{n:>6} chunks {size:7.1f} MB   passes: {passes[0]:7.1f} MiB "
                  f"{passes[1]:6.2f} s   analyze (reference): {analyze[0]:7.1f} MiB "
                  f"{analyze[1]:6.2f} s", flush=True)
    n1, _, p1, a1 = rows[0]
    print(f"\nGrowth from {n1} chunks (RSS at N / RSS at {n1}; flat is about 1.0):")
    for n2, _, p2, a2 in rows[1:]:
        print(f"  {n2:>5} chunks ({n2 / n1:g}x the passes): sc-mlir passes peak RSS "
              f"x{p2[0] / p1[0]:.2f} (time x{p2[1] / p1[1]:.2f});  analyze, the reference "
              f"holding every chunk: peak RSS x{a2[0] / a1[0]:.2f} (time x{a2[1] / a1[1]:.2f})")
    if len(rows) > 2:
        (n2, _, p2, a2), (n3, _, p3, a3) = rows[-2], rows[-1]
        print(f"  {n3} vs {n2} chunks: sc-mlir passes peak RSS x{p3[0] / p2[0]:.2f}; "
              f"analyze x{a3[0] / a2[0]:.2f}")

if __name__ == "__main__":
    main()
