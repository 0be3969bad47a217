"""A large file scanned in parts on several processes gives exactly what one pass gives."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import REPO, bench_generator

from sc_mlir.model import dump as dump_module
from sc_mlir.model.allocation import build_allocations
from sc_mlir.model.dump import allocation_row, load, worker_context
from sc_mlir.read import parts
from sc_mlir.read.parts import plan_parts, scan_file_in_parts
from sc_mlir.read.scan import FileScan, ScanSettings, scan_file


def write_dump(path: Path, form: str, size: int, seed: int = 7) -> int:
    """A benchmark-shaped dump of about `size` bytes; returns its alloca count."""
    return bench_generator().write_module(path, form, size, seed)


def table(scan: FileScan) -> tuple[list[dict], list]:
    records, diagnostics = build_allocations(scan)
    return [allocation_row(r) for r in records], diagnostics


def assert_same_as_one_pass(path: Path, scanned: FileScan) -> None:
    whole = scan_file(str(path))
    assert (scanned.ops, scanned.lines) == (whole.ops, whole.lines)
    assert [c.aliases for c in scanned.chunks] == [c.aliases for c in whole.chunks]
    assert table(scanned) == table(whole)


def scan_parts(path: Path, jobs: int) -> list[parts.PartScan]:
    prefix, planned = plan_parts(str(path), jobs, 50_000)
    assert len(planned) >= 2
    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(lambda part: parts.scan_part(str(path), prefix, part,
                                                          ScanSettings()), planned))


def joined(path: Path, jobs: int) -> FileScan:
    scanned = parts.join_parts(str(path), scan_parts(path, jobs))
    assert scanned is not None, "the parts should join"
    return scanned


@pytest.mark.parametrize("form", ["generic", "pretty"])
@pytest.mark.parametrize("jobs", [2, 5])
def test_parts_join_into_the_one_pass_scan(tmp_path, form, jobs):
    path = tmp_path / f"{form}.mlir"
    count = write_dump(path, form, 600_000)
    _, planned = plan_parts(str(path), jobs, 50_000)
    assert min(jobs, 4) <= len(planned) <= jobs  # a func can be longer than a fifth of it
    scanned = joined(path, jobs)
    assert len(scanned.allocas) == count
    assert_same_as_one_pass(path, scanned)


def test_parts_cross_processes(tmp_path):
    path = tmp_path / "generic.mlir"
    write_dump(path, "generic", 400_000)
    prefix, planned = plan_parts(str(path), 3, 50_000)
    with ProcessPoolExecutor(2, mp_context=worker_context()) as pool:
        scanned = parts.join_parts(str(path), list(pool.map(
            parts.scan_part, *zip(*[(str(path), prefix, p, ScanSettings()) for p in planned], strict=True))))
    assert scanned is not None
    assert_same_as_one_pass(path, scanned)


def test_module_attributes_after_its_region_reach_every_part(tmp_path):
    path = tmp_path / "named.mlir"
    write_dump(path, "generic", 300_000)
    text = path.read_text()
    closing = "\n}) : () -> () loc(#loc"
    assert text.count(closing) == 1
    path.write_text(text.replace(closing, '\n}) {sym_name = "sc_module"} : () -> () loc(#loc'))
    scanned = joined(path, 3)
    assert {row["module"] for row in table(scanned)[0]} == {"@sc_module"}
    assert_same_as_one_pass(path, scanned)


def test_a_part_that_does_not_end_between_funcs_falls_back_to_one_pass(tmp_path):
    path = tmp_path / "broken.mlir"
    write_dump(path, "pretty", 300_000)
    lines = path.read_text().split("\n")
    # Drop a func's closing brace in the first third: the module never gets back to rest.
    closing = next(i for i, line in enumerate(lines)
                   if i > len(lines) // 6 and line.startswith("  } loc("))
    del lines[closing]
    path.write_text("\n".join(lines))
    assert parts.join_parts(str(path), scan_parts(path, 3)) is None
    with ThreadPoolExecutor(3) as pool:
        scanned = scan_file_in_parts(str(path), ScanSettings(), 3, pool, min_part_bytes=50_000)
    assert any("still open" in d.message for d in scanned.diagnostics)
    assert_same_as_one_pass(path, scanned)


@pytest.mark.parametrize("change", ["chunks", "carriage returns", "no funcs", "small"])
def test_files_read_in_one_pass(tmp_path, change):
    path = tmp_path / "dump.mlir"
    write_dump(path, "pretty", 300_000)
    text = path.read_text()
    if change == "chunks":
        text = text.replace("\n  func.func @sc_kernel_3(", "\n// -----\n  func.func @sc_kernel_3(")
    elif change == "carriage returns":
        text = text.replace("\n", "\r\n")
    elif change == "no funcs":
        text = text.replace("  func.func", "  xla.func")
    path.write_text(text)
    smallest = 10_000_000 if change == "small" else 50_000
    assert plan_parts(str(path), 4, smallest) == (0, [])


def test_load_with_jobs_splits_a_large_file(tmp_path, monkeypatch):
    path = tmp_path / "big.mlir"
    count = write_dump(path, "generic", 500_000)
    monkeypatch.setattr(parts, "MIN_PART_BYTES", 100_000)
    # A file the fast reader declines (it reads the others on one core, faster than parts).
    monkeypatch.setattr(dump_module, "read_events", lambda *args: None)
    joined = []
    real = parts.join_parts
    monkeypatch.setattr(parts, "join_parts", lambda *a: joined.append(real(*a)) or joined[-1])
    split = load(path, jobs=2)
    assert joined and joined[0] is not None and len(split.records) == count
    whole = load(path, jobs=1)
    assert split.allocations.equals(whole.allocations)
    assert split.diagnostics == whole.diagnostics


@pytest.mark.parametrize("jobs", [2, 3])
def test_scratch_operands_of_funcs_in_every_part_join_as_in_one_pass(tmp_path, jobs):
    """Pallas funcs (scratch operands, semaphores) spread over the parts: each part's funcs
    are renumbered into the file's program order like its allocas."""
    lines = (REPO / "fixtures" / "pallas" / "sc_scratch_overflow.mlir").read_text().split("\n")
    func = "\n".join(lines[3:73])  # `  func.func @sc_scratch_overflow(...` to its `  } loc(#loc)`
    copies = [func.replace("@sc_scratch_overflow", f"@kernel_{k}") for k in range(40)]
    path = tmp_path / "many.mlir"
    path.write_text("\n".join([*lines[:3], *copies, *lines[73:]]))
    scanned = joined(path, jobs)
    assert len(scanned.funcs) == 40
    assert_same_as_one_pass(path, scanned)
    rows, _ = table(scanned)
    assert sum(r["kind"] == "scratch_operand" for r in rows) == 40 * 5
