"""Benchmark: `sc-mlir analyze --format json` end to end against MLIR's own parsers.

    pip install -e '.[bench]'        # jax + jaxlib (MLIR's C++ parser), xdsl
    python bench/run.py              # generates the dumps on first use (about 1 GB)
    python bench/run.py --sizes 1,10 --runs 1    # a quick look

On the same generated files, in one run, interleaved so that both see the same machine:

* sc-mlir: wall time of the whole command (interpreter start, read, parse, liveness, stack
  simulation, JSON report) and peak memory (the sum of the resident sets of the command and
  its worker processes, sampled every 20 ms);
* MLIR's C++ parser, through jaxlib's bindings: `ir.Module.parse` then `verify()`, as a
  user would run it: the whole process (starting Python, importing jax, reading the file,
  parsing) is what sc-mlir is compared with; the parse alone is printed beside it; peak
  memory of that process;
* xDSL's parser (pure Python) on the 1 MB files, with a time limit.

Both location styles of the generator are measured (`simple`, and `xla`: tables shaped like
XLA's, see generate.py), sc-mlir with its default workers and with `--jobs 1`. Each figure
is the median of `--runs` runs, the runs of all tools interleaved. Ratios: whole-process
time of sc-mlir / whole-process time of the C++ parser (target <= 0.5), and peak memory
sc-mlir / C++ (target <= 0.3). Also: 200 MB vs 50 MB time (target <= 4.2), and the
300-file directory with the default vs `--jobs 1` (target <= 0.6), as JSON and as the
table (the command's default output; its pair count checked against the JSON's). The
allocation count of every sc-mlir run is checked against the generator's ground truth; a
mismatch fails the benchmark. Nothing here is a test: timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate import bench_file_name  # noqa: E402  (bench/ is not a package)

MB = 1_000_000
MIB = 1 << 20

CPP_SCRIPT = """
import json, resource, sys, time
import jax
from jax._src.interpreters import mlir as jax_mlir
from jaxlib.mlir import ir
with open(sys.argv[1]) as handle:
    text = handle.read()
context = jax_mlir.make_ir_context()
context.allow_unregistered_dialects = True
with context:
    start = time.perf_counter()
    module = ir.Module.parse(text)
    parsed = time.perf_counter()
    assert module.operation.verify()
    done = time.perf_counter()
print(json.dumps({"parse": parsed - start, "verify": done - parsed}))
"""

XDSL_SCRIPT = """
import json, sys, time
from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.parser import Parser
context = Context(allow_unregistered=True)
for name, factory in get_all_dialects().items():
    context.register_dialect(name, factory)
with open(sys.argv[1]) as handle:
    text = handle.read()
start = time.perf_counter()
Parser(context, text).parse_module()
print(json.dumps({"parse": time.perf_counter() - start}))
"""


# --- measuring ------------------------------------------------------------------------


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            with open(f"/proc/{current}/task/{current}/children") as handle:
                todo.extend(int(child) for child in handle.read().split())
        except OSError:
            pass
    return found


class PeakMemory:
    """Samples the summed RSS of a process and its descendants until stopped."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        self.pid, self.interval, self.peak = pid, interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(_rss_bytes(p) for p in _descendants(self.pid)))
            self._stop.wait(self.interval)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


@dataclass
class Run:
    seconds: float  # the whole process
    rss: int
    output: str = ""
    error: str = ""
    code: int = 0
    parse: float = 0.0  # the C++ parser's parse and verify alone


def run_command(command: list[str], timeout: float | None = None) -> Run:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err)
        sampler = PeakMemory(process.pid)
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            sampler.stop()
            return Run(time.perf_counter() - start, 0, error="timeout", code=-1)
        seconds = time.perf_counter() - start
        rss = sampler.stop()
        out.seek(0)
        err.seek(0)
        return Run(seconds, rss, out.read().decode(errors="replace"),
                   err.read().decode(errors="replace"), code)


def compile_bytecode() -> None:
    """Writes the installed sc_mlir package's bytecode before anything is timed. A wheel
    installed by pip comes with it, as jax does, but an editable install writes it on first
    import, and not at all where PYTHONDONTWRITEBYTECODE is set (as on our machines): each
    run would then compile every module again, 0.2 s that no user pays."""
    import compileall

    import sc_mlir

    package = Path(sc_mlir.__file__).parent
    if not compileall.compile_dir(str(package), quiet=1):
        print(f"note: could not write bytecode under {package}: runs compile it again",
              file=sys.stderr)


def sc_mlir_command() -> list[str]:
    script = Path(sys.executable).with_name("sc-mlir")
    return [str(script)] if script.exists() else [sys.executable, "-m", "sc_mlir.cli"]


# sc-mlir with the fast reader turned off, read whole or in spans: every file read by the
# careful line reader.
CAREFUL_COMMAND = [sys.executable, "-c", "import sys; from sc_mlir.read import events, "
                   "event_spans; events.MAX_FILE_BYTES = -1; event_spans.MIN_FILE_BYTES = "
                   "1 << 62; from sc_mlir.cli import main; main()"]


def run_sc_mlir(path: Path, expected: int, jobs: int | None = None,
                careful: bool = False) -> Run:
    command = [*(CAREFUL_COMMAND if careful else sc_mlir_command()), "analyze", str(path),
               "--format", "json", "--quiet"]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    result = run_command(command)
    if result.code not in (0, 1):
        raise SystemExit(f"sc-mlir failed on {path} (exit {result.code}):\n{result.error}")
    report = json.loads(result.output)
    found = sum(space["n_allocas"] for space in report["spaces"])
    if found != expected or report["skipped_allocas"]:
        raise SystemExit(f"{path}: sc-mlir found {found} allocas "
                         f"({report['skipped_allocas']} skipped), the generator wrote {expected}")
    return result


def run_sc_mlir_table(path: Path, pairs: int, jobs: int | None = None) -> Run:
    """`sc-mlir analyze` as a table (the default output), checked to count the (func,
    space) pairs the JSON counts."""
    command = [*sc_mlir_command(), "analyze", str(path), "--quiet"]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    result = run_command(command)
    if result.code not in (0, 1) or not result.output.startswith(
            f"{pairs} (func, memory space) pair(s)"):
        raise SystemExit(f"sc-mlir's table of {path} (exit {result.code}) does not count "
                         f"{pairs} pairs:\n{result.output[:200]}{result.error}")
    return result


def run_parser(script: str, path: Path, timeout: float | None) -> Run:
    result = run_command([sys.executable, "-c", script, str(path)], timeout)
    if result.code == 0:
        timings = json.loads(result.output.strip().splitlines()[-1])
        result.parse = sum(timings.values())
    elif not result.error.startswith("timeout"):
        lines = [line.strip() for line in result.error.strip().splitlines() if line.strip()]
        result.error = lines[-1] if lines else f"exit {result.code}"
    return result


def available(module: str) -> bool:
    probe = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    return probe.returncode == 0


# --- reporting ------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    size: int
    sc: list[Run] = field(default_factory=list)  # default workers
    sc1: list[Run] = field(default_factory=list)  # --jobs 1
    careful: list[Run] = field(default_factory=list)  # the careful reader only, default jobs
    cpp: list[Run] = field(default_factory=list)
    xdsl: list[Run] = field(default_factory=list)


def median(runs: list[Run], attribute: str) -> float:
    return statistics.median(getattr(r, attribute) for r in runs)


def spread(runs: list[Run]) -> str:
    if len(runs) < 2:
        return ""
    values = sorted(r.seconds for r in runs)
    return f" ({values[0]:.2f}-{values[-1]:.2f})"


def print_table(rows: list[Row], runs: int) -> None:
    print(f"\nmedians of {runs} run(s); time in s (min-max), whole process; RSS in MiB; "
          "x: sc-mlir / C++ whole process (targets: time <= 0.5, RSS <= 0.3)")
    header = (f"{'file':<24}{'MB':>6}  {'sc-mlir s':>17}{'RSS':>6}  {'--jobs 1 s':>17}{'RSS':>6}  "
              f"{'C++ s':>17}{'parse':>7}{'RSS':>6}  {'time x':>7}{'RSS x':>6}  "
              f"{'j1 time x':>9}{'RSS x':>6}  xDSL")
    print(header)
    print("-" * len(header))
    for row in rows:
        size = row.size / MB
        sc_s, sc1_s = median(row.sc, "seconds"), median(row.sc1, "seconds")
        sc_rss, sc1_rss = median(row.sc, "rss"), median(row.sc1, "rss")
        line = (f"{row.name:<24}{size:>6.1f}  {sc_s:>6.2f}{spread(row.sc):<11}"
                f"{sc_rss / MIB:>6.0f}  {sc1_s:>6.2f}{spread(row.sc1):<11}{sc1_rss / MIB:>6.0f}  ")
        good = [r for r in row.cpp if r.code == 0]
        if good:
            cpp_s, cpp_rss = median(good, "seconds"), median(good, "rss")
            line += (f"{cpp_s:>6.2f}{spread(good):<11}{median(good, 'parse'):>7.2f}"
                     f"{cpp_rss / MIB:>6.0f}  {sc_s / cpp_s:>7.2f}{sc_rss / cpp_rss:>6.2f}  "
                     f"{sc1_s / cpp_s:>9.2f}{sc1_rss / cpp_rss:>6.2f}  ")
        elif row.cpp:
            line += f"{'failed: ' + row.cpp[0].error[:40]:<60}"
        else:
            line += f"{'not run':<60}"
        if row.xdsl:
            done = [r for r in row.xdsl if r.code == 0]
            if done:
                line += f"{size / median(done, 'seconds'):.2f} MB/s"
            else:
                line += f"failed: {row.xdsl[0].error[:70]}"
        print(line)
    careful = [row for row in rows if row.careful]
    if careful:
        print("\nthe same, every file read by the careful line reader (the fast reader off):")
        for row in careful:
            fast, slow = median(row.sc, "seconds"), median(row.careful, "seconds")
            rss = median(row.careful, "rss") / MIB
            print(f"{row.name:<24}{row.size / MB:>6.1f}  careful {slow:>6.2f}"
                  f"{spread(row.careful):<11}{rss:>6.0f} MiB   fast / careful {fast / slow:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "sc-mlir-bench",
                        help="where the generated dumps are (made on first use)")
    parser.add_argument("--sizes", default="1,10,50,200", help="MB, comma separated")
    parser.add_argument("--forms", default="generic,pretty")
    parser.add_argument("--locs", default="simple,xla", help="location styles (generate.py)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-cpp", action="store_true")
    parser.add_argument("--no-xdsl", action="store_true")
    parser.add_argument("--no-dir", action="store_true", help="skip the 300-file directory")
    parser.add_argument("--careful", action="store_true",
                        help="also run sc-mlir with the fast reader off, for the speed-up")
    parser.add_argument("--xdsl-timeout", type=float, default=300)
    args = parser.parse_args()
    compile_bytecode()

    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    forms = [f.strip() for f in args.forms.split(",") if f.strip()]
    truth_path = args.data / "ground_truth.json"
    truth = json.loads(truth_path.read_text()) if truth_path.exists() else {}
    styles = [s.strip() for s in args.locs.split(",") if s.strip()]
    wanted = [bench_file_name(form, size, style)
              for style in styles for form in forms for size in sizes]
    if any(name not in truth for name in wanted) or (not args.no_dir and "dir300" not in truth):
        print(f"generating dumps in {args.data} ...", flush=True)
        subprocess.run([sys.executable, str(HERE / "generate.py"), str(args.data),
                        "--sizes", ",".join(sizes), "--forms", ",".join(forms),
                        "--locs", ",".join(styles),
                        "--files", "0" if args.no_dir or "dir300" in truth else "300"],
                       check=True)
        truth = json.loads(truth_path.read_text())

    cpp = not args.no_cpp and available("jaxlib.mlir.ir")
    xdsl = not args.no_xdsl and available("xdsl.parser")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; sc-mlir: "
          f"{' '.join(sc_mlir_command())}")
    if not cpp:
        print("C++ parser: skipped (" + ("--no-cpp" if args.no_cpp else
              "jax/jaxlib not installed: pip install -e '.[bench]'") + ")")
    if not xdsl:
        print("xDSL: skipped (" + ("--no-xdsl" if args.no_xdsl else "xdsl not installed") + ")")

    rows = [Row(name, (args.data / name).stat().st_size) for name in wanted]
    for round_number in range(1, args.runs + 1):
        for row in rows:
            path = args.data / row.name
            print(f"run {round_number}/{args.runs}: {row.name}", file=sys.stderr, flush=True)
            row.sc.append(run_sc_mlir(path, truth[row.name]))
            row.sc1.append(run_sc_mlir(path, truth[row.name], jobs=1))
            if args.careful:
                row.careful.append(run_sc_mlir(path, truth[row.name], careful=True))
            if cpp:
                row.cpp.append(run_parser(CPP_SCRIPT, path, None))
            if xdsl and row.size <= 2 * MB and (round_number == 1 or
                                                any(r.code == 0 for r in row.xdsl)):
                row.xdsl.append(run_parser(XDSL_SCRIPT, path, args.xdsl_timeout))
    print_table(rows, args.runs)

    by_name = {row.name: row for row in rows}
    for style in styles:
        for form in forms:
            big = by_name.get(bench_file_name(form, "200", style))
            base = by_name.get(bench_file_name(form, "50", style))
            if big and base:
                ratio = median(big.sc, "seconds") / median(base.sc, "seconds")
                print(f"{form} ({style}): 200 MB takes {ratio:.2f}x the time of 50 MB "
                      f"(size ratio {big.size / base.size:.2f}; target <= 4.2)")
    if not args.no_dir:
        directory = args.data / "dir300"
        single: list[Run] = []
        default: list[Run] = []
        single_table: list[Run] = []
        default_table: list[Run] = []
        for _ in range(args.runs):  # interleaved
            single.append(run_sc_mlir(directory, truth["dir300"], jobs=1))
            default.append(run_sc_mlir(directory, truth["dir300"]))
            pairs = len(json.loads(default[-1].output)["spaces"])
            single_table.append(run_sc_mlir_table(directory, pairs, jobs=1))
            default_table.append(run_sc_mlir_table(directory, pairs))
        files = len(list(directory.iterdir()))
        for label, one_runs, many_runs in (("json", single, default),
                                           ("table", single_table, default_table)):
            one, many = median(one_runs, "seconds"), median(many_runs, "seconds")
            print(f"dir300 ({files} files, {label}): --jobs 1 {one:.2f} s, default "
                  f"({os.cpu_count()} cores) {many:.2f} s: {many / one:.2f}x (target <= 0.6)")


if __name__ == "__main__":
    main()
