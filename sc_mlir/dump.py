"""`load(path)`: a file or dump directory -> a `Dump` with its allocation table.

>>> dump = load(example_path())
>>> dump.allocations[["name", "words", "space_id"]].head(2).to_dict("records")
[{'name': '%202', 'words': 64, 'space_id': 201}, {'name': '%203', 'words': 2048, 'space_id': 202}]
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from sc_mlir import parts
from sc_mlir.discover import Skipped, discover
from sc_mlir.events import read_events
from sc_mlir.gcpause import paused_gc
from sc_mlir.model import Allocation, ModelSettings, build_allocations
from sc_mlir.parts import scan_file_in_parts
from sc_mlir.scan import Diagnostic, ScanSettings, scan_file
from sc_mlir.syntax import warm_parsers
from sc_mlir.tables import frame_of

if TYPE_CHECKING:
    import pandas as pd

    from sc_mlir.analysis import Analysis
    from sc_mlir.bounds import Bounds

# Columns of `Dump.allocations`, in order. Documented in README.md ("The allocation table").
ALLOCATION_COLUMNS: tuple[str, ...] = (
    "file", "chunk", "module", "func", "name", "line", "col", "op_form", "type", "shape",
    "resolved_shape", "element_type", "element_bits", "num_elements", "bits", "bytes",
    "words", "memory_space", "space_id", "space_name", "layout", "alignment", "scope_op",
    "scope_path", "scope_start", "scope_end", "order", "live_end", "last_use_line", "core_type",
    "scratch_operands",
    "dump_header", "loc_file", "loc_line", "loc_col", "loc_names",
)


@dataclass(frozen=True)
class FileSummary:
    path: str
    lines: int
    ops: int
    allocas: int


@dataclass(frozen=True)
class FileResult:
    summary: FileSummary
    records: list[Allocation]
    diagnostics: list[Diagnostic]


@dataclass(frozen=True)
class LoadSettings:
    scan: ScanSettings = field(default_factory=ScanSettings)
    model: ModelSettings = field(default_factory=ModelSettings)


def read_file(path: str, settings: LoadSettings | None = None, *, jobs: int = 1,
              pool: Executor | None = None) -> FileResult:
    """Scan one file and build its allocation records (runs in worker processes too). With
    `jobs` > 1 and a process `pool`, a large file is scanned in parts."""
    settings = settings or LoadSettings()
    with paused_gc():
        try:
            # The fast reader first; the careful one reads what it does not vouch for, a
            # large file in parts on `jobs` cores (its own workers when not given a pool).
            scan = read_events(path, settings.scan)
            if scan is not None:
                pass
            elif jobs > 1 and pool is not None:
                scan = scan_file_in_parts(path, settings.scan, jobs, pool)
            elif jobs > 1 and _splittable(path):
                warm_parsers()
                with ProcessPoolExecutor(max_workers=jobs, initializer=gc.disable) as own:
                    scan = scan_file_in_parts(path, settings.scan, jobs, own)
            else:
                scan = scan_file(path, settings.scan)
            records, diagnostics = build_allocations(scan, settings.model)
        except OSError as exc:
            return _unread(path, f"cannot read: {exc.strerror or exc}")
        except Exception as exc:  # a bug must cost one file, not the whole dump
            return _unread(path, f"sc-mlir failed on it ({type(exc).__name__}: {exc}); "
                           "please report this with the file")
    return FileResult(FileSummary(path, scan.lines, scan.ops, len(scan.allocas)), records,
                      diagnostics)


def _unread(path: str, why: str) -> FileResult:
    return FileResult(FileSummary(path, 0, 0, 0), [], [Diagnostic(path, 0, 0,
                                                                  f"file skipped: {why}")])


@dataclass
class Dump:
    """Everything read from a dump: allocation records, per-file summaries, diagnostics."""

    path: str
    records: list[Allocation]
    files: list[FileSummary]
    diagnostics: list[Diagnostic]
    settings: LoadSettings = field(default_factory=LoadSettings)

    @cached_property
    def allocations(self) -> pd.DataFrame:
        """One row per alloca; columns in ALLOCATION_COLUMNS (see README)."""
        return allocations_frame(self.records)

    @property
    def skipped_allocas(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.message.startswith("memref.alloca skipped")]

    @property
    def usable(self) -> bool:
        """False when nothing at all could be read (the CLI exits 2)."""
        return bool(self.files) and any(f.lines for f in self.files)

    def analyze(self, bounds: Bounds | Mapping[str, int] | None = None, *,
                chip: str | None = None, align: Mapping[str, int] | None = None) -> Analysis:
        """Analyse every (func, memory space): see `sc_mlir.analysis.analyze`."""
        from sc_mlir.analysis import analyze

        return analyze(self, bounds, chip=chip, align=align)


def allocations_frame(records: list[Allocation]) -> pd.DataFrame:

    return frame_of((allocation_row(r) for r in records), ALLOCATION_COLUMNS,
                    ("element_bits", "num_elements", "bits", "bytes", "words", "space_id",
                     "alignment", "loc_line", "loc_col"))



def allocation_row(record: Allocation) -> dict[str, object]:
    """A record as a flat dict with the table's columns (lists for shapes and names)."""
    values = {name: getattr(record, name) for name in ALLOCATION_COLUMNS[:-4]}
    for key in ("shape", "resolved_shape"):
        values[key] = list(values[key]) if values[key] is not None else None
    values["loc_file"] = record.loc.file
    values["loc_line"] = record.loc.line
    values["loc_col"] = record.loc.col
    values["loc_names"] = list(record.loc.names)
    return values


ProgressHook = Callable[[int, int, str], None]


def load(path: str | os.PathLike[str], *, settings: LoadSettings | None = None,
         jobs: int | None = 1, progress: ProgressHook | None = None) -> Dump:
    """Read a dump: a file or a directory (recursive, files found by content).

    `jobs` worker processes read files in parallel (None: all cores). Files that are not
    MLIR text are skipped, each with a diagnostic.
    """
    settings = settings or LoadSettings()
    files, skipped = discover(path)
    diagnostics = [_skip_note(s) for s in skipped]
    results = list(_read_all(files, settings, jobs, progress))
    records: list[Allocation] = []
    summaries: list[FileSummary] = []
    for result in results:
        records.extend(result.records)
        summaries.append(result.summary)
        diagnostics.extend(result.diagnostics)
    return Dump(str(path), records, summaries, diagnostics, settings)


def _skip_note(skipped: Skipped) -> Diagnostic:
    return Diagnostic(skipped.path, 0, 0, f"file skipped: {skipped.reason}")


def _read_all(files: list[str], settings: LoadSettings, jobs: int | None,
              progress: ProgressHook | None) -> Iterator[FileResult]:
    workers = (os.cpu_count() or 1) if jobs is None else max(jobs, 1)
    total = len(files)
    if workers == 1 or total < 2:
        # One file: read here (workers are started only if the careful reader needs them).
        for i, path in enumerate(files, 1):
            result = read_file(path, settings, jobs=workers)
            if progress:
                progress(i, total, path)
            yield result
        return
    # Small files go to the workers whole; a large one is read here, its parts scanned by
    # the same workers. The grammars are built before the workers start, which share them.
    large = [_splittable(path) for path in files]
    warm_parsers()
    with ProcessPoolExecutor(max_workers=workers, initializer=gc.disable) as pool:
        pending = {i: pool.submit(read_file, path, settings)
                   for i, path in enumerate(files) if not large[i]}
        for i, path in enumerate(files):
            if large[i]:
                result = read_file(path, settings, jobs=workers, pool=pool)
            else:
                try:
                    result = pending.pop(i).result()
                except Exception:  # the worker died (out of memory...): read it here
                    result = read_file(path, settings)
            if progress:
                progress(i + 1, total, result.summary.path)
            yield result


def _splittable(path: str) -> bool:
    try:
        return os.path.getsize(path) >= 2 * parts.MIN_PART_BYTES
    except OSError:
        return False


def example_path() -> str:
    """The sample dump shipped inside the package (used by `--example`)."""
    packaged = resources.files("sc_mlir") / "examples"
    if packaged.is_dir():
        return str(packaged)
    return str(Path(__file__).resolve().parent.parent / "fixtures" / "sample")
