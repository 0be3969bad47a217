"""The command analyses each file as it is read: that must give what `analyze` gives."""

from __future__ import annotations

import pytest
from conftest import REPO

from sc_mlir.analysis import FileByFileAnalysis, analyze
from sc_mlir.formats.analysis_json import analysis_object, space_object
from sc_mlir.formats.records import to_json
from sc_mlir.model.dump import load


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
