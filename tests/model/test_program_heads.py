"""`load` has `split_programs` read only the files whose heads, read by discovery, may
hold a lowered program: the same files, skipped notes and programs as asking it about
every file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import REPO

from sc_mlir.read.discover import SNIFF_BYTES, discover
from sc_mlir.read.programs import may_hold_a_program, split_programs

FIXTURES = REPO / "fixtures"


def _a_dump_with_programs(root: Path) -> Path:
    """Programs (HLO and StableHLO), MLIR files that mention the target or do not, a large
    file whose head looks like a program and one that does not, HLO text with no call,
    binary and empty files."""
    root.mkdir()
    for name in ("two_kernels.hlo.txt", "sc_scratch_overflow.stablehlo.mlir"):
        shutil.copy(FIXTURES / "lowered" / name, root / name)
    sample = next(p for p in sorted((FIXTURES / "sample").rglob("*.mlir")))
    text = sample.read_text()
    (root / "plain.mlir").write_text(text)
    (root / "mentions.mlir").write_text("// tpu_custom_call, in a comment\n" + text)
    filler = "// " + "x" * 100 + "\n"
    (root / "large_hlo_like.mlir").write_text(
        "// stablehlo.add\n" + text + filler * (SNIFF_BYTES // len(filler) + 10)
        + "// tpu_custom_call\n")
    (root / "large_plain.mlir").write_text(text + filler * (SNIFF_BYTES // len(filler) + 10))
    (root / "hlo_without_calls.txt").write_text("HloModule m\nENTRY e { ROOT x = f32[] "
                                                "constant(0) }\n")
    (root / "binary.bin").write_bytes(b"\x00" * 1000)
    (root / "empty.mlir").write_text("")
    return root


def test_programs_found_from_the_heads_are_those_found_from_every_file(tmp_path):
    root = _a_dump_with_programs(tmp_path / "dump")
    files, skipped = discover(root)
    expected = split_programs(files, skipped)
    assert len(expected[2]) == 2 and expected[1]  # both programs; skipped files too
    heads: dict[str, bytes] = {}
    assert discover(root, on_head=heads.__setitem__) == (files, skipped)
    no_programs = {path for path, head in heads.items()
                   if not may_hold_a_program(head)}
    assert str(root / "plain.mlir") in no_programs  # read once, by discovery
    found = split_programs(files, skipped, no_programs)
    assert (found[0], found[1]) == (expected[0], expected[1])
    assert [(p.path, [k.name for k in p.kernels], p.diagnostics) for p in found[2]] == [
        (p.path, [k.name for k in p.kernels], p.diagnostics) for p in expected[2]]


@pytest.mark.parametrize("kept_out", ["two_kernels.hlo.txt",
                                      "sc_scratch_overflow.stablehlo.mlir"])
def test_a_program_left_out_of_the_files_asked_about_is_not_found(tmp_path, kept_out):
    """(The test above would pass with every file asked about: a file said to hold no
    program is not asked about.)"""
    root = _a_dump_with_programs(tmp_path / "dump")
    files, skipped = discover(root)
    found = split_programs(files, skipped, {str(root / kept_out)})
    assert [Path(p.path).name for p in found[2]] == [
        name for name in ("sc_scratch_overflow.stablehlo.mlir", "two_kernels.hlo.txt")
        if name != kept_out]
