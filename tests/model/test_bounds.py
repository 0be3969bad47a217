"""Bounds: the built-in table, chips, user values, config files."""

from __future__ import annotations

import pytest

from sc_mlir.model.bounds import Bounds, build_bounds, find_config, parse_assignments


def test_only_tile_spmem_has_a_built_in_bound():
    b = Bounds.default()
    assert b.bound_for(201, "tile_spmem") == (131071, "built-in (the E3000 message)")
    for space_id, name in ((0, "smem"), (202, "spmem"), (203, "hbm"), (204, "sflag"),
                           (None, "vmem")):
        assert b.bound_for(space_id, name) == (None, "unknown")


@pytest.mark.parametrize(("chip", "words"), [("v5p", 131071), ("v6e", 65535), ("7x", 131071),
                                             ("TPU7x", 131071), ("8i", 131071)])
def test_chip_table(chip, words):
    assert Bounds.default().with_chip(chip).bound_for(201, "tile_spmem")[0] == words


# jax 0.10.2's tpu_info.py, TensorCore vmem_capacity_bytes per core: v4 16 MiB, v5e
# 128 MiB, v5p 64 MiB, v6e 128 MiB, 7x 64 MiB, 8i 192 MiB; words = bytes / 4. v4 and v5e
# have no SparseCore entry there, so TileSpmem stays unknown (the built-in 131071 stays).
@pytest.mark.parametrize(("chip", "vmem_words", "tile_spmem"), [
    ("v4", 16 * 2**20 // 4, (131071, "built-in (the E3000 message)")),
    ("v5e", 128 * 2**20 // 4, (131071, "built-in (the E3000 message)")),
    ("v5p", 64 * 2**20 // 4, 131071), ("v6e", 128 * 2**20 // 4, 65535),
    ("7x", 16_777_216, 131071), ("8i", 50_331_648, 131071)])
def test_chip_gives_tensor_core_vmem_its_bound(chip, vmem_words, tile_spmem):
    bounds = Bounds.default().with_chip(chip)
    words, source = bounds.bound_for(None, "vmem")
    assert words == vmem_words
    assert "TensorCore vmem_capacity_bytes" in source and "tpu_info.py" in source
    found = bounds.bound_for(201, "tile_spmem")
    assert (found if isinstance(tile_spmem, tuple) else found[0]) == tile_spmem


def test_named_spaces_and_ids_share_keys():
    b = Bounds.default().with_bounds({"TileSpmem": 5, "vmem": 7, "202": 9}, "t")
    assert b.bound_for(201, "tile_spmem") == (5, "t")
    assert b.bound_for(None, "vmem") == (7, "t")
    assert b.bound_for(202, "spmem") == (9, "t")


def test_bad_assignments_say_what_is_wrong():
    with pytest.raises(ValueError, match="SPACE=NUMBER"):
        parse_assignments(["201"], "--bound")
    with pytest.raises(ValueError, match="not a whole number"):
        parse_assignments(["201=1.5"], "--bound")
    assert parse_assignments(["201=0x1FFFF"], "--bound") == {"201": 131071}


def test_precedence_built_in_config_command_line(tmp_path):
    (tmp_path / "sc-mlir.toml").write_text('chip = "v6e"\n[bounds]\n201 = 100\n')
    config = find_config(tmp_path)
    assert build_bounds(config, None, {}, {}).bound_for(201, "x") == (100, f"config {config.path}")
    words, source = build_bounds(config, "v5p", {}, {}).bound_for(201, "x")
    assert words == 131071 and source.startswith("chip v5p: ")
    assert build_bounds(config, "v5p", {"201": 3}, {}).bound_for(201, "x") == (3, "--bound")


def test_missing_config_is_empty(tmp_path):
    assert find_config(tmp_path).path is None
