"""Records go from worker processes to the parent by pickle: every field comes back, each
location node as itself (Allocation and the location nodes pickle as constructor
arguments, so a field left out or out of order would show here)."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest

from sc_mlir.model.dump import read_file
from sc_mlir.syntax.locations import (
    AliasLoc,
    CallSiteLoc,
    FileLoc,
    FusedLoc,
    NameLoc,
    UnknownLoc,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
MLIR_FILES = sorted(p for p in FIXTURES.rglob("*.mlir") if p.is_file())


def fields_of(record: object) -> dict[str, object]:
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}  # type: ignore[arg-type]


@pytest.mark.parametrize("path", MLIR_FILES[:40], ids=lambda p: str(p.relative_to(FIXTURES)))
def test_records_come_back_from_a_worker_whole(path: Path) -> None:
    result = read_file(str(path))
    back = pickle.loads(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    assert len(back.records) == len(result.records)
    for sent, received in zip(result.records, back.records, strict=True):
        assert type(received) is type(sent)
        assert fields_of(received).keys() == fields_of(sent).keys()
        for name, value in fields_of(sent).items():
            if name == "locations":  # a table: compared by what it resolves to
                continue
            assert getattr(received, name) == value, name
        assert received.loc == sent.loc


@pytest.mark.parametrize("node", [
    UnknownLoc(), FileLoc("k.py", 3, None), FileLoc("k.py", 3, 4, 5, 6), AliasLoc("#loc7"),
    NameLoc("gather", None), NameLoc("gather", FileLoc("k.py", 1, 2)),
    CallSiteLoc(AliasLoc("#loc1"), NameLoc("f", AliasLoc("#loc2"))),
    FusedLoc(None, (AliasLoc("#loc1"), FileLoc("a.py", 1, 1))),
    FusedLoc('"meta"', ()),
])
def test_location_nodes_pickle_as_themselves(node: object) -> None:
    back = pickle.loads(pickle.dumps(node, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == node and type(back) is type(node) and hash(back) == hash(node)


def test_placed_allocas_come_back_from_a_worker_whole() -> None:
    """Reports are made where a file is read; PlacedAlloca pickles as constructor arguments."""
    from sc_mlir.analysis import analyze
    from sc_mlir.model.dump import load

    placed = [a for r in analyze(load(FIXTURES / "pallas")).reports for a in r.allocas]
    assert any(a.live_at_peak for a in placed) and any(a.on_stack_at_crossing for a in placed)
    back = pickle.loads(pickle.dumps(placed, protocol=pickle.HIGHEST_PROTOCOL))
    for sent, received in zip(placed, back, strict=True):
        assert type(received) is type(sent)
        for name, value in fields_of(sent).items():
            if name == "record":
                assert fields_of(received.record)["name"] == sent.record.name
            else:
                assert getattr(received, name) == value, name


def test_types_spaces_and_placements_pickle_as_themselves() -> None:
    """A record's memref type, element type, space and placement pickle as constructor
    arguments."""
    from sc_mlir.model.allocation import Placement, Space
    from sc_mlir.syntax.memref import ElementType, MemRefType

    values: list[object] = [
        ElementType("f32", 32), ElementType("!tpu.dma_semaphore", None),
        MemRefType("memref<4x?xbf16, #tpu.memory_space<vmem>>", (4, None),
                   ElementType("bf16", 16), ("#tpu.memory_space<vmem>",)),
        MemRefType("memref<*xf32>", None, ElementType("f32", 32)),
        Space(None, "201", 201, "tile_spmem"), Space("strided<[1]>", None, None, "smem"),
        Placement("@m", "k", "sc_vector_subcore", 0, "scf.for", 3, 9,
                  "func.func@k/scf.for#0", "canonicalize"),
        Placement("", "", None, None, "my.wrap", 1, -1, "module#0/my.wrap#0", None),
    ]
    for value in values:
        # Its own reduction, of every field in order (not the dataclass's state functions).
        assert value.__reduce__() == (type(value), tuple(fields_of(value).values()))
        back = pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        assert back == value and type(back) is type(value)
        if type(value).__hash__ is not None:  # a placement is not hashable
            assert hash(back) == hash(value)
        assert fields_of(back) == fields_of(value)
