"""A file read a span of top-level ops at a time (sc_mlir/read/event_spans.py) against the
same file read whole by the fast reader: the same allocas and records, program points
aside (each span counts them from its own start, so they are compared relative to the
func's), and, through `load(..., work=, keep_records=False)`, the same analysis. Files or
spans it does not read are read whole, with the same answers."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import pytest
from conftest import REPO
from test_events import GENERATOR, mlir_files

from sc_mlir.formats.analysis_json import space_object
from sc_mlir.model.allocation import Allocation, build_allocations
from sc_mlir.model.dump import load, read_file
from sc_mlir.read import event_spans, parts
from sc_mlir.read.event_spans import SpanReader
from sc_mlir.read.events import read_events
from sc_mlir.read.records import FileScan, OpFrame, RawAlloca, ScanSettings

CORPUS = REPO.parent / "shared" / "corpus"
# Program points: counted from each span's start.
_ORDERS = ("order", "live_end")  # (the scope's are in `placement`)


def func_of(frames: tuple[OpFrame, ...]) -> OpFrame | None:
    return next((f for f in reversed(frames) if f.name.endswith("func")), None)


def relative(value: int, base: int | None) -> int:
    """A program point relative to its func's (-1, never, stays)."""
    return value - base if base is not None and value >= 0 else value


def frame_fields(frame: OpFrame, base: int | None) -> tuple:
    # The frames of a span's top level count their siblings from the span's start.
    sibling = frame.sibling_index if frame.parent is None or frame.parent.parent else None
    return (frame.name, relative(frame.order, base), frame.line, frame.col, frame.header,
            frame.results, sibling, frame.loop_like, frame.chunk, frame.top_index,
            relative(frame.end_order, base), tuple(frame.trailer), frame.end_line,
            frame.entry_block)


def alloca_fields(alloca: RawAlloca) -> tuple:
    func = func_of(alloca.frames)
    base = func.order if func is not None else None
    frames = tuple(frame_fields(f, base) for f in alloca.frames if f.parent is not None)
    return (alloca.line, alloca.col, alloca.text_col, alloca.text, alloca.results,
            alloca.chunk, alloca.syntax, alloca.size_constants, alloca.live_end_line,
            relative(alloca.order, base), relative(alloca.live_end, base), frames)


def record_fields(record: Allocation, func_order: int) -> dict[str, object]:
    fields = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)
              if f.name not in ("locations", "frames", "context")}
    for name in _ORDERS:
        fields[name] = relative(fields[name], func_order)
    placement = record.placement
    fields["placement"] = dataclasses.replace(
        placement, scope_start=relative(placement.scope_start, func_order),
        scope_end=relative(placement.scope_end, func_order))
    fields["loc"] = record.loc
    return fields


def read_in_spans(path: Path, span_bytes: int) -> tuple[list[FileScan], SpanReader] | None:
    with SpanReader(str(path), ScanSettings(), span_bytes=span_bytes) as reader:
        if not reader.open():
            return None
        return [reader.read_span(span, text) for span, text in reader.spans()], reader


def generated(tmp_path: Path, form: str, locs: str, seed: int, size: int = 150_000) -> Path:
    path = tmp_path / f"{form}_{locs}_{seed}.mlir"
    GENERATOR.write_module(path, form, size, seed, locs)
    return path


def assert_spans_read_as_whole(path: Path, span_bytes: int) -> int:
    """The number of spans; asserts they read as the whole file does."""
    whole = read_events(str(path))
    assert whole is not None, "the fast reader declines the file"
    read = read_in_spans(path, span_bytes)
    assert read is not None
    scans, reader = read
    assert [alloca_fields(a) for s in scans for a in s.allocas] == [
        alloca_fields(a) for a in whole.allocas]
    # (The module is an op of every span's text: counted once.)
    assert (reader.lines, 1 + sum(s.ops - 1 for s in scans)) == (whole.lines, whole.ops)
    # Records: every field, program points relative to the func's first record's.
    whole_records, whole_notes = build_allocations(whole)
    span_records = []
    for scan in scans:
        records, notes = build_allocations(scan)
        assert notes == [] or whole_notes
        span_records.extend(records)
    assert relative_records(span_records) == relative_records(whole_records)
    return len(scans)


def relative_records(records: list[Allocation]) -> list[dict[str, object]]:
    first: dict[tuple[int, str, str], int] = {}
    return [record_fields(r, first.setdefault((r.chunk, r.module, r.func), r.order))
            for r in records]


@pytest.mark.parametrize("form", ["generic", "pretty"])
@pytest.mark.parametrize("locs", ["simple", "xla"])
@pytest.mark.parametrize("seed", [1, 2])
def test_generated_dumps_read_in_spans_as_whole(tmp_path, form, locs, seed):
    path = generated(tmp_path, form, locs, seed)
    assert assert_spans_read_as_whole(path, 4_000) > 1


def test_corpus_files_read_in_spans_as_whole():
    files = [p for p in mlir_files(CORPUS / "mosaic") if read_events(str(p)) is not None]
    if not files:
        pytest.skip(f"no corpus at {CORPUS} (read-only, shared; see tests/README)")
    spans = 0
    for path in files:
        if read_in_spans(path, 200) is not None:
            spans += assert_spans_read_as_whole(path, 200)
    assert spans >= len(files)


def _analysis_of(records: list[Allocation]) -> list[str]:
    from sc_mlir.analysis import reports_of_file
    from sc_mlir.model.bounds import build_bounds

    reports = reports_of_file(build_bounds(None, None, None, None), records)
    return [json.dumps(space_object(r), sort_keys=True) for r in reports]


@pytest.mark.parametrize("form", ["generic", "pretty"])
@pytest.mark.parametrize("locs", ["simple", "xla"])
def test_load_in_spans_gives_the_whole_files_analysis(tmp_path, monkeypatch, form, locs):
    path = generated(tmp_path, form, locs, 7, size=120_000)
    whole = _analysis_of(load(path).records)
    monkeypatch.setattr(event_spans, "SPAN_BYTES", 5_000)
    monkeypatch.setattr(event_spans, "MIN_FILE_BYTES", 10_000)
    answers: list[list[str]] = []
    dump = load(path, work=_analysis_of, keep_records=False,
                on_answer=answers.append)
    assert len(answers) > 2  # one per span
    assert [s for answer in answers for s in answer] == whole
    assert dump.files == load(path).files  # lines, ops and allocas of the whole file
    assert dump.diagnostics == []


def _heap_alloc(text: str) -> str:
    return text.replace('"memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () '
                        '-> memref<4096xi8, 201>',
                        '"memref.alloc"() <{operandSegmentSizes = array<i32: 0, 0>}> : () '
                        '-> memref<4096xi8, 201>', 1)


def _comment_after_code(text: str) -> str:
    at = text.index("\n", len(text) // 2)
    return text[:at] + " // a note" + text[at:]


def _same_func_twice(text: str) -> str:
    return text.replace('sym_name = "sc_kernel_2"', 'sym_name = "sc_kernel_0"', 1)


@pytest.mark.parametrize("damage", [_heap_alloc, _comment_after_code, _same_func_twice])
def test_what_spans_cannot_say_is_read_whole(tmp_path, monkeypatch, damage):
    """A note counted over the file (heap allocs), a line the fast reader declines, a func
    name in two spans: the file is read whole, with the whole file's answers."""
    path = generated(tmp_path, "generic", "xla", 3, size=120_000)
    text = path.read_text()
    changed = damage(text)
    assert changed != text
    path.write_text(changed)
    expected = load(path)
    monkeypatch.setattr(event_spans, "SPAN_BYTES", 5_000)
    monkeypatch.setattr(event_spans, "MIN_FILE_BYTES", 10_000)
    answers: list[list[str]] = []
    dump = load(path, work=_analysis_of, keep_records=False,
                on_answer=answers.append)
    assert len(answers) == 1  # read whole
    assert answers[0] == _analysis_of(expected.records)
    assert dump.diagnostics == expected.diagnostics and dump.files == expected.files
    told: list[int] = []
    read_file(str(path), work=_analysis_of, keep_records=False, on_bytes=told.append)
    assert any(n < 0 for n in told) or damage is not _comment_after_code
    assert sum(told) == path.stat().st_size  # the spans' bytes were taken back


def test_a_file_not_shaped_as_one_module_is_not_read_in_spans(tmp_path):
    path = tmp_path / "bare.mlir"
    path.write_text("func.func @f() {\n  %a = memref.alloca() : memref<4xf32, 201>\n"
                    "  return\n}\n")
    assert read_in_spans(path, 10) is None
    empty = tmp_path / "empty.mlir"
    empty.write_bytes(b"")
    assert read_in_spans(empty, 10) is None


def spans_counted(monkeypatch) -> list[int]:
    """A list that gets an item for each span read in this process."""
    spans: list[int] = []
    read_span = SpanReader.read_span

    def counted(self, span, text=None):
        spans.append(1)
        return read_span(self, span, text)

    monkeypatch.setattr(SpanReader, "read_span", counted)
    return spans


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_command_reads_large_files_in_spans_and_says_the_same(tmp_path, monkeypatch, jobs):
    """`analyze --format json` reads in spans (here made small); `--allocations` keeps the
    records and reads each file whole: the same spaces, byte for byte."""
    from typer.testing import CliRunner

    from sc_mlir.cli import app
    from sc_mlir.formats.records import to_json

    for form, locs, seed in [("generic", "xla", 11), ("pretty", "simple", 12)]:
        generated(tmp_path, form, locs, seed, size=150_000)
    monkeypatch.setattr(event_spans, "SPAN_BYTES", 5_000)
    monkeypatch.setattr(event_spans, "MIN_FILE_BYTES", 10_000)
    calls = spans_counted(monkeypatch)
    runner = CliRunner()
    result = runner.invoke(app, ["analyze", str(tmp_path), "--format", "json", "--jobs", jobs])
    whole = runner.invoke(app, ["analyze", str(tmp_path), "--format", "json", "--jobs", jobs,
                                "--allocations"])
    assert result.exit_code == whole.exit_code and result.exit_code in (0, 1)
    expected = json.loads(whole.stdout)
    del expected["allocations"]
    assert result.stdout == to_json(expected)
    assert len(expected["spaces"]) > 4
    if jobs == "1":  # (with workers, the spans are counted in their processes)
        assert len(calls) > 4


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_table_and_the_csv_read_in_spans_say_what_the_whole_files_say(tmp_path,
                                                                          monkeypatch, jobs):
    """The table and the CSV show no program points: a large file is read in spans for
    them too (memory holds the reports, not the file), with the same output."""
    from typer.testing import CliRunner

    from sc_mlir.cli import app

    for form, locs, seed in [("generic", "xla", 21), ("pretty", "simple", 22)]:
        generated(tmp_path, form, locs, seed, size=150_000)
    monkeypatch.setattr(event_spans, "SPAN_BYTES", 5_000)
    spans = spans_counted(monkeypatch)
    runner = CliRunner()
    for options in ([], ["--group-by", "source", "--top", "0"], ["--format", "csv"],
                    ["--format", "csv", "--group-by", "file"], ["--space", "201"]):
        command = ["analyze", str(tmp_path), "--jobs", jobs, "--bound", "201=9000", *options]
        monkeypatch.setattr(event_spans, "MIN_FILE_BYTES", 1 << 62)
        whole = runner.invoke(app, command)
        monkeypatch.setattr(event_spans, "MIN_FILE_BYTES", 10_000)
        in_spans = runner.invoke(app, command)
        assert in_spans.exit_code == whole.exit_code and whole.exit_code in (0, 1), options
        assert in_spans.output == whole.output, options
        assert whole.output.count("\n") > 5
    if jobs == "1":  # (with workers, the spans are counted in their processes)
        assert len(spans) > 4 * 5


def test_a_file_that_changes_while_read_is_read_whole(tmp_path, monkeypatch):
    """Before each span, the file's size and time are checked: a map of a file cut short
    faults (SIGBUS) when read past its new end."""
    path = generated(tmp_path, "generic", "xla", 5, size=120_000)
    monkeypatch.setattr(event_spans, "SPAN_BYTES", 5_000)
    monkeypatch.setattr(event_spans, "MIN_FILE_BYTES", 10_000)
    state = SpanReader._state
    checks: list[int] = []

    def touched_after_the_first_span(self):
        size, time = state(self)
        checks.append(size)
        return (size, time + 1) if len(checks) > 2 else (size, time)

    monkeypatch.setattr(SpanReader, "_state", touched_after_the_first_span)
    answers: list[list[str]] = []
    load(path, work=_analysis_of, keep_records=False,
         on_answer=answers.append)
    assert len(checks) == 3  # opened, first span read, the second refused
    assert answers == [_analysis_of(load(path).records)]


def test_a_second_module_is_read_whole(tmp_path, monkeypatch):
    """Two modules: a span after the first one's end would be read inside the first."""
    first = generated(tmp_path, "pretty", "simple", 8, size=60_000).read_text()
    second = generated(tmp_path, "pretty", "simple", 9, size=60_000).read_text()
    body_end = first.index("\n#loc")
    other = re.sub(r" loc\(#loc\d+\)", "",  # its table is not there
                   second[: second.index("\n#loc")].replace("@sc_kernel", "@other_kernel"))
    path = tmp_path / "two_modules.mlir"
    path.write_text(first[:body_end] + "\n" + other + first[body_end:])
    assert read_events(str(path)) is not None  # the whole-file reader reads it
    monkeypatch.setattr(event_spans, "SPAN_BYTES", 3_000)
    monkeypatch.setattr(event_spans, "MIN_FILE_BYTES", 10_000)
    answers: list[list[str]] = []
    load(path, work=_analysis_of, keep_records=False,
         on_answer=answers.append)
    assert answers == [_analysis_of(load(path).records)]
    assert any('"module": "module#1"' in s for s in answers[0])


_CUT: list[Path] = []


def _cut_the_file_short(records):
    """A compile writing the dump again while it is read (once)."""
    path = Path(records[0].file)
    if path not in _CUT:
        _CUT.append(path)
        text = path.read_bytes()
        path.write_bytes(text[: len(text) // 3])
    return len(records)


def test_bytes_told_are_the_files_and_a_file_cut_meanwhile_is_read_as_it_is_then(
        tmp_path, monkeypatch):
    monkeypatch.setattr(event_spans, "SPAN_BYTES", 5_000)
    monkeypatch.setattr(event_spans, "MIN_FILE_BYTES", 10_000)
    path = generated(tmp_path, "pretty", "xla", 4, size=120_000)
    told: list[int] = []
    result = read_file(str(path), work=len, keep_records=False, on_bytes=told.append)
    assert len(result.worked) > 2 and all(n > 0 for n in told)  # in spans
    assert sum(told) == path.stat().st_size
    # Cut short after the first span: no fault (the file is read, never mapped), and the
    # file is read whole as it is then, with the notes that go with it.
    told.clear()
    result = read_file(str(path), work=_cut_the_file_short, keep_records=False,
                       on_bytes=told.append)
    assert path.stat().st_size < 50_000
    assert result.worked == [len(load(path).records)]
    assert sum(told) >= path.stat().st_size
    assert any("never closed" in d.message or "still open" in d.message
               for d in result.diagnostics)


def _pid_and_analysis(records: list[Allocation]) -> tuple[int, list[str]]:
    return os.getpid(), _analysis_of(records)


def _small_spans(monkeypatch) -> None:
    monkeypatch.setattr(event_spans, "SPAN_BYTES", 5_000)
    monkeypatch.setattr(event_spans, "MIN_FILE_BYTES", 10_000)


def _start_workers_by(start: str, monkeypatch) -> None:
    """Workers started by `start`: "default" is `worker_context`'s choice (forked, unless
    jax is imported, as it is once other tests ran: forking then risks a deadlock, which is
    why `test_forked_workers_find_the_file_open` runs in a process of its own)."""
    import multiprocessing

    import sc_mlir.model.dump as dump_module

    if start == "default":
        return
    if start not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {start} start method here")
    monkeypatch.setattr(dump_module, "worker_context",
                        lambda: multiprocessing.get_context(start))


@pytest.mark.parametrize("start", ["default", "forkserver"])
def test_spans_read_by_workers_give_what_one_process_gives(tmp_path, monkeypatch, start):
    """With jobs, the spans of one large file are read by worker processes and this one, in
    parallel, and handed on in order: forked workers find the file open; workers from a
    fork server open it themselves."""
    _start_workers_by(start, monkeypatch)
    path = generated(tmp_path, "pretty", "xla", 31, size=120_000)
    whole = load(path)
    _small_spans(monkeypatch)
    alone: list[tuple[int, list[str]]] = []
    load(path, work=_pid_and_analysis, keep_records=False, on_answer=alone.append)
    answers: list[tuple[int, list[str]]] = []
    dump = load(path, jobs=2, work=_pid_and_analysis, keep_records=False,
                on_answer=answers.append)
    assert len(answers) == len(alone) > 2  # one per span, in both
    assert [a for _, a in answers] == [a for _, a in alone]
    assert [s for _, a in answers for s in a] == _analysis_of(whole.records)
    assert {pid for pid, _ in answers} - {os.getpid()}  # the workers read some
    assert dump.files == whole.files and dump.diagnostics == []


def _heap_alloc_at_the_end(text: str) -> str:
    """The body's last alloca made a heap alloc."""
    at = text.rindex('"memref.alloca"()', 0, text.index("\n#loc"))
    assert at > text.index("\n#loc") * 2 // 3
    return text[:at] + '"memref.alloc"()' + text[at + len('"memref.alloca"()'):]


@pytest.mark.parametrize("where", ["first", "last"])
def test_a_span_declined_where_it_is_read_has_the_file_read_whole(tmp_path, monkeypatch,
                                                                   where):
    """A heap alloc (a note counted over the whole file) in a first span, which a worker
    reads, or in one of the last, which this process reads as a rule."""
    path = generated(tmp_path, "generic", "xla", 32, size=120_000)
    text = path.read_text()
    path.write_text(_heap_alloc(text) if where == "first" else _heap_alloc_at_the_end(text))
    expected = load(path)
    _small_spans(monkeypatch)
    answers: list[tuple[int, list[str]]] = []
    dump = load(path, jobs=2, work=_pid_and_analysis, keep_records=False,
                on_answer=answers.append)
    assert [a for _, a in answers] == [_analysis_of(expected.records)]
    assert answers[0][0] == os.getpid()  # read whole, here
    assert dump.diagnostics == expected.diagnostics and dump.files == expected.files
    told: list[int] = []
    read_file(str(path), jobs=2, work=len, keep_records=False, on_bytes=told.append)
    assert any(n < 0 for n in told)  # the spans' bytes, taken back
    assert sum(told) == path.stat().st_size


def test_bytes_told_for_spans_read_by_workers_are_the_files(tmp_path, monkeypatch):
    path = generated(tmp_path, "generic", "simple", 33, size=120_000)
    _small_spans(monkeypatch)
    told: list[int] = []
    result = read_file(str(path), jobs=2, work=len, keep_records=False, on_bytes=told.append)
    assert len(result.worked) > 2 and all(n > 0 for n in told)
    assert sum(told) == path.stat().st_size


_EVENTS: list[str] = []


def _noted_here(parent: int, records: list[Allocation]) -> int:
    """Noted in this process's list; slow in a worker, so that this process reads most."""
    import time

    if os.getpid() == parent:
        _EVENTS.append("work")
    else:
        time.sleep(0.05)
    return len(records)


def test_progress_is_told_as_the_spans_are_read(tmp_path, monkeypatch):
    """A 1 GB dump takes half a minute on two cores: the bytes are told as the spans are
    read, not all once they are."""
    import functools

    path = generated(tmp_path, "generic", "simple", 40, size=200_000)
    _small_spans(monkeypatch)
    _EVENTS.clear()
    read_file(str(path), jobs=2, work=functools.partial(_noted_here, os.getpid()),
              keep_records=False, on_bytes=lambda n: _EVENTS.append("bytes"))
    works = [i for i, event in enumerate(_EVENTS) if event == "work"]
    assert len(works) > 2  # spans read here
    assert "bytes" in _EVENTS[works[0]:works[-1]]  # told between them


def _dies_in_a_worker(parent: int, records: list[Allocation]) -> int:
    if os.getpid() != parent:
        os._exit(3)  # as the kernel's out-of-memory killer would end it
    return len(records)


def _fails(records: list[Allocation]) -> int:
    raise ZeroDivisionError("a bug in the work")


def test_a_dead_worker_has_the_spans_read_here_and_a_failing_work_stops(
        tmp_path, monkeypatch):
    """A worker killed (out of memory...): the spans are read here one at a time, not the
    file whole, which would take the most memory just when it is short."""
    import functools

    from sc_mlir.model.dump import WorkFailed

    path = generated(tmp_path, "pretty", "simple", 34, size=120_000)
    expected = load(path)
    _small_spans(monkeypatch)
    answers: list[int] = []
    dump = load(path, jobs=2, work=functools.partial(_dies_in_a_worker, os.getpid()),
                keep_records=False, on_answer=answers.append)
    assert len(answers) > 2 and sum(answers) == len(expected.records)  # in spans
    assert dump.files == expected.files
    with pytest.raises(WorkFailed, match="ZeroDivisionError"):
        load(path, jobs=2, work=_fails, keep_records=False)


def _fails_on_a_func_seen_before(parent: int, records: list[Allocation]) -> int:
    """Raises on the span holding the second `sc_kernel_0` (not the file's first span)."""
    if any(r.func == "sc_kernel_0" for r in records) and records[0].line > 40:
        raise ValueError("the second copy")
    return len(records)


def test_a_failing_work_on_a_span_one_process_declines_first_is_not_raised(
        tmp_path, monkeypatch):
    """One process declines a span holding a func an earlier span held (and reads the file
    whole) before it runs the work on it: with workers, the work's failure on that span
    waits for the spans before it, and the file is read whole the same way."""
    import functools

    path = generated(tmp_path, "generic", "xla", 41, size=120_000)
    path.write_text(_same_func_twice(path.read_text()))
    _small_spans(monkeypatch)
    work = functools.partial(_fails_on_a_func_seen_before, os.getpid())
    alone: list[int] = []
    load(path, work=work, keep_records=False, on_answer=alone.append)
    assert len(alone) == 1  # declined, then read whole: the work sees both copies at once
    answers: list[int] = []
    load(path, jobs=2, work=work, keep_records=False, on_answer=answers.append)
    assert answers == alone


def test_a_worker_finds_the_file_as_it_was_or_declines(tmp_path, monkeypatch):
    """A worker reads a span only from the file as this process found it: a file written
    again between the two gives no answer, and is read whole."""
    path = generated(tmp_path, "generic", "xla", 35, size=120_000)
    _small_spans(monkeypatch)
    worker_open: dict[str, SpanReader] = {}
    monkeypatch.setattr(event_spans, "_OPEN", worker_open)  # this process's, as a worker's
    settings = ScanSettings()
    with SpanReader(str(path), settings) as reader:
        assert reader.open()
        spans = [span for span, _ in reader.spans()]
        state = reader.state
        assert event_spans.reader_for(str(path), settings, state) is not None
        os.utime(path, ns=(state[1] + 10**9, state[1] + 10**9))
        assert event_spans.reader_for(str(path), settings, state) is None
        with pytest.raises(event_spans.Unvouched):
            reader.read_span(spans[1])
    for kept in worker_open.values():  # a worker keeps them open for its lifetime
        kept.close_file()


def _records_of(records: list[Allocation]) -> list[Allocation]:
    return records


@pytest.mark.parametrize("start", ["default", "forkserver"])
def test_answers_from_workers_name_the_files_location_table_rather_than_carry_it(
        tmp_path, monkeypatch, start):
    """Each span's records refer to the file's `#loc` table: sent whole with every span's
    answer, a 50 MB dump's 15 MB table went back and forth twenty times. They name it, and
    this process puts back the table it holds; past the load, a record carries it again."""
    import pickle

    _start_workers_by(start, monkeypatch)
    path = generated(tmp_path, "generic", "xla", 36, size=200_000)
    whole = load(path).records
    _small_spans(monkeypatch)
    answers: list[list[Allocation]] = []
    load(path, jobs=2, work=_records_of, keep_records=False, on_answer=answers.append)
    assert len(answers) > 2
    # (Each span's records share a resolver of their own; its aliases are the table.)
    tables = {id(r.locations.raw) for answer in answers for r in answer}
    assert len(tables) == 1  # one table, not a copy per span
    records = [r for answer in answers for r in answer]
    assert [r.loc for r in records] == [r.loc for r in whole]
    assert sum(r.loc.file is not None for r in records) > 10
    again = pickle.loads(pickle.dumps(records[-1]))  # no longer named: carried
    assert again.loc == records[-1].loc
    assert again.locations.raw is not records[-1].locations.raw


_FORKED = """
import os, sys
from sc_mlir.model.dump import load, worker_context
from sc_mlir.read import event_spans, parts

opened = []
open_file = event_spans.SpanReader.open
def counted_open(self):
    opened.append(os.getpid())
    return open_file(self)
event_spans.SpanReader.open = counted_open

import multiprocessing
sent = multiprocessing.get_context("fork").Queue()  # a channel of the work's own

def records_and_pid(records):
    assert opened == [parent], opened  # the file opened by the parent only
    # While the spans are read, every process reads the table's lines from the file.
    assert records[0].locations.raw.reads_from_file
    sent.put(records[-1])
    return os.getpid(), records

parent = os.getpid()

whole = load(sys.argv[1]).records
event_spans.SPAN_BYTES, event_spans.MIN_FILE_BYTES = 5_000, 10_000
assert "jax" not in sys.modules and worker_context().get_start_method() == "fork"
answers = []
load(sys.argv[1], jobs=2, work=records_and_pid, keep_records=False, on_answer=answers.append)
records = [r for _, part in answers for r in part]
assert len(answers) > 2 and {pid for pid, _ in answers} - {os.getpid()}
assert len({id(r.locations.raw) for r in records}) == 1
assert not records[0].locations.raw.reads_from_file  # held here once they are read
assert [r.loc for r in records] == [r.loc for r in whole] and records[-1].loc.file
# Sent on by the work: the table goes by name, and is read again from the file here.
last = {(r.line, r.name): r.loc for r in whole}
got = [sent.get(timeout=30) for _ in answers]
assert [last[(r.line, r.name)] for r in got] == [r.loc for r in got]
print("read by", len({pid for pid, _ in answers} - {os.getpid()}), "forked workers")
"""


def test_forked_workers_find_the_file_open(tmp_path):
    """The default start on Linux, in a process without jax: workers forked while the file
    is open read their spans from the table they were forked with."""
    import multiprocessing
    import subprocess
    import sys

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork start method here")
    path = generated(tmp_path, "pretty", "xla", 37, size=200_000)
    done = subprocess.run([sys.executable, "-c", _FORKED, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "forked workers" in done.stdout


def test_span_claims_give_each_span_once_until_stopped():
    import multiprocessing

    claims = event_spans.SpanClaims(multiprocessing.get_context(), 5)
    assert [claims.from_the_first(), claims.from_the_last(lowest=1)] == [0, 4]
    assert [claims.from_the_last(lowest=1), claims.from_the_first()] == [3, 1]
    assert claims.from_the_last(lowest=3) is None  # 2 is left, below the lowest asked
    assert claims.from_the_first() == 2
    assert claims.from_the_first() is None and claims.from_the_last() is None
    stopped = event_spans.SpanClaims(multiprocessing.get_context(), 3)
    stopped.stop()
    assert stopped.from_the_first() is None and stopped.from_the_last() is None


def test_a_table_read_from_its_file_says_what_it_said_in_memory(tmp_path):
    """A worker reads its `#loc` lines from the file (the table in memory would count again
    in its RSS): every alias the same; a file that can no longer be read says so."""
    from sc_mlir.read.loc_table import TableGone

    path = generated(tmp_path, "pretty", "xla", 38, size=60_000)
    with SpanReader(str(path), ScanSettings()) as reader:
        assert reader.open()
        in_memory = dict(reader.table.items())
        names = list(reader.table)
        assert len(names) > 100 and all(v.startswith("loc(") for v in in_memory.values())
        fresh = SpanReader(str(path), ScanSettings())
        with fresh:
            assert fresh.open()
            fresh.table.read_from_file(fresh._read_tail)
            assert fresh.table.reads_from_file and not fresh.table._data
            assert {name: fresh.table[name] for name in reversed(names)} == in_memory
            path.write_bytes(path.read_bytes()[: fresh.close_start + 10])  # cut short
            with pytest.raises(TableGone):
                fresh.table[names[-1]]


def _touches_the_file_in_a_worker(parent: int, records: list[Allocation]) -> int:
    """A compile writing the dump again (same size) while a worker reads it."""
    if os.getpid() != parent and records:
        path = records[0].file
        stat = os.stat(path)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    return len(records)


def test_a_file_written_again_while_a_worker_reads_it_is_read_whole(tmp_path, monkeypatch):
    """A worker's answer holds `#loc` lines read from the file as it went: the file must be
    the one opened when the answer is made, or the file is read whole."""
    import functools

    path = generated(tmp_path, "generic", "xla", 39, size=120_000)
    expected = load(path)
    _small_spans(monkeypatch)
    answers: list[int] = []
    load(path, jobs=2, work=functools.partial(_touches_the_file_in_a_worker, os.getpid()),
         keep_records=False, on_answer=answers.append)
    assert answers == [len(expected.records)]  # one answer: read whole, here


def _copied_and_pickled(records: list[Allocation]) -> bytes:
    """A work that copies its records and keeps them as a pickle."""
    import copy
    import pickle

    return pickle.dumps(copy.deepcopy(records))


@pytest.mark.parametrize("where", ["forkserver", "directory"])
def test_records_copied_or_pickled_in_a_worker_keep_their_table(tmp_path, monkeypatch,
                                                                where):
    """A worker that opened the file itself (started by a fork server, or by a directory's
    pool before the file was opened) sends its table back by name; a copy or a pickle its
    work makes carries the table, and loads anywhere, after the load too."""
    import pickle
    import shutil

    path = generated(tmp_path, "generic", "xla", 42, size=120_000)
    whole = {(r.line, r.name): r.loc for r in load(path).records}
    if where == "forkserver":
        _start_workers_by("forkserver", monkeypatch)
        source = path
    else:
        source = tmp_path / "dump"
        source.mkdir()
        shutil.move(path, source / path.name)
        generated(source, "pretty", "simple", 43, size=3_000)
        monkeypatch.setattr(parts, "MIN_PART_BYTES", 20_000)  # the large file: in spans
    _small_spans(monkeypatch)
    answers: list[bytes] = []
    load(source, jobs=2, work=_copied_and_pickled, keep_records=False,
         on_answer=answers.append)
    records = [r for answer in answers for r in pickle.loads(answer)]
    mine = [r for r in records if r.file.endswith("_42.mlir")]
    assert len(answers) > 2 and len(mine) == len(whole)
    assert {(r.line, r.name): r.loc for r in mine} == whole


_REWRITTEN: list[str] = []


def _rewrites_at_the_last_func(last_func: str, other: str, records: list[Allocation]) -> int:
    """A compile writing the dump again (other content) while its last func is worked on."""
    if any(r.func == last_func for r in records) and other not in _REWRITTEN:
        _REWRITTEN.append(other)
        Path(records[0].file).write_bytes(Path(other).read_bytes())
    return len(records)


def test_a_file_rewritten_while_its_last_span_is_worked_on_is_read_again(tmp_path,
                                                                         monkeypatch):
    """One process checks the file after each span's work, as the workers do: a file
    written again during the last one is read whole as it is then, not answered as it
    was."""
    import functools

    path = generated(tmp_path, "generic", "xla", 44, size=120_000)
    other = generated(tmp_path, "generic", "xla", 45, size=150_000)
    last_func = [r.func for r in load(path).records][-1]
    expected = load(other)
    _small_spans(monkeypatch)
    _REWRITTEN.clear()
    answers: list[int] = []
    dump = load(path, work=functools.partial(_rewrites_at_the_last_func, last_func,
                                             str(other)),
                keep_records=False, on_answer=answers.append)
    assert _REWRITTEN and answers == [len(expected.records)]  # read whole, as it is now
    assert dump.files[0].lines == expected.files[0].lines


def _holds_the_lock(claims: event_spans.SpanClaims, holding) -> None:
    claims._ends.get_lock().acquire()
    holding.set()
    import time

    time.sleep(60)


def test_span_claims_give_up_on_a_lock_a_dead_worker_holds():
    """A worker killed while it holds the counters' lock never lets it go: the others give
    up waiting (the spans left unread have the file read again)."""
    import multiprocessing
    import time

    start = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else None
    context = multiprocessing.get_context(start)
    claims = event_spans.SpanClaims(context, 4)
    claims.LOCK_WAIT = 0.2
    holding = context.Event()
    holder = context.Process(target=_holds_the_lock, args=(claims, holding))
    holder.start()
    try:
        assert holding.wait(30)
        holder.kill()  # as the out-of-memory killer would
        holder.join(30)
        import threading

        said: list[object] = []

        def ask() -> None:
            said.extend([claims.from_the_last(), claims.from_the_first()])
            claims.stop()
            claims.read(10)
            said.append(claims.bytes_read())

        began = time.monotonic()
        asking = threading.Thread(target=ask, daemon=True)  # (a hang fails, not blocks)
        asking.start()
        asking.join(30)
        assert not asking.is_alive() and said == [None, None, 0]
        assert time.monotonic() - began < 5 * 0.2 + 2
    finally:
        holder.kill()


def _noted(log: str, records: list[Allocation]) -> int:
    with open(log, "a") as noted:
        noted.write("x")
    return len(records)


def _noted_and_failing(log: str, records: list[Allocation]) -> int:
    import time

    _noted(log, records)
    # A file read and failed in a few ms: the tests that count how many were begun before
    # the load stopped would count how fast this process is scheduled on a busy machine
    # (33 of 64 were once begun), not whether it stops.
    time.sleep(0.02)
    raise ValueError("a bug in the work")


def _directory_of_small_files(tmp_path: Path, monkeypatch) -> Path:
    """64 small files, each a task of its own."""
    import sc_mlir.model.dump as dump_module

    monkeypatch.setattr(dump_module, "TASKS_PER_WORKER", 32)
    source = tmp_path / "dump"
    source.mkdir()
    for seed in range(64):
        generated(source, "pretty", "simple", 100 + seed, size=3_000)
    return source


def test_a_failing_work_in_a_directory_leaves_the_files_not_begun(tmp_path, monkeypatch):
    """The work fails on the first file: the load stops then, not once every queued file
    of the directory has been read."""
    import functools

    from sc_mlir.model.dump import WorkFailed

    source = _directory_of_small_files(tmp_path, monkeypatch)
    log = tmp_path / "calls.log"
    with pytest.raises(WorkFailed):
        load(source, jobs=2, work=functools.partial(_noted_and_failing, str(log)),
             keep_records=False)
    assert len(log.read_text()) < 64 // 2  # not every file


def test_a_worker_dead_early_has_this_process_stop_reading_spans_soon(tmp_path, monkeypatch):
    """A worker that dies on its first span: this process notices between its own spans
    and reads the file again at once, rather than first reading every span left."""
    import functools
    import time

    import sc_mlir.model.dump as dump_module

    path = generated(tmp_path, "generic", "simple", 46, size=2_000_000)
    _small_spans(monkeypatch)
    here: list[int] = []
    sharing: list[bool] = []  # while the spans are shared out (not read again after)
    span_done, share_out = dump_module._span_done, dump_module._share_out_spans
    parent = os.getpid()

    def slow_here(*args, **kwargs):
        if os.getpid() == parent and sharing:
            here.append(1)
            time.sleep(0.05)
        return span_done(*args, **kwargs)

    def shared_out(*args, **kwargs):
        sharing.append(True)
        try:
            return share_out(*args, **kwargs)
        finally:
            sharing.clear()

    monkeypatch.setattr(dump_module, "_span_done", slow_here)
    monkeypatch.setattr(dump_module, "_share_out_spans", shared_out)
    with SpanReader(str(path), ScanSettings()) as reader:
        assert reader.open()
        count = sum(1 for _ in reader.spans())
    assert count > 30
    answers: list[int] = []
    load(path, jobs=2, work=functools.partial(_dies_in_a_worker, parent), keep_records=False,
         on_answer=answers.append)
    assert sum(answers) == len(load(path).records)
    assert len(here) < count // 2  # not every span but the worker's first


def test_a_hook_that_raises_leaves_the_files_not_begun(tmp_path, monkeypatch):
    """`on_answer` raises on the first answer: the workers do not read the directory on."""
    import functools


    source = _directory_of_small_files(tmp_path, monkeypatch)
    log = tmp_path / "calls.log"

    def refuses(answer: object) -> None:
        raise KeyError("a bug in the hook")

    with pytest.raises(KeyError):
        load(source, jobs=2, work=functools.partial(_noted, str(log)), keep_records=False,
             on_answer=refuses)
    assert len(log.read_text()) < 64 // 2  # not every file


def test_a_work_failing_on_every_span_stops_soon(tmp_path, monkeypatch):
    """The first span fails: the spans after it change nothing, and are not read."""
    import functools

    from sc_mlir.model.dump import WorkFailed

    path = generated(tmp_path, "generic", "simple", 47, size=2_000_000)
    _small_spans(monkeypatch)
    log = tmp_path / "calls.log"
    with pytest.raises(WorkFailed, match="a bug in the work"):
        load(path, jobs=2, work=functools.partial(_noted_and_failing, str(log)),
             keep_records=False)
    assert len(log.read_text()) < 8  # of 38 spans


def _renumbered(text: str, times: int, first: int = 0) -> str:
    """Every `#locN` named `#loc(N * times + first)`: the table stays in order."""
    return re.sub(r"#loc(\d+)\b", lambda m: f"#loc{int(m[1]) * times + first}", text)


def _bare_first(text: str) -> str:
    """The table numbered from `#loc`, then `#loc0` on (`#loc` is number -1)."""
    text = _renumbered(text, 1, -2)  # the generator numbers from #loc1
    return re.sub(r"#loc-1\b", "#loc", text)


def _as_mlir_prints(text: str) -> str:
    """The table numbered `#loc`, `#loc1`, `#loc2`... (no `#loc0`), as MLIR prints it."""
    text = _renumbered(text, 1, -1)  # the generator numbers from #loc1
    return re.sub(r"#loc0\b", "#loc", text)


def _a_gap_in_the_middle(text: str) -> str:
    """The table's names past its middle one up: first and last as they were, a number
    left out (its lines are one fewer than its first to last number)."""
    middle = len(re.findall(r"^#loc\d+ = ", text, re.MULTILINE)) // 2
    return re.sub(r"#loc(\d+)\b",
                  lambda m: f"#loc{int(m[1]) + (int(m[1]) > middle)}", text)


def _blank_tail(text: str) -> str:
    return text + "\n  \n\n"


def _out_of_order(text: str) -> str:
    """The table's first two lines swapped: the careful check declines it."""
    at = text.index("\n#loc", text.rindex("}")) + 1
    first_end = text.index("\n", at) + 1
    second_end = text.index("\n", first_end) + 1
    return text[:at] + text[first_end:second_end] + text[at:first_end] + text[second_end:]


def _table_guessed_and_checked(path: Path) -> tuple[bool | None, dict[str, str] | None]:
    """What `check_table` says of the table a reader guessed, and the guessed table's
    names and values (None for a file not read in spans)."""
    with SpanReader(str(path), ScanSettings(), guess_table=True) as reader:
        if not reader.open():
            return None, None
        try:
            guessed = dict(reader.table.items())
        except (KeyError, IndexError):  # a name the guess numbers, no line defines
            guessed = None
        try:
            return reader.check_table(), guessed
        except Exception:
            return None, guessed


@pytest.mark.parametrize(("change", "right"), [
    (lambda text: text, True), (_bare_first, True), (_as_mlir_prints, True),
    (lambda text: _renumbered(_as_mlir_prints(text), 2), False), (_blank_tail, True),
    (_a_gap_in_the_middle, False),
    (lambda text: _renumbered(text, 3), False), (lambda text: _renumbered(text, 1, 5), True),
    (_out_of_order, None)])
def test_a_guessed_table_is_the_checked_one_or_is_said_not_to_be(tmp_path, change, right):
    """`open(guess_table=True)` takes the table for one numbered line by line; the check
    says True only when it is the table `open` finds when it checks it (every name read
    the same), False for another table, and raises for one it declines."""
    path = generated(tmp_path, "generic", "xla", 44, size=60_000)
    path.write_text(change(path.read_text()))
    checked, guessed = _table_guessed_and_checked(path)
    assert checked is right
    if change is _as_mlir_prints:  # numbered -1, 1, 2...: an array of numbers, not a range
        with SpanReader(str(path), ScanSettings()) as reader:
            assert reader.open() and not isinstance(reader.table._numbers, range)
    with SpanReader(str(path), ScanSettings()) as reader:
        opened = reader.open()
        assert opened is (right is not None)
        if right is not None:
            assert len(reader.table) > 100
            assert (dict(reader.table.items()) == guessed) is right


_GUESSED_WRONG = """
import os, re, sys
from sc_mlir.model.dump import load, worker_context
from sc_mlir.read import event_spans
from tests_event_spans import _pid_and_analysis

said = []
check = event_spans.SpanReader.check_table
def noted_check(self):
    guessed = self._unchecked is not None
    said.append((guessed, check(self)))
    return said[-1][1]
event_spans.SpanReader.check_table = noted_check

whole = load(sys.argv[1]).records
event_spans.SPAN_BYTES, event_spans.MIN_FILE_BYTES = 5_000, 10_000
assert "jax" not in sys.modules and worker_context().get_start_method() == "fork"
answers = []
load(sys.argv[1], jobs=2, work=_pid_and_analysis, keep_records=False, on_answer=answers.append)
from tests_event_spans import _analysis_of
assert [s for _, a in answers for s in a] == _analysis_of(whole), "not the file's analysis"
print(said, len({pid for pid, _ in answers} - {os.getpid()}), "workers answered")
"""


@pytest.mark.parametrize("times", [1, 3])
def test_workers_forked_with_a_guessed_table_answer_only_when_it_is_the_files(tmp_path,
                                                                              times):
    """Forked before the `#loc` table is checked, the workers read with the table the
    reader guessed: their answers stand when the check finds it is the file's, and are
    dropped when it is not (a table numbered 0, 3, 6...: read with the guess, its names
    would find other lines), the spans read again with the table checked first."""
    import multiprocessing
    import shutil
    import subprocess
    import sys

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork start method here")
    path = generated(tmp_path, "pretty", "xla", 45, size=120_000)
    path.write_text(_renumbered(path.read_text(), times))
    shutil.copy(__file__, tmp_path / "tests_event_spans.py")
    done = subprocess.run([sys.executable, "-c", _GUESSED_WRONG, str(path)],
                          capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              [str(tmp_path), str(Path(__file__).parent), *sys.path])})
    assert done.returncode == 0, done.stderr
    if times == 1:
        assert done.stdout.startswith("[(True, True)]") and " 1 workers" in done.stdout
    else:  # the check said no: the spans read again, the table checked before the fork
        assert done.stdout.startswith("[(True, False), (False, True)] 1 workers")


@pytest.mark.parametrize("times", [1, 3])
def test_bytes_told_for_spans_read_again_after_a_wrong_guess_are_the_files(tmp_path,
                                                                          monkeypatch, times):
    """A table guessed wrong has what was told taken back, and the spans read again."""
    path = generated(tmp_path, "generic", "xla", 46, size=120_000)
    path.write_text(_renumbered(path.read_text(), times))
    whole = [s for a in [_analysis_of(load(path).records)] for s in a]
    _small_spans(monkeypatch)
    told: list[int] = []
    result = read_file(str(path), jobs=2, work=_analysis_of, keep_records=False,
                       on_bytes=told.append)
    assert len(result.worked) > 2 and [s for a in result.worked for s in a] == whole
    assert sum(told) == path.stat().st_size
    assert (any(n < 0 for n in told)) is (times == 3)  # taken back
