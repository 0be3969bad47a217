"""The analysis as JSON: the document joined from spaces written apart."""

from __future__ import annotations

import pytest
from conftest import FIXTURES


@pytest.mark.parametrize("path", ["dump", 'a,"spaces":[]\\', "ünï/cödé"])
def test_document_from_written_spaces_is_the_document(path):
    """The command writes each space where its file was read, then joins the texts."""
    from sc_mlir.analysis import analyze
    from sc_mlir.formats.analysis_json import document, document_text, space_object
    from sc_mlir.formats.records import to_json
    from sc_mlir.model.dump import load

    analysis = analyze(load(FIXTURES / "passes"))
    objects = [space_object(r) for r in analysis.reports]
    assert len(objects) > 2 and analysis.diagnostics
    expected = to_json(document(path, objects, analysis.diagnostics))
    assert document_text(path, [to_json(o) for o in objects], analysis.diagnostics) == expected
    assert document_text(path, [], []) == to_json(document(path, [], []))
