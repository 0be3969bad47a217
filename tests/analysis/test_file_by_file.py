"""The command analyses each file as it is read: that must give what `analyze` gives."""

from __future__ import annotations

import os
from itertools import pairwise

import pytest
from conftest import REPO

from sc_mlir.analysis import (
    FileByFileAnalysis,
    ReportOutline,
    analyze,
    any_crossing,
    order_reports,
    select_reports,
)
from sc_mlir.formats.analysis_json import analysis_object, space_object
from sc_mlir.formats.records import to_json
from sc_mlir.model.dump import WorkFailed, load


@pytest.mark.parametrize("name", ["sample", "passes", "pallas", "golden"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_file_by_file_gives_the_whole_dump_analysis(name, jobs):
    file_by_file = FileByFileAnalysis({"201": 20000}, chip="v5e")
    seen: list[list[str]] = []

    def on_file(records):
        seen.append([r.file for r in records])
        file_by_file.add(records)

    dump = load(REPO / "fixtures" / name, jobs=jobs, on_file=on_file)
    # The callback saw every record, file by file, in the dump's order.
    assert [f for files in seen for f in files] == [r.file for r in dump.records]
    assert len(seen) == len(dump.files)
    whole = analyze(dump, {"201": 20000}, chip="v5e")
    assert len(whole.reports) > 1
    by_file = file_by_file.finish(dump)
    assert [space_object(r) for r in by_file.reports] == [space_object(r) for r in whole.reports]
    assert to_json(analysis_object(by_file, name, True)) == to_json(
        analysis_object(whole, name, True))


def test_spaces_made_ahead_are_the_ones_written():
    dump = load(REPO / "fixtures" / "sample")
    analysis = analyze(dump)
    made = {id(r): {"made": True} for r in analysis.reports[:1]}
    spaces = analysis_object(analysis, "sample", made=made)["spaces"]
    assert spaces[0] == {"made": True}
    assert spaces[1:] == [space_object(r) for r in analysis.reports[1:]]


def _where_and_how_many(records):
    """Module level: the work goes to the worker processes by pickle."""
    return os.getpid(), len(records)


@pytest.mark.parametrize("jobs", [1, 2])
def test_work_is_done_where_each_file_is_read(jobs):
    answers: list[tuple[int, int]] = []
    given: list[list] = []
    path = REPO / "fixtures" / "passes"
    dump = load(path, jobs=jobs, work=_where_and_how_many, keep_records=False,
                on_file=given.append, on_answer=answers.append)
    whole = load(path)
    assert dump.records == [] and given == [[]] * len(whole.files)
    assert dump.files == whole.files and dump.diagnostics == whole.diagnostics
    # One answer per file, in the dump's order, each counting that file's records.
    assert [n for _, n in answers] == [
        sum(1 for r in whole.records if r.file == f.path) for f in whole.files]
    pids = {pid for pid, _ in answers}
    if jobs == 1:
        assert pids == {os.getpid()}
    else:
        assert os.getpid() not in pids


def _golden_four_times(directory):
    """Sixteen small files, in four runs of the golden fixtures."""
    for copy in range(4):
        for source in sorted((REPO / "fixtures" / "golden").glob("*.mlir")):
            (directory / f"{copy}_{source.name}").write_bytes(source.read_bytes())
    return directory


@pytest.mark.parametrize("tasks_per_worker", [1, 2])
def test_small_files_go_to_the_workers_in_groups(monkeypatch, tmp_path, tasks_per_worker):
    import sc_mlir.model.dump as dump_module

    monkeypatch.setattr(dump_module, "TASKS_PER_WORKER", tasks_per_worker)
    path = _golden_four_times(tmp_path)
    answers: list[tuple[int, int]] = []
    load(path, jobs=2, work=_where_and_how_many, keep_records=False,
         on_answer=answers.append)
    whole = load(path)
    assert len(whole.files) > 2 * 2 * tasks_per_worker
    assert [n for _, n in answers] == [
        sum(1 for r in whole.records if r.file == f.path) for f in whole.files]
    # A group is one task, read by one worker: the pids change at most between groups.
    changes = sum(1 for a, b in pairwise(answers) if a[0] != b[0])
    assert changes < 2 * tasks_per_worker


def _pid(records) -> int:
    return os.getpid()


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the default jobs are one process here")
def test_a_small_dump_is_read_here_with_the_default_jobs(monkeypatch, tmp_path):
    import sc_mlir.model.dump as dump_module

    path = _golden_four_times(tmp_path)  # 16 files: 0.2 MB counted
    pids: dict[str, list[int]] = {}
    for label, jobs, small in (("default", None, None), ("asked", 2, None),
                               ("default, larger", None, 0)):
        if small is not None:
            monkeypatch.setattr(dump_module, "SMALL_READ_BYTES", small)
        answers: list[int] = []
        load(path, jobs=jobs, work=_pid, keep_records=False, on_answer=answers.append)
        pids[label] = answers
    assert set(pids["default"]) == {os.getpid()}
    # Asked for, or with more to read, the workers read.
    assert os.getpid() not in pids["asked"] and os.getpid() not in pids["default, larger"]


def _dies_in_a_worker_on_nested(parent: int, records):
    if os.getpid() != parent and any("nested" in r.file for r in records):
        os._exit(3)  # as the kernel's out-of-memory killer would end it
    return os.getpid(), len(records)


def test_files_of_a_dead_workers_group_are_read_here(monkeypatch, tmp_path):
    import functools

    import sc_mlir.model.dump as dump_module

    monkeypatch.setattr(dump_module, "TASKS_PER_WORKER", 1)  # two groups: many files each
    path = _golden_four_times(tmp_path)
    answers: list[tuple[int, int]] = []
    dump = load(path, jobs=2, work=functools.partial(_dies_in_a_worker_on_nested, os.getpid()),
                keep_records=False, on_answer=answers.append)
    whole = load(path)
    assert dump.files == whole.files and dump.diagnostics == whole.diagnostics
    assert [n for _, n in answers] == [
        sum(1 for r in whole.records if r.file == f.path) for f in whole.files]
    nested = [i for i, f in enumerate(whole.files) if "nested" in f.path]
    assert nested and all(answers[i][0] == os.getpid() for i in nested)


def _fails_on_the_third_nested(records):
    if any(r.file.endswith("2_nested_scopes.mlir") for r in records):
        raise ZeroDivisionError("a bug in the work")
    return len(records)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_work_stops_the_load_after_the_answers_before_it(monkeypatch, tmp_path,
                                                                   jobs):
    import sc_mlir.model.dump as dump_module

    monkeypatch.setattr(dump_module, "TASKS_PER_WORKER", 1)  # the failing file's group
    path = _golden_four_times(tmp_path)  # holds files before it
    names = sorted(p.name for p in path.iterdir())
    answers: list[int] = []
    with pytest.raises(WorkFailed, match=r"2_nested_scopes\.mlir: ZeroDivisionError"):
        load(path, jobs=jobs, work=_fails_on_the_third_nested, on_answer=answers.append)
    assert len(answers) == names.index("2_nested_scopes.mlir") == 10


def test_records_are_kept_unless_asked():
    kept: list[int] = []
    counted: list[int] = []
    dump = load(REPO / "fixtures" / "passes", jobs=2, work=_where_and_how_many,
                on_file=lambda records: kept.append(len(records)),
                on_answer=lambda answer: counted.append(answer[1]))
    assert len(dump.records) > 0 and sum(kept) == len(dump.records)
    assert kept == counted
    with pytest.raises(ValueError, match="needs work"):
        load(REPO / "fixtures" / "passes", keep_records=False)
    with pytest.raises(ValueError, match="needs work"):
        load(REPO / "fixtures" / "passes", on_answer=print)


def _fails_on_nested(records):
    if any("nested" in r.file for r in records):
        raise ZeroDivisionError("a bug in the work")
    return len(records)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_work_stops_the_load_naming_the_file(jobs):
    with pytest.raises(WorkFailed, match=r"nested_scopes\.mlir: ZeroDivisionError"):
        load(REPO / "fixtures" / "golden", jobs=jobs, work=_fails_on_nested,
             on_answer=lambda answer: None)


def test_a_work_that_cannot_pickle_is_refused_before_reading():
    with pytest.raises(ValueError, match="must pickle"):
        load(REPO / "fixtures" / "golden", jobs=2, work=lambda records: 1,
             on_answer=lambda answer: None)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_gone_before_it_is_read_gets_no_answer(monkeypatch, tmp_path, jobs):
    import sc_mlir.model.dump as dump_module

    found = dump_module.discover(REPO / "fixtures" / "golden")
    gone = str(tmp_path / "gone.mlir")
    monkeypatch.setattr(dump_module, "discover", lambda path, **_: ([gone, *found[0]], found[1]))
    answers = []
    dump = load(REPO / "fixtures" / "golden", jobs=jobs, work=_where_and_how_many,
                keep_records=False, on_answer=answers.append)
    assert answers[0] is None and all(a is not None for a in answers[1:])
    assert any(d.file == gone and "cannot read" in d.message for d in dump.diagnostics)


def test_outlines_are_ordered_selected_and_judged_as_their_reports():
    analysis = analyze(load(REPO / "fixtures" / "pallas"), {"201": 20000})
    reports = list(reversed(analysis.reports))  # out of order
    outlines = [ReportOutline.of(r) for r in reports]
    assert len({o.verdict for o in outlines}) > 1
    for spaces, funcs in [((), ()), (("201",), ()), (("vmem", "smem"), ("*",)), ((), ("x*",))]:
        chosen = select_reports(order_reports(reports), spaces, funcs)
        assert [ReportOutline.of(r) for r in chosen] == select_reports(
            order_reports(outlines), spaces, funcs)
        assert any_crossing(chosen) == any_crossing(
            select_reports(outlines, spaces, funcs))
    assert order_reports(reports) == analysis.reports


@pytest.mark.parametrize("name", ["sample", "passes", "pallas", "golden"])
def test_records_out_of_program_order_are_analysed_as_in_order(name):
    """A file's records come in program order, and its groups are analysed as they are;
    records in another order are sorted first (stably: records at one program point, such
    as a func's scratch operands, keep their order): the same reports either way."""
    from random import Random

    from sc_mlir.analysis import reports_of_file
    from sc_mlir.model.bounds import Bounds

    bounds = Bounds.default().with_bounds({"201": 20000}, "test")
    records = load(REPO / "fixtures" / name).records
    assert all(a.order <= b.order for a, b in pairwise(records) if a.file == b.file)
    # Shuffled, and backwards, program point by program point.
    rank = {(r.file, r.order): k for k, r in enumerate(records)}
    Random(7).shuffle(keys := list(rank))
    place = dict(zip(keys, range(len(keys)), strict=True))
    shuffled = sorted(records, key=lambda r: place[r.file, r.order])
    backwards = sorted(records, key=lambda r: -rank[r.file, r.order])
    assert [r.order for r in shuffled] != [r.order for r in records]

    def spaces(some):
        return sorted(to_json(space_object(r)) for r in reports_of_file(bounds, some))

    assert spaces(shuffled) == spaces(records)
    assert spaces(backwards) == spaces(records)
