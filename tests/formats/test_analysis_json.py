"""The analysis as JSON: the document joined from spaces written apart."""

from __future__ import annotations

import io
import json

import pytest
from conftest import FIXTURES


@pytest.mark.parametrize("path", ["dump", 'a,"spaces":[]\\', "ünï/cödé"])
def test_document_from_written_spaces_is_the_document(path):
    """The command writes each space where its file was read, then joins the texts."""
    from sc_mlir.analysis import analyze
    from sc_mlir.formats.analysis_json import document, space_object, write_document
    from sc_mlir.formats.records import json_text, to_json
    from sc_mlir.model.dump import load

    analysis = analyze(load(FIXTURES / "passes"))
    objects = [space_object(r) for r in analysis.reports]
    assert len(objects) > 2 and analysis.diagnostics
    expected = to_json(document(path, objects, analysis.diagnostics))
    for texts, diagnostics in (([json_text(o) for o in objects], analysis.diagnostics),
                               ([], []), ([json_text(objects[0])], [])):
        out = io.StringIO()
        write_document(out, path, iter(texts), diagnostics)
        assert out.getvalue() == to_json(document(path, [json.loads(t) for t in texts],
                                                  diagnostics))
    out = io.StringIO()
    write_document(out, path, [json_text(o) for o in objects], analysis.diagnostics)
    assert out.getvalue() == expected
