"""Bounds: the built-in table, chips, user values, config files."""

from __future__ import annotations

import pytest

from sc_mlir.bounds import Bounds, build_bounds, find_config, parse_assignments


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
    assert build_bounds(config, "v5p", {}, {}).bound_for(201, "x") == (131071, "chip v5p")
    assert build_bounds(config, "v5p", {"201": 3}, {}).bound_for(201, "x") == (3, "--bound")


def test_missing_config_is_empty(tmp_path):
    assert find_config(tmp_path).path is None
