"""Real MLIR from public compilers: counts against MLIR's own parser, and no crash anywhere."""

from __future__ import annotations

import csv

import pytest
from conftest import CORPUS
from reference_reader import accounted, alloca_ops_in, stack_allocas

from sc_mlir.model.dump import load

MANIFEST = CORPUS / "upstream" / "MANIFEST.tsv"


def manifest_rows() -> list[dict[str, str]]:
    if not MANIFEST.is_file():
        return []
    with open(MANIFEST, newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


ROWS = manifest_rows()
ORACLE = [r for r in ROWS if r["chunks_parsed_mlir"] == r["chunks"]]


STRUCTURE_NOTES = ("never closed", "closes nothing", "still open", "where no op starts")


@pytest.mark.parametrize("row", ORACLE, ids=[r["local_file"].split("/")[-1][:60] for r in ORACLE])
def test_alloca_count_matches_mlir_where_mlir_parsed_every_chunk(upstream, row):
    dump = load(upstream / row["local_file"])
    assert len(stack_allocas(dump.records)) == int(row["n_alloca_mlir"]), [str(d) for d in dump.diagnostics]
    # Text MLIR reads cleanly must read cleanly here too: no bracket or region trouble.
    assert not [str(d) for d in dump.diagnostics if any(n in d.message for n in STRUCTURE_NOTES)]


@pytest.mark.parametrize("row", ROWS, ids=[r["local_file"].split("/")[-1][:60] for r in ROWS])
def test_no_file_crashes_and_every_op_is_accounted_for(upstream, row):
    path = upstream / row["local_file"]
    dump = load(path)
    # Every alloca op outside comments and strings is in the table or in a diagnostic.
    text = path.read_text(encoding="utf-8", errors="replace")
    assert len(stack_allocas(dump.records)) + accounted(dump.diagnostics) == alloca_ops_in(text)
    for diag in dump.diagnostics:
        assert diag.file.endswith(row["local_file"].split("/")[-1])
        assert diag.line >= 0 and diag.message


def test_the_oracle_set_is_not_empty(upstream):
    assert len(ORACLE) >= 20
