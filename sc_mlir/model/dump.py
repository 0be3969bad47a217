"""`load(path)`: a file or dump directory -> a `Dump` with its allocation table.

>>> dump = load(example_path())
>>> dump.allocations[["name", "words", "space_id"]].head(2).to_dict("records")
[{'name': '%202', 'words': 64, 'space_id': 201}, {'name': '%203', 'words': 2048, 'space_id': 202}]
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from sc_mlir.model.allocation import (
    DEFAULT_SCOPE_OPS,
    Allocation,
    ModelSettings,
    build_allocations,
)
from sc_mlir.model.spaces import SpaceMap
from sc_mlir.read import event_spans, jaxbridge, parts
from sc_mlir.read.discover import Skipped, discover
from sc_mlir.read.event_spans import SpanReader
from sc_mlir.read.events import read_events
from sc_mlir.read.loc_table import LocationTable, TableGone
from sc_mlir.read.parts import scan_file_in_parts, wait_reporting
from sc_mlir.read.programs import (
    Program,
    kernel_sources,
    may_hold_a_program,
    missing_jax_message,
    split_programs,
)
from sc_mlir.read.progress import (
    ByteProgress,
    BytesRead,
    ProgressHook,
    count_in_worker,
    start_worker,
)
from sc_mlir.read.scan import (
    DEFAULT_RUN_ONCE_OPS,
    Diagnostic,
    FileScan,
    ScanSettings,
    is_skipped_allocation,
    scan_file,
    scan_text,
)
from sc_mlir.support.gcpause import paused_gc
from sc_mlir.support.tables import frame_of
from sc_mlir.syntax.parse import warm_parsers

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future
    from multiprocessing.context import BaseContext

    import pandas as pd

    from sc_mlir.model.bounds import Config

# Columns of `Dump.allocations`, in order. Documented in README.md ("The allocation table").
ALLOCATION_COLUMNS: tuple[str, ...] = (
    "file", "chunk", "module", "func", "kind", "name", "scratch_index", "line", "col",
    "op_form", "type", "shape",
    "resolved_shape", "element_type", "element_bits", "num_elements", "bits", "bytes",
    "words", "memory_space", "space_id", "space_name", "layout", "alignment", "scope_op",
    "scope_path", "scope_start", "scope_end", "order", "live_end", "last_use_line", "core_type",
    "scratch_operands", "size_assumed",
    "dump_header", "loc_file", "loc_line", "loc_col", "loc_names",
)


# Work on one file's records, done where the file is read: in a worker process it must pickle
# (a module-level function, or a `functools.partial` of one).
FileWork = Callable[[list[Allocation]], object]

# Small files go to the workers in groups: about this many tasks per worker (`_task_groups`).
TASKS_PER_WORKER = 16
# With the default jobs, a read smaller than this is done in this process: starting the
# workers and sending their answers back costs about 0.1 s, what reading 4 MB on a second
# core saves (measured on the generator's files: one process 13% faster at 1.2 MB in 10
# files, as fast at 2 MB in 16, the workers as fast at 3.8 MB in 30). A file counts for
# `FILE_COST_BYTES` more than its size: 400 files of 2.4 KB take 0.22 s to read, about
# what 4.5 MB in a few files take.
SMALL_READ_BYTES = 2 << 20
FILE_COST_BYTES = 12 << 10


class WorkFailed(RuntimeError):
    """`load(..., work=)`'s work raised on a file's records: a bug of the caller, not a file
    that cannot be read (so the file is not read again, as it is when a worker dies)."""


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
    # What `load(..., work=)` made of the records, where they were read: one answer per
    # part the work was given (the whole file, or each span of a large one read in spans);
    # None for a file that could not be read.
    worked: list[object] | None = None


@dataclass(frozen=True)
class LoadSettings:
    scan: ScanSettings = field(default_factory=ScanSettings)
    model: ModelSettings = field(default_factory=ModelSettings)

    @classmethod
    def from_config(cls, config: Config) -> LoadSettings:
        """What a config file changes in reading: space names, scope and run-once ops.
        Raises ValueError (naming the file) for a space mapping that does not read."""
        try:
            space_map = SpaceMap.default().with_overrides(config.spaces)
        except ValueError as exc:
            raise ValueError(f"{config.path}: {exc}") from None
        scope_ops = DEFAULT_SCOPE_OPS if config.scope_ops is None else config.scope_ops
        run_once = (DEFAULT_RUN_ONCE_OPS if config.run_once_ops is None
                    else config.run_once_ops)
        return cls(ScanSettings(run_once_ops=frozenset(run_once)),
                   ModelSettings(space_map, frozenset(scope_ops)))


def read_file(path: str, settings: LoadSettings | None = None, *, jobs: int = 1,
              pool: Executor | None = None, on_bytes: BytesRead | None = None,
              work: FileWork | None = None, keep_records: bool = True) -> FileResult:
    """Scan one file and build its allocation records (runs in worker processes too). With
    `jobs` > 1 and a process `pool`, a large file is scanned in parts. `on_bytes` is told
    the bytes scanned as the scan goes; `work(records)` becomes the result's `worked`, and
    without `keep_records` the result holds no records (only what `work` made of them)."""
    settings = settings or LoadSettings()
    if work is not None and not keep_records and _size(path) >= event_spans.MIN_FILE_BYTES:
        in_spans = _read_in_spans(path, settings, work, on_bytes,
                                  jobs if _pickles(work) else 1, pool)
        if in_spans is not None:
            return in_spans
    with paused_gc():
        try:
            # The fast reader first; the careful one reads what it does not vouch for, a
            # large file in parts on `jobs` cores (its own workers when not given a pool).
            scan = read_events(path, settings.scan, on_bytes)
            if scan is not None:
                pass
            elif jobs > 1 and pool is not None:
                scan = scan_file_in_parts(path, settings.scan, jobs, pool, on_bytes=on_bytes)
            elif jobs > 1 and _size(path) >= 2 * parts.MIN_PART_BYTES:
                from concurrent.futures import ProcessPoolExecutor  # see _read_all

                warm_parsers()
                with ProcessPoolExecutor(max_workers=jobs, mp_context=worker_context(),
                                         initializer=start_worker, initargs=(None,)) as own:
                    scan = scan_file_in_parts(path, settings.scan, jobs, own, on_bytes=on_bytes)
            else:
                scan = scan_file(path, settings.scan, on_bytes=on_bytes)
            records, diagnostics = build_allocations(scan, settings.model)
        except OSError as exc:
            return _unread(path, f"cannot read: {exc.strerror or exc}")
        except Exception as exc:  # a bug must cost one file, not the whole dump
            return _unread(path, f"sc-mlir failed on it ({type(exc).__name__}: {exc}); "
                           "please report this with the file")
        return _result(path, scan, records, diagnostics, work, keep_records)


def _result(path: str, scan: FileScan, records: list[Allocation],
            diagnostics: list[Diagnostic], work: FileWork | None, keep_records: bool
            ) -> FileResult:
    worked = [_do(work, records, path)] if work is not None else None
    return FileResult(FileSummary(path, scan.lines, scan.ops, len(scan.allocas)),
                      records if keep_records else [], diagnostics, worked)


def _read_in_spans(path: str, settings: LoadSettings, work: FileWork,
                   on_bytes: BytesRead | None, jobs: int = 1, pool: Executor | None = None,
                   guess_table: bool = True) -> FileResult | None:
    """A large file read a span at a time (`read.event_spans`), each span's records given
    to `work` and dropped: memory holds one span. With `jobs` > 1, the spans are read in
    parallel: by this process and `jobs - 1` workers started here (`_share_out_spans`), or
    by the given pool's workers, which read a directory's other files too; the answers go
    on in the spans' order, and what one process would do stays the rule. None when the
    file is to be read whole: a shape the span reader does not read, or one where the
    spans' records would not be the file's (notes to make, which count over the whole file,
    or a func in two spans). A worker that dies, or an answer that does not pickle, has the
    spans read here, one at a time. Sharing the spans out with workers started here, the
    `#loc` table is checked once they are started, unless not `guess_table`
    (`_share_out_spans`)."""
    answers: list[object] = []
    allocas = 0
    ops = 1  # the module
    seen: set[tuple[int, str, str]] = set()
    with SpanReader(path, settings.scan, on_bytes,
                    guess_table=guess_table and jobs > 1 and pool is None
                    ) as reader, paused_gc():
        try:
            if not reader.open():
                return None
            spans = [] if jobs == 1 else [span for span, _ in reader.spans()]
            # With workers, the block lasts until every answer is in: they name the file's
            # `#loc` table, which this process holds, rather than carry it.
            with event_spans.shared(reader) if spans else nullcontext():
                done: Iterable[_SpanDone | None]
                if not spans:
                    done = _spans_here(reader, settings, work)
                else:
                    try:
                        done = (_share_out_spans(reader, spans, settings, work, jobs)
                                if pool is None
                                else _spans_on_pool(pool, reader, spans, settings, work))
                    except (_Declined, _GuessedWrong):
                        raise
                    except Exception as exc:  # a worker died (out of memory?), or an
                        raise _WorkersFailed from exc  # answer did not pickle
                for span_done in done:
                    if span_done is None or not span_done.funcs.isdisjoint(seen):
                        raise _Declined
                    if span_done.failed is not None:
                        raise span_done.failed
                    seen |= span_done.funcs
                    allocas += span_done.allocas
                    ops += span_done.ops - 1
                    answers.append(span_done.answer)
        except WorkFailed:
            raise
        except _GuessedWrong:  # read again, the table checked before the workers start
            reader.take_back()
            return _read_in_spans(path, settings, work, on_bytes, jobs, guess_table=False)
        except _WorkersFailed:
            reader.take_back()
        except Exception:  # declined (Unvouched...), unreadable, or a bug of this path: the
            reader.take_back()  # file is read whole, and the whole-file readers say what is wrong
            return None
        else:
            reader._report(reader.state[0] - reader.close_start)
            return FileResult(FileSummary(path, reader.lines, ops, allocas), [], [], answers)
    return _read_in_spans(path, settings, work, on_bytes)  # here, one at a time


def _spans_here(reader: SpanReader, settings: LoadSettings, work: FileWork
                ) -> Iterator[_SpanDone | None]:
    """Each span read here in turn, its bytes told once it is done."""
    for span, text in reader.spans():
        yield _span_done(reader, span, settings, work, text)
        reader._report(span.end - span.start)


def _span_records(scan: FileScan, settings: LoadSettings
                  ) -> tuple[list[Allocation], frozenset[tuple[int, str, str]]] | None:
    """A span's records and the funcs they are in; None when they would not be the whole
    file's (a note to make, counted over the file, or an alloca outside any func)."""
    records, diagnostics = build_allocations(scan, settings.model)
    if diagnostics:
        return None
    funcs = frozenset(map(_func_of, records))  # read in C: a span has thousands of records
    if any(not func for _chunk, _module, func in funcs):
        return None
    return records, funcs


_func_of = attrgetter("chunk", "placement.module", "placement.func")


class _Declined(Exception):
    """A span the fast reader declines, or whose records are not the whole file's."""


class _WorkersFailed(Exception):
    """A worker died, or an answer did not pickle: not the file's doing."""


class _GuessedWrong(Exception):
    """The workers read with a `#loc` table guessed wrong (`SpanReader.check_table`)."""


class _SpanDone(NamedTuple):
    """One span read: `work`'s answer (or how it failed: raised only when the spans before
    are handed on, as one process would) and the span's counts."""

    answer: object
    allocas: int
    ops: int
    funcs: frozenset[tuple[int, str, str]]
    failed: WorkFailed | None = None


def _share_out_spans(reader: SpanReader, spans: list[event_spans.Span],
                     settings: LoadSettings, work: FileWork, jobs: int
                     ) -> list[_SpanDone | None]:
    """Each span read once, by `jobs - 1` workers started here, which take them from the
    first on, or by this process, which takes them from the last back (never the first): a
    pair of counters in shared memory says which are left. Each worker sends back its
    answers once, at the end: a task or an answer per span would need this process's
    threads, which wait for the interpreter lock while this process reads."""
    from concurrent.futures import ProcessPoolExecutor  # see _read_all

    context = worker_context()
    claims = event_spans.SpanClaims(context, len(spans))
    workers = max(min(jobs - 1, len(spans) - 1), 1)  # no more than spans to read
    done: dict[int, _SpanDone | None] = {}
    with ProcessPoolExecutor(max_workers=workers, mp_context=context,
                             initializer=_start_span_worker, initargs=(claims,)) as pool:
        try:
            futures = [pool.submit(_read_spans_from_the_first, reader.path, settings,
                                   reader.state, spans, work) for _ in range(workers)]
            # The workers are forked now: while they read, this process checks the table
            # the reader guessed, which they read with. Not the file's table: their answers
            # are dropped, and the spans read again, the table checked first.
            try:
                guessed_right = reader.check_table()
            except Exception:  # as `open` declining the file: it is read whole
                raise _Declined from None
            if not guessed_right:
                raise _GuessedWrong
            # This process too reads the `#loc` lines from the file, and holds the table
            # again once they are done (records made here may be asked for their locations
            # later).
            table = reader.table
            if isinstance(table, LocationTable):
                table.read_from_file(reader._read_tail)
            mine = told = 0  # bytes of the spans read here; of all, told to the progress
            while (i := claims.from_the_last(lowest=1)) is not None:
                span_done = done[i] = _span_done(reader, spans[i], settings, work)
                if span_done is None:  # the file is to be read whole: the workers stop
                    claims.stop()
                elif span_done.failed is not None:
                    break  # only the spans before it matter: the workers read them, in order
                mine += spans[i].end - spans[i].start
                so_far = max(mine + claims.bytes_read(), told)
                reader._report(so_far - told)
                told = so_far
                if any(future.done() for future in futures):
                    break  # while spans are left: a worker died (its result says)
            for future in futures:
                done.update(future.result())
            reader._report(sum(span.end - span.start for span in spans) - told)
            if isinstance(table, LocationTable):
                try:
                    table.read_into_memory()
                except TableGone:
                    raise _Declined from None
                if not reader.unchanged():  # not the table the answers were made with
                    raise _Declined
        finally:
            claims.stop()  # what is left unread stays so: the workers end
    return [done.get(i) for i in range(len(spans))]


def _spans_on_pool(pool: Executor, reader: SpanReader, spans: list[event_spans.Span],
                   settings: LoadSettings, work: FileWork) -> list[_SpanDone | None]:
    """Each span a task of the pool's, which reads a directory's other files too."""
    from concurrent.futures import wait  # a pool's module: imported where there is one

    futures = [pool.submit(_read_span, reader.path, settings, reader.state, span, work)
               for span in spans]
    try:
        done: list[_SpanDone | None] = []
        for span, future in zip(spans, futures, strict=True):
            span_done = future.result()
            done.append(span_done)
            reader._report(span.end - span.start)
            if span_done is None or span_done.failed is not None:
                break  # the spans after it change nothing (read whole, or the failure)
        return done
    finally:
        for future in futures:
            future.cancel()
        wait(futures)  # the ones already running: their answers name the table


_span_claims: event_spans.SpanClaims | None = None


def _start_span_worker(claims: event_spans.SpanClaims) -> None:
    """Initializer of a worker of `_share_out_spans`."""
    global _span_claims
    start_worker(None)
    _span_claims = claims


def _read_spans_from_the_first(path: str, settings: LoadSettings, state: tuple[int, int],
                               spans: list[event_spans.Span], work: FileWork
                               ) -> dict[int, _SpanDone | None]:
    """A worker's task in `_share_out_spans`: the spans it takes, from the first on, until
    none is left; one that is to be read whole (None) ends the sharing."""
    claims = _span_claims
    assert claims is not None
    done: dict[int, _SpanDone | None] = {}
    try:
        reader = event_spans.reader_for(path, settings.scan, state)
    except Exception:  # as `_read_in_spans`: the file is read whole
        reader = None
    try:
        while (i := claims.from_the_first()) is not None:
            span_done = done[i] = _span_done(reader, spans[i], settings, work) if reader else None
            if span_done is None or span_done.failed is not None:
                # The spans after it change nothing: the file is read whole, or the work's
                # failure raised once the spans before it (this worker's) are handed on.
                claims.stop()
            claims.read(spans[i].end - spans[i].start)
    except BaseException:  # not the file's doing (interrupted...): the others stop too
        claims.stop()
        raise
    return done


def _read_span(path: str, settings: LoadSettings, state: tuple[int, int],
               span: event_spans.Span, work: FileWork) -> _SpanDone | None:
    """A worker's task: one span of a file read in spans, and `work` on its records. None
    when the file is to be read whole (the span declined, or the file changed)."""
    try:
        reader = event_spans.reader_for(path, settings.scan, state)
    except Exception:  # as `_read_in_spans`: the file is read whole
        return None
    return _span_done(reader, span, settings, work) if reader is not None else None


def _span_done(reader: SpanReader, span: event_spans.Span, settings: LoadSettings,
               work: FileWork, text: bytes | None = None) -> _SpanDone | None:
    """One span read, and `work` done on its records; None when the file is to be read
    whole (the span declined, or the file changed). A failing work is in `failed`: one
    process would have found an earlier span declined, or a func in two spans, before it
    ran the work on this one."""
    try:
        scan = reader.read_span(span, text)
        checked = _span_records(scan, settings)
    except Exception:  # as `_read_in_spans`: the file is read whole
        return None
    if checked is None:
        return None
    records, funcs = checked
    try:
        answer = _do(work, records, reader.path)
    except TableGone:  # a worker's table is read from the file, which changed
        return None
    except WorkFailed as failed:
        return _SpanDone(None, len(scan.allocas), scan.ops, funcs, failed)
    if not reader.unchanged():  # the answer may hold what the file said before
        return None
    return _SpanDone(answer, len(scan.allocas), scan.ops, funcs)


def _pickles(work: FileWork) -> bool:
    """Whether `work` can go to a worker process (one file's work need not: it is then done
    here, as with one job)."""
    from multiprocessing.reduction import ForkingPickler  # see _read_all

    try:
        ForkingPickler.dumps(work)
    except Exception:
        return False
    return True


def _do(work: FileWork, records: list[Allocation], path: str) -> object:
    try:
        return work(records)
    except TableGone:  # the file's, not the caller's: it changed while it was read
        raise
    except Exception as exc:  # the caller's bug, not the file's
        raise WorkFailed(f"work= failed on {path}: {type(exc).__name__}: {exc}") from exc


def read_kernel(path: str, text: str, settings: LoadSettings,
                work: FileWork | None = None, keep_records: bool = True) -> FileResult:
    """Scan a kernel held in memory (from a lowered program) as if it were a file."""
    with paused_gc():
        try:
            scan = scan_text(text, path, settings.scan)
            records, diagnostics = build_allocations(scan, settings.model)
        except Exception as exc:  # a bug must cost one kernel, not the whole dump
            return _unread(path, f"sc-mlir failed on it ({type(exc).__name__}: {exc}); "
                           "please report this with the file")
        return _result(path, scan, records, diagnostics, work, keep_records)


def _unread(path: str, why: str) -> FileResult:
    # `worked` stays None: the caller's work is not done on a file that was not read.
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
        return [d for d in self.diagnostics if is_skipped_allocation(d)]

    @property
    def usable(self) -> bool:
        """False when nothing at all could be read (the CLI exits 2)."""
        return bool(self.files) and any(f.lines for f in self.files)


class NoMLIRFound(ValueError):
    """Nothing under a path could be read as MLIR text (the CLI exits 2 for it). The notes
    say why for each file (empty, binary, not MLIR...)."""

    def __init__(self, path: str, diagnostics: list[Diagnostic]) -> None:
        self.path = path
        self.diagnostics = diagnostics
        why = "; ".join(f"{os.path.basename(d.file) or d.file}: {d.message}"
                        for d in diagnostics[:3])
        more = f"; and {len(diagnostics) - 3} more" if len(diagnostics) > 3 else ""
        super().__init__(f"no MLIR text found in {path}"
                         + (f" ({why}{more})" if why else " (no files in it)"))


def allocations_frame(records: list[Allocation]) -> pd.DataFrame:

    return frame_of((allocation_row(r) for r in records), ALLOCATION_COLUMNS,
                    ("scratch_index", "element_bits", "num_elements", "bits", "bytes",
                     "words", "space_id", "alignment", "loc_line", "loc_col"))


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


def load(path: str | os.PathLike[str], *, settings: LoadSettings | None = None,
         jobs: int | None = 1, progress: ProgressHook | None = None,
         on_file: Callable[[list[Allocation]], object] | None = None,
         work: FileWork | None = None, on_answer: Callable[[object], object] | None = None,
         keep_records: bool = True) -> Dump:
    """Read a dump: a file or a directory (recursive, files found by content).

    `jobs` worker processes read files in parallel (None: all cores, but a dump under about
    2 MB, `SMALL_READ_BYTES`, is read faster by this process alone). Files that are not
    MLIR text are skipped, each with a diagnostic. `progress(done, total, path)` is called
    as the files are scanned, in bytes (of all the MLIR files), ending with done == total.
    Raises `FileNotFoundError` for a path that does not exist, and `NoMLIRFound` when
    nothing under it is MLIR text (an empty directory, only binary files...). A lowered
    program (StableHLO or HLO text with `tpu_custom_call`s) is read as its kernels, each a
    file named `FILE#kernel`; that needs jax (`jaxbridge.JaxMissing` says how many kernels
    were found, if it is absent).

    Hooks for the analyses done as the files are read: `on_file(records)` is called with
    each file's records as soon as they are read, in the order of `Dump.records` (work
    done there overlaps the reading of the next files). With `work`, each file's records
    are first given to `work(records)` where the file is read, in a worker process if it
    is read by one (so the work is spread over the cores; `work` must pickle), and
    `on_answer(answer)` is called here with what it gives, in the same order (None for a
    file that could not be read). `work` may run twice on a file: the files of a worker
    that died, or whose answers did not pickle, are read again here. With `work` and not
    `keep_records`, the records are dropped once `work` has had them, so they need not
    travel from the workers: `on_file` gets an empty list and `Dump.records` is empty
    (the files' summaries and the diagnostics are all there); and a large file may then
    be read a span of whole funcs at a time, `work` and `on_answer` called once per span,
    so that memory holds one span (`read.event_spans`).
    """
    if not keep_records and work is None:
        raise ValueError("keep_records=False needs work= (the records would be lost)")
    if on_answer is not None and work is None:
        raise ValueError("on_answer= needs work= (it is called with what work gives)")
    settings = settings or LoadSettings()
    no_programs: set[str] = set()

    def note_no_program(file: str, head: bytes) -> None:
        if not may_hold_a_program(head):
            no_programs.add(file)

    files, skipped = discover(path, on_head=note_no_program)
    files, skipped, programs = split_programs(files, skipped, no_programs)
    if any(p.kernels for p in programs) and not jaxbridge.available():
        raise jaxbridge.JaxMissing(missing_jax_message([p for p in programs if p.kernels]))
    diagnostics = [_skip_note(s) for s in skipped]
    def kernel_results() -> Iterator[FileResult]:
        for program in programs:
            yield from read_program_kernels(program, settings, work, keep_records)
            diagnostics.extend(program.diagnostics)  # its kernels' problems too, once read

    results: list[FileResult] = []
    read = _read_all(files, settings, jobs, progress, work, keep_records)
    try:
        for result in chain(read, kernel_results()):
            results.append(result)
            if on_file is not None:
                on_file(result.records)
            if on_answer is not None:
                for answer in result.worked if result.worked is not None else [None]:
                    on_answer(answer)
    finally:
        read.close()  # a hook that raised: the workers do not read on
    records: list[Allocation] = []
    summaries: list[FileSummary] = []
    for result in results:
        records.extend(result.records)
        summaries.append(result.summary)
        diagnostics.extend(result.diagnostics)
    dump = Dump(str(path), records, summaries, diagnostics, settings)
    if not dump.usable:
        raise NoMLIRFound(str(path), diagnostics)
    return dump


def read_program_kernels(program: Program, settings: LoadSettings,
                         work: FileWork | None = None, keep_records: bool = True
                         ) -> list[FileResult]:
    """The kernels of a lowered program, each read as a file. Problems with single kernels
    are added to `program.diagnostics`."""
    return [read_kernel(source.path, source.text, settings, work, keep_records)
            for source in kernel_sources(program)]


def _skip_note(skipped: Skipped) -> Diagnostic:
    return Diagnostic(skipped.path, 0, 0, f"file skipped: {skipped.reason}")


def _read_all(files: list[str], settings: LoadSettings, jobs: int | None,
              progress: ProgressHook | None, work: FileWork | None,
              keep_records: bool) -> Iterator[FileResult]:
    workers = (os.cpu_count() or 1) if jobs is None else max(jobs, 1)
    sizes = [_size(path) for path in files]
    if jobs is None and sum(sizes) + FILE_COST_BYTES * len(files) < SMALL_READ_BYTES:
        workers = 1  # too little to read for workers to pay for themselves
    large = [size >= 2 * parts.MIN_PART_BYTES for size in sizes]
    if workers == 1 or len(files) < 2:
        # One file: read here (workers are started only if the careful reader needs them).
        tracker = ByteProgress(progress, sum(sizes))
        for path in files:
            result = read_file(path, settings, jobs=workers,
                               on_bytes=tracker.file(path) if progress else None, work=work,
                               keep_records=keep_records)
            tracker.finish(path)
            yield result
        tracker.complete()
        return
    # Small files go to the workers whole; a large one is read here, its parts scanned by
    # the same workers. The grammars are not built before the workers start: the fast
    # reader needs none, and a worker builds them only for a file it declines (43 ms each,
    # on the workers' cores, rather than before any of them starts). The workers add the
    # bytes they scan to one shared counter. (The pool's module is imported only here:
    # reading one file in this process never needs it.)
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing.reduction import ForkingPickler

    if work is not None:  # with the pool's own pickler (no file is ever unpickled)
        try:  # said once here, rather than found out as each file's task fails
            ForkingPickler.dumps(work)
        except Exception as exc:
            raise ValueError(f"work= must pickle to run in worker processes (a module-level "
                             f"function or a partial of one), or pass jobs=1: {exc}") from None
    context = worker_context()
    counter = context.Value("q", 0) if progress else None
    tracker = ByteProgress(progress, sum(sizes), counter)
    worker_bytes = count_in_worker if progress else None
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=start_worker,
                             initargs=(counter,)) as pool:
        # Small files go in groups of consecutive files: a task per file costs this
        # process a wake-up and a message each way, taken from the cores the workers use.
        pending: dict[int, tuple[Future[list[FileResult | WorkFailed]], int]] = {}
        for group in _task_groups(sizes, large, workers):
            future = pool.submit(_read_group, [files[i] for i in group], settings,
                                 worker_bytes, work, keep_records)
            pending.update((i, (future, place)) for place, i in enumerate(group))
        try:
            for i, path in enumerate(files):
                if large[i]:
                    result = read_file(path, settings, jobs=workers, pool=pool,
                                       on_bytes=tracker.file(path) if progress else None,
                                       work=work, keep_records=keep_records)
                else:
                    try:
                        group_future, place = pending.pop(i)
                        wait_reporting(group_future,
                                       tracker.file(path) if progress else None)
                        result = group_future.result()[place]
                        if isinstance(result, WorkFailed):
                            raise result  # after the answers of the files before it
                    except WorkFailed:
                        raise
                    except Exception:  # the worker died (out of memory...), or what it
                        # sent back did not pickle (a location nested too deep...): each
                        # file of the task is read here, its work done again
                        result = read_file(path, settings, work=work,
                                           keep_records=keep_records)
                tracker.finish(path)
                yield result
        except BaseException:  # a failing work, or the caller stopped: the files not
            for future, _ in pending.values():  # begun are not read
                future.cancel()
            raise
    tracker.complete()


def _task_groups(sizes: list[int], large: list[bool], workers: int) -> list[list[int]]:
    """The small files (indexes, in order) in groups of consecutive files, each a worker's
    task: groups of about 1/TASKS_PER_WORKER of a worker's share of the bytes, few enough
    that the tasks cost little, many enough that the workers end close together.

    >>> _task_groups([1] * 64, [False] * 64, workers=2)[:3]  # 2 bytes a group
    [[0, 1], [2, 3], [4, 5]]
    >>> _task_groups([3, 3, 1, 1, 50, 9], [False] * 4 + [True] + [False], workers=1)
    [[0], [1], [2], [3], [5]]
    """
    small = [i for i, is_large in enumerate(large) if not is_large]
    target = sum(sizes[i] for i in small) / (workers * TASKS_PER_WORKER)
    groups: list[list[int]] = []
    group: list[int] = []
    group_bytes = 0
    for i in small:
        if group and group_bytes + sizes[i] > target:
            groups.append(group)
            group, group_bytes = [], 0
        group.append(i)
        group_bytes += sizes[i]
    if group:
        groups.append(group)
    return groups


def _read_group(paths: list[str], settings: LoadSettings, on_bytes: BytesRead | None,
                work: FileWork | None, keep_records: bool) -> list[FileResult | WorkFailed]:
    """A worker's task: `read_file` on each of a group of files, in order. A failing work
    ends the group with its error after the results before it, so that the caller gets
    those files' answers first, as it would with a task per file."""
    results: list[FileResult | WorkFailed] = []
    for path in paths:
        try:
            results.append(read_file(path, settings, on_bytes=on_bytes, work=work,
                                     keep_records=keep_records))
        except WorkFailed as failed:
            results.append(failed)
            break
    return results


def worker_context() -> BaseContext:
    """How worker processes start: forked (the default, fast, sharing the grammars built
    here), except once jax is imported (`sc_mlir.check`, embedded kernels): jax runs
    threads, and forking a process with threads may deadlock the child, so the workers
    then start from a fork server, a fresh process without jax."""
    import multiprocessing  # here: reading in one process never starts a worker

    if "jax" in sys.modules and "forkserver" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context()


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def example_path() -> str:
    """The sample dump shipped inside the package (used by `--example`)."""
    from importlib import resources  # 9M instructions at import, for --example alone

    packaged = resources.files("sc_mlir") / "examples"
    if packaged.is_dir():
        return str(packaged)
    return str(Path(__file__).resolve().parents[2] / "fixtures" / "sample")
