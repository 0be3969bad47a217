"""Every result a notebook user reaches from the public API draws itself, however it was
reached (a method that returns a narrower or edited result included), while the data types
below it import no renderer (tests/test_architecture.py holds the contracts)."""

from __future__ import annotations

import dataclasses

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

import sc_mlir
from sc_mlir.analysis import Analysis as AnalysisData
from sc_mlir.analysis import SpaceReport as SpaceReportData
from sc_mlir.compare.diff import DiffResult as DiffData
from sc_mlir.compare.passes import PassTimelines as TimelinesData
from sc_mlir.model.dump import Dump as DumpData

FUNC = "sc_embedding_lookup_fwd"


def test_the_data_types_carry_no_drawing_methods() -> None:
    # Without the notebook layer these methods sat on the data types themselves.
    for data_type, methods in [
        (AnalysisData, ("plot_stack", "to_html", "what_if", "_repr_html_")),
        (SpaceReportData, ("_repr_html_",)),
        (DiffData, ("plot", "to_html", "_repr_html_")),
        (TimelinesData, ("plot_passes", "to_html", "_repr_html_")),
        (DumpData, ("analyze",)),
    ]:
        assert not [m for m in methods if hasattr(data_type, m)], data_type


def test_a_loaded_dump_and_everything_reached_from_it_draws_itself() -> None:
    dump = sc_mlir.load(sc_mlir.example_path())
    assert isinstance(dump, DumpData)
    analysis = dump.analyze()
    assert isinstance(analysis, AnalysisData)
    # Every report, however reached, shows as HTML naming its func.
    narrowed = analysis.select(spaces=["201"], funcs=[FUNC])
    reached = [*analysis.reports, analysis.report(FUNC, 201), *narrowed.reports]
    assert len(narrowed.reports) == 1
    for report in reached:
        assert report.func in report._repr_html_()
    assert "<table" in narrowed._repr_html_()
    assert "<table" in analysis.groups(FUNC, 201)._repr_html_()
    figure = narrowed.plot_stack(FUNC, 201)
    assert figure.axes
    plt.close(figure)
    # The report keeps every field value of the data it was made from.
    plain = sc_mlir.analysis.analyze(DumpData(dump.path, dump.records, dump.files,
                                              dump.diagnostics, dump.settings))
    # (Fields of plain values: allocas compare by identity, and these are two analyses.)
    for field in dataclasses.fields(SpaceReportData):
        value = getattr(plain.reports[0], field.name)
        if value is None or isinstance(value, (int, float, str)):
            assert value == getattr(analysis.reports[0], field.name), field.name


def test_diffs_and_timelines_draw_themselves_after_select() -> None:
    change = sc_mlir.diff(*sc_mlir.example_diff_paths())
    narrowed = change.select(["201"])
    assert narrowed.spaces and all("201" in c.space_label for c in narrowed.spaces)
    for result in (change, narrowed):
        assert "<table" in result._repr_html_()
        assert "<html" in result.to_html().lower()
    edited = sc_mlir.load(sc_mlir.example_path()).analyze().what_if(resize={"%232": 11720})
    assert "resized" in edited.select(["201"])._repr_html_()

    timelines = sc_mlir.passes(sc_mlir.example_passes_path())
    narrowed_timelines = timelines.select(spaces=["201"])
    assert narrowed_timelines.timelines
    assert "<table" in narrowed_timelines._repr_html_()
    timeline = narrowed_timelines.timeline("gather_rows", 201)
    figure = timeline.plot()
    assert figure.axes
    plt.close(figure)


def test_load_documents_only_its_own_parameters():
    """`sc_mlir.load` takes path, settings, jobs and progress: its help names no hook of
    the model's `load` (on_file, work, on_answer, keep_records), which it would reject."""
    import inspect

    doc = sc_mlir.load.__doc__ or ""
    assert "`jobs`" in doc and "`progress(" in doc and "NoMLIRFound" in doc
    for hook in ("on_file", "work", "on_answer", "keep_records"):
        assert hook not in inspect.signature(sc_mlir.load).parameters
        assert f"`{hook}" not in doc
