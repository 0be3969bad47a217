"""Memory spaces: raw text -> (id, name), with the SparseCore rules of docs/SEMANTICS.md §2."""

from __future__ import annotations

import pytest

from sc_mlir.model.spaces import SpaceMap, parse_space_id, split_params

SC = "sc_vector_subcore"


@pytest.mark.parametrize(
    ("raw", "core", "expected"),
    [
        (None, None, (0, "smem")),
        ("201", None, (201, "tile_spmem")),
        ("202", None, (202, "spmem")),
        ("203", None, (203, "hbm")),
        ("204", None, (204, "sflag")),
        ("3", None, (3, "3")),
        ("2 : i32", None, (2, "2")),
        ('"tile_spmem"', None, (201, "tile_spmem")),
        ('"L1"', None, (None, "L1")),
        ("#tpu.memory_space<vmem>", SC, (201, "tile_spmem")),
        ("#tpu.memory_space<vmem>", "tc", (None, "vmem")),
        ("#tpu.memory_space<vmem>", None, (None, "vmem")),
        ("#tpu.memory_space<vmem_shared>", SC, (202, "spmem")),
        ("#tpu.memory_space<smem>", SC, (0, "smem")),
        ("#tpu.memory_space<hbm>", None, (203, "hbm")),
        ("#tpu.memory_space<semaphore_mem>", SC, (204, "sflag")),
        ("#gpu.address_space<private>", None, (None, "#gpu.address_space<private>")),
    ],
)
def test_canonical_space(raw, core, expected):
    assert SpaceMap.default().canonical(raw, core) == expected


def test_overrides_are_data_the_user_controls():
    m = SpaceMap.default().with_overrides({"#tpu.memory_space<vmem>": "tile_spmem", "5": 202})
    assert m.canonical("#tpu.memory_space<vmem>", "tc") == (201, "tile_spmem")
    assert m.canonical("5", None) == (202, "spmem")


def test_space_ids_by_name():
    assert parse_space_id("TileSpmem") == 201 and parse_space_id("sync-flags") == 204
    with pytest.raises(ValueError, match="unknown memory space"):
        parse_space_id("vmem2")


def test_layout_or_space_needs_the_alias_table():
    aliases = {"#map": "affine_map<(d0) -> (d0)>", "#sp": "202"}
    assert split_params(("#map",), aliases) == ("#map", None)
    assert split_params(("#sp",), aliases) == (None, "#sp")
    assert split_params(("#tpu.tiled<(8,128)>",), aliases) == ("#tpu.tiled<(8,128)>", None)
