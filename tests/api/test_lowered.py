"""Pallas kernels inside lowered JAX programs (issue 18).

The programs in fixtures/lowered/ were saved by fixtures/lowered/make_lowered.py from the
kernels of fixtures/pallas/make_fixtures.py; every figure checked here comes from
fixtures/pallas/expected.json, worked out by hand from the kernels' MLIR text (written by
the shared pallas_to_mlir tool, not by sc-mlir). Tests that need jax lower real kernels on
this CPU host and are skipped, with the reason, where jax is not installed.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sc_mlir.cli import app
from sc_mlir.model.dump import load
from sc_mlir.read import jaxbridge
from sc_mlir.read.embedded import find_kernels, looks_like_program
from sc_mlir.read.programs import read_program

LOWERED = FIXTURES / "lowered"
PALLAS = FIXTURES / "pallas"
HAND = json.loads((PALLAS / "expected.json").read_text())["files"]
OVERFLOW = HAND["sc_scratch_overflow.mlir"]["funcs"]["sc_scratch_overflow"]
FITS = HAND["sc_scratch_fits.mlir"]["funcs"]["sc_scratch_fits"]
runner = CliRunner()

needs_jax = pytest.mark.skipif(
    not jaxbridge.available(),
    reason="jax and jaxlib are not installed (pip install 'sc-mlir[jax]'); .ci/run installs them")


def run(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "120"})


def kernels_of(name: str):
    return find_kernels((LOWERED / name).read_text())


# --- finding the calls: no jax needed ---------------------------------------------------

def test_each_call_is_found_with_its_name_and_bytecode():
    [one] = kernels_of("sc_scratch_overflow.stablehlo.mlir")
    assert (one.name, one.line, one.problem, one.serialized) == ("sc_scratch_overflow", 3,
                                                                  None, True)
    assert one.body is not None and one.body.startswith(b"ML\xefR")  # MLIR bytecode magic
    assert one.config["device_type"] == "DEVICE_TYPE_SPARSECORE"
    two = kernels_of("two_kernels.stablehlo.mlir")
    assert [k.name for k in two] == ["sc_scratch_overflow", "sc_scratch_fits"]
    assert two[0].body == one.body and two[1].body != one.body


def test_hlo_text_gives_the_same_bytes_as_stablehlo():
    """Two printers, two escaping schemes (MLIR's \\22 in a string, HLO's bare JSON with
    raw newlines): the decoded kernels must be byte for byte the same."""
    for name in ("sc_scratch_overflow", "two_kernels"):
        mlir = kernels_of(f"{name}.stablehlo.mlir")
        hlo = kernels_of(f"{name}.hlo.txt")
        assert [k.body for k in hlo] == [k.body for k in mlir]
        assert all(k.name is None for k in hlo)  # HLO prints no kernel_name
        assert [k.config for k in hlo] == [k.config for k in mlir]


def test_a_c_escaped_hlo_backend_config_is_read():
    """Older XLA prints backend_config="..." with C escapes: \\" and \\n."""
    text = (LOWERED / "sc_scratch_overflow.hlo.txt").read_text()
    start = text.index("backend_config={") + len("backend_config=")
    config, end = json.JSONDecoder().raw_decode(text, start)
    raw = text[start:end]
    escaped = raw.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    old = text[:start] + '"' + escaped + '"' + text[end:]
    [kernel] = find_kernels(old)
    assert kernel.body == base64.b64decode(config["custom_call_config"]["body"])


def test_programs_are_told_apart_from_dumps_by_content():
    assert looks_like_program((LOWERED / "sc_scratch_overflow.hlo.txt").read_bytes()[:4096])
    assert read_program(str(PALLAS / "sc_scratch_overflow.mlir")) is None
    # StableHLO without any Pallas kernel is plain MLIR, read as such.
    assert read_program(str(FIXTURES / "sample" / "sparse_core" /
                            "module_0007.sc_embedding_lookup_fwd.mlir")) is None


def test_broken_calls_are_reported_not_dropped_and_never_crash(tmp_path):
    text = (LOWERED / "two_kernels.stablehlo.mlir").read_text()
    body_at = text.index("\\22body\\22: \\22") + len("\\22body\\22: \\22")
    bad = text[:body_at + 10] + "!" + text[body_at + 11:]  # not base64 any more
    [first, second] = find_kernels(bad)
    assert first.body is None and "not base64" in (first.problem or "")
    assert second.body is not None
    cut = text[:body_at + 500]  # the string never closes
    path = tmp_path / "cut.stablehlo.mlir"
    path.write_text(cut)
    program = read_program(str(path))
    assert program is not None and len(program.kernels) == 1
    assert program.kernels[0].body is None
    assert [(d.line, "tpu_custom_call skipped" in d.message) for d in program.diagnostics] == [
        (3, True)]


def test_without_jax_exit_2_with_the_count_and_the_install_line(monkeypatch):
    monkeypatch.setattr(jaxbridge, "available", lambda: False)
    result = run("analyze", str(LOWERED / "two_kernels.stablehlo.mlir"))
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "2 Pallas kernel(s)" in message
    assert "pip install 'sc-mlir[jax]'" in message
    result = run("analyze", str(LOWERED))  # 2 + 2 + 1 + 1 kernels in 4 programs
    assert result.exit_code == 2 and "6 Pallas kernel(s)" in " ".join(result.output.split())
    import sc_mlir

    with pytest.raises(jaxbridge.JaxMissing, match=r"sc-mlir\[jax\]"):
        sc_mlir.from_lowered((LOWERED / "sc_scratch_overflow.stablehlo.mlir").read_text())


# --- reading the kernels: jax needed ----------------------------------------------------

def portable(text: str) -> str:
    """The kernels' locations carry the path make_fixtures.py was imported by; the
    fixtures in fixtures/pallas/ carry its bare name."""
    return re.sub(r'"[^"]*/make_fixtures\.py"', '"make_fixtures.py"', text)


@needs_jax
@pytest.mark.parametrize("program", ["two_kernels.stablehlo.mlir", "two_kernels.hlo.txt"])
def test_each_kernel_prints_as_the_shared_tool_printed_it(program):
    """The text sc-mlir analyses is the Mosaic module pallas_to_mlir.py wrote."""
    from sc_mlir.read.programs import kernel_sources

    loaded = read_program(str(LOWERED / program))
    assert loaded is not None
    sources = kernel_sources(loaded)
    assert [s.path.split("#")[1] for s in sources] == ["sc_scratch_overflow", "sc_scratch_fits"]
    for source in sources:
        name = source.path.split("#")[1]
        assert portable(source.text) == (PALLAS / f"{name}.mlir").read_text()


def space(out: dict, file_suffix: str, space_id: int) -> dict:
    [found] = [s for s in out["spaces"]
               if s["file"].endswith(file_suffix) and s["space_id"] == space_id]
    return found


@needs_jax
@pytest.mark.parametrize("program", ["sc_scratch_overflow.stablehlo.mlir",
                                     "sc_scratch_overflow.hlo.txt"])
def test_analyze_a_saved_lowering_names_the_scratch_operand(program):
    result = run("analyze", str(LOWERED / program), "--chip", "7x", "--format", "json")
    assert result.exit_code == 1, result.output
    out = json.loads(result.stdout)
    vmem = space(out, "#sc_scratch_overflow", 201)
    hand = OVERFLOW["spaces"]["vmem"]
    assert vmem["verdict"] == "overflow"
    assert (vmem["stack_peak_words"], vmem["liveness_peak_words"], vmem["headroom_words"]) == (
        hand["stack_peak_words"], hand["liveness_peak_words"], hand["headroom_words"])
    crossing = vmem["crossing"]
    want = hand["first_crossing"]
    assert (crossing["name"], crossing["offset_upper_bound_words"],
            crossing["allocating_words"]) == (want["name"], want["upper_bound_words"],
                                              want["allocating_words"])
    [only] = hand["single_entries_whose_shrinking_fits"]
    [step] = crossing["fix"]
    assert (step["kind"], step["name"], step["scratch_index"], step["free_words"]) == (
        only["kind"], only["name"], only["scratch_index"], only["shrink_by_words"])
    contributors = {c["name"]: c for c in crossing["contributors"]}
    for scratch in OVERFLOW["scratch_operands"][:4]:
        got = contributors[scratch["name"]]
        assert (got["kind"], got["scratch_index"], got["words"]) == (
            "scratch_operand", scratch["scratch_index"], scratch["words"])


@needs_jax
def test_a_program_with_two_kernels_gives_two_analyses(tmp_path):
    result = run("analyze", str(LOWERED / "two_kernels.stablehlo.mlir"), "--chip", "7x",
                 "--format", "json", "--html", str(tmp_path / "report.html"))
    assert result.exit_code == 1, result.output
    out = json.loads(result.stdout)
    files = sorted({s["file"].rsplit("/", 1)[-1] for s in out["spaces"]})
    assert files == ["two_kernels.stablehlo.mlir#sc_scratch_fits",
                     "two_kernels.stablehlo.mlir#sc_scratch_overflow"]
    assert space(out, "#sc_scratch_overflow", 201)["verdict"] == "overflow"
    fits = space(out, "#sc_scratch_fits", 201)
    assert fits["verdict"] == "fits" and fits["crossing"] is None
    assert fits["stack_peak_words"] == FITS["spaces"]["vmem"]["stack_peak_words"]
    assert "#sc_scratch_fits" in (tmp_path / "report.html").read_text()
    allocas = run("allocas", str(LOWERED / "two_kernels.hlo.txt"), "--format", "json")
    assert allocas.exit_code == 0
    rows = json.loads(allocas.stdout)
    scratch = [(r["file"].rsplit("#", 1)[1], r["scratch_index"], r["words"]) for r in rows
               if r["kind"] == "scratch_operand" and r["space_id"] == 201]
    assert scratch == [("sc_scratch_overflow", s["scratch_index"], s["words"])
                       for s in OVERFLOW["scratch_operands"][:4]] + [
        ("sc_scratch_fits", s["scratch_index"], s["words"]) for s in FITS["scratch_operands"][:4]]


@needs_jax
def test_a_directory_of_programs_and_dumps_reads_both(tmp_path):
    (tmp_path / "lowered.txt").write_text((LOWERED / "sc_scratch_overflow.hlo.txt").read_text())
    (tmp_path / "dump.mlir").write_text((PALLAS / "sc_scratch_fits.mlir").read_text())
    dump = load(tmp_path)
    assert sorted({Path(r.file).name for r in dump.records}) == [
        "dump.mlir", "lowered.txt#sc_scratch_overflow"]


# --- lowering on this host: check and assert_fits ---------------------------------------

@pytest.fixture(scope="module")
def kernels() -> ModuleType:
    """make_fixtures.py, whose kernels made fixtures/pallas/ (imported with jax)."""
    if not jaxbridge.available():
        pytest.skip("jax and jaxlib are not installed (pip install 'sc-mlir[jax]')")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # lowering for TPU needs no TPU
    spec = importlib.util.spec_from_file_location("make_fixtures", PALLAS / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_fixtures"] = module
    spec.loader.exec_module(module)
    return module


def sc_kernel(kernels: ModuleType, big_words: int) -> tuple[Any, tuple[Any, ...]]:
    name = "sc_scratch_overflow" if big_words == kernels.OVERFLOW_BIG_WORDS else "sc_scratch_fits"
    return kernels.sc_builder(name, big_words)()


def test_check_reports_the_overflowing_kernel_and_the_shrunk_one_fits(kernels):
    import sc_mlir

    fn, args = sc_kernel(kernels, kernels.OVERFLOW_BIG_WORDS)
    analysis = sc_mlir.check(fn, *args, chip="7x")
    report = analysis.report("sc_scratch_overflow", 201)
    hand = OVERFLOW["spaces"]["vmem"]
    assert report.verdict == "overflow" and analysis.has_crossing
    assert report.stack_peak_words == hand["stack_peak_words"]
    assert report.bound_words == hand["bound_words"]
    assert report.file == "jit_run#sc_scratch_overflow"
    [step] = report.crossing.fix
    assert (step.entry.record.kind, step.entry.record.name, step.entry.record.scratch_index,
            step.free_words) == ("scratch_operand", "%arg6", 0, 9953)

    fn, args = sc_kernel(kernels, kernels.FITS_BIG_WORDS)
    shrunk = sc_mlir.check(fn, *args, chip="7x")
    fitting = shrunk.report("sc_scratch_fits", 201)
    assert fitting.verdict == "fits" and not shrunk.has_crossing
    assert fitting.stack_peak_words == FITS["spaces"]["vmem"]["stack_peak_words"]
    # A bound given by the user wins over the chip's, to the word.
    peak = fitting.stack_peak_words
    assert sc_mlir.check(fn, *args, chip="7x", bounds={"201": peak - 1}).has_crossing
    assert not sc_mlir.check(fn, *args, chip="7x", bounds={"201": peak}).has_crossing


def test_assert_fits_raises_with_the_report_and_passes_when_shrunk(kernels):
    import sc_mlir

    fn, args = sc_kernel(kernels, kernels.OVERFLOW_BIG_WORDS)
    with pytest.raises(sc_mlir.KernelDoesNotFit) as raised:
        sc_mlir.assert_fits(fn, *args, chip="7x")
    message = " ".join(str(raised.value).split())
    assert isinstance(raised.value, AssertionError)
    assert "overflow func sc_scratch_overflow space 201 (tile_spmem)" in message
    assert ("shrink scratch_shapes entry 0 (%arg6, memref<100000xf32, "
            "#tpu.memory_space<vmem>>, 100,000 words) by 9,953 words") in message
    fn, args = sc_kernel(kernels, kernels.FITS_BIG_WORDS)
    assert not sc_mlir.assert_fits(fn, *args, chip="7x").has_crossing


def test_two_kernels_in_one_function_give_two_analyses(kernels):
    import sc_mlir

    big, big_args = sc_kernel(kernels, kernels.OVERFLOW_BIG_WORDS)
    small, _ = sc_kernel(kernels, kernels.FITS_BIG_WORDS)

    def both(x: Any, table: Any, seed: Any) -> tuple[Any, Any]:
        return big(x, table, seed), small(x[: kernels.FITS_BIG_WORDS], table, seed)

    analysis = sc_mlir.check(both, *big_args, chip="7x")
    verdicts = {(r.file, r.verdict) for r in analysis.reports if r.space_id == 201}
    assert verdicts == {("jit_both#sc_scratch_overflow", "overflow"),
                        ("jit_both#sc_scratch_fits", "fits")}


def test_assert_fits_refuses_a_function_without_kernels(kernels):
    import jax.numpy as jnp

    import sc_mlir

    with pytest.raises(ValueError, match="no Pallas kernel"):
        sc_mlir.assert_fits(lambda x: x + 1, jnp.zeros(4))


def test_an_api_difference_in_jax_is_said_clearly(kernels, monkeypatch):
    import jax

    import sc_mlir

    monkeypatch.delattr(jax.sharding, "use_abstract_mesh")
    fn, args = sc_kernel(kernels, kernels.FITS_BIG_WORDS)
    with pytest.raises(jaxbridge.JaxApiError, match=r"tested with jax 0\.10\.2"):
        sc_mlir.check(fn, *args)


@needs_jax
def test_the_generic_form_names_its_target_after_the_config():
    """MLIR's generic printer sorts attributes: backend_config comes before
    call_target_name and kernel_name. Printed by jaxlib itself from the saved program."""
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    text = (LOWERED / "two_kernels.stablehlo.mlir").read_text()
    with jax_mlir.make_ir_context():
        generic = ir.Module.parse(text).operation.get_asm(print_generic_op_form=True)
    assert generic.index("backend_config") < generic.index("call_target_name")
    found = find_kernels(generic)
    assert [(k.name, k.body) for k in found] == [(k.name, k.body) for k in find_kernels(text)]


@needs_jax
def test_a_program_whose_calls_are_all_unreadable_exits_2_saying_why(tmp_path):
    text = (LOWERED / "sc_scratch_overflow.stablehlo.mlir").read_text()
    body_at = text.index("\\22body\\22: \\22") + len("\\22body\\22: \\22")
    path = tmp_path / "broken.mlir"
    path.write_text(text[:body_at] + "QUJD" + text[body_at + 4:])  # valid base64, not MLIR
    result = run("analyze", str(path))
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "broken.mlir:3:" in message and "cannot parse the kernel's body" in message


def test_a_call_far_into_a_large_file_is_found(tmp_path, monkeypatch):
    """The first 256 KiB decide whether a file looks like a program; the target is then
    searched block by block (here blocks of 1000 bytes, so mentions straddle blocks)."""
    import sc_mlir.read.programs as programs

    monkeypatch.setattr(programs, "_SEARCH_BLOCK", 1000)
    text = (LOWERED / "two_kernels.stablehlo.mlir").read_text()
    header, rest = text.split("\n", 1)
    filler = "".join(f"  // padding line {i:06d} before the calls\n" for i in range(9000))
    path = tmp_path / "big.mlir"
    path.write_text(header + "\n" + filler + rest)
    assert path.stat().st_size > 300_000
    program = read_program(str(path))
    assert program is not None
    assert [(k.name, k.line) for k in program.kernels] == [
        ("sc_scratch_overflow", 9000 + 3), ("sc_scratch_fits", 9000 + 5)]


def test_workers_are_not_forked_from_a_process_running_jax(kernels, tmp_path):
    """jax runs threads; forking then may deadlock a worker. Reading a directory with
    several jobs after jax was imported starts the workers from a fork server."""
    from sc_mlir.model.dump import worker_context

    assert "jax" in sys.modules
    context = worker_context()
    assert context is not None and context.get_start_method() == "forkserver"
    for i in range(3):
        (tmp_path / f"k{i}.mlir").write_text((PALLAS / "sc_scratch_fits.mlir").read_text())
    assert len(load(tmp_path, jobs=2).files) == 3


def test_a_tensorcore_pallas_call_is_checked_against_its_vmem(kernels):
    """pl.pallas_call with scratch_shapes: the hand figures of tc_scratch_mixed."""
    import sc_mlir

    fn, args = kernels.build_tc_scratch_mixed()
    analysis = sc_mlir.check(fn, *args, chip="7x")
    hand = HAND["tc_scratch_mixed.mlir"]["funcs"]["tc_scratch_mixed"]["spaces"]
    peaks = {r.space_name: r.stack_peak_words for r in analysis.reports}
    assert peaks == {"vmem": hand["vmem"]["stack_peak_words"],
                     "smem": hand["smem"]["stack_peak_words"],
                     "sflag": hand["semaphore_mem"]["stack_peak_words"]}
    vmem = analysis.report("tc_scratch_mixed", "vmem")
    assert vmem.bound_words == 64 * 1024 * 1024 // 4 and vmem.verdict == "fits"
    tight = sc_mlir.check(fn, *args, chip="7x",
                          bounds={"vmem": hand["vmem"]["stack_peak_words"] - 1})
    assert tight.report("tc_scratch_mixed", "vmem").verdict != "fits"


def mlir_escaped(text: str) -> str:
    """As MLIR's printer writes a string attribute (llvm::printEscapedString): printable
    ASCII as is, except a backslash (doubled) and a quote; every other byte as \\XX."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char == "\\":
            out.append("\\\\")
        elif 32 <= byte < 127 and char != '"':
            out.append(char)
        else:
            out.append(f"\\{byte:02X}")
    return "".join(out)


def c_escaped(text: str) -> str:
    """As absl::CEscape writes it (XLA's HLO printer): \\n \\r \\t \\" \\' \\\\ and octal."""
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "'": "\\'", "\\": "\\\\"}
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in named:
            out.append(named[char])
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.text(max_size=30), max_size=4),
       st.binary(max_size=64), st.booleans())
def test_any_config_round_trips_through_either_printer(extra, body, hlo):
    """Whatever the JSON holds (quotes, backslashes, newlines, non-ASCII), escaped as
    each printer escapes it, the reader gets the same config and body back."""
    config = {"custom_call_config": {"body": base64.b64encode(body).decode()}, **extra}
    if "custom_call_config" in extra:
        return
    payload = json.dumps(config, ensure_ascii=False)  # raw UTF-8 in the JSON too
    if hlo:
        text = ('HloModule m\n\nENTRY e {\n  ROOT c = f32[] custom-call(), '
                f'custom_call_target="tpu_custom_call", backend_config="{c_escaped(payload)}"\n}}\n')
    else:
        text = ('module {\n  %0 = stablehlo.custom_call @tpu_custom_call() {backend_config = '
                f'"{mlir_escaped(payload)}", kernel_name = "k"}} : () -> tensor<f32>\n}}\n')
    [kernel] = find_kernels(text)
    assert kernel.body == body and kernel.line == (4 if hlo else 2)
    del config["custom_call_config"]["body"]
    assert kernel.config == config


def test_a_dump_that_only_mentions_the_target_is_read_as_a_dump(tmp_path):
    path = tmp_path / "mentions.mlir"
    path.write_text("// stablehlo.custom_call @tpu_custom_call was lowered into this\n"
                    + (PALLAS / "sc_scratch_fits.mlir").read_text())
    assert read_program(str(path)) is None
    dump = load(path)
    assert len([r for r in dump.records if r.kind == "scratch_operand"]) == len(
        FITS["scratch_operands"])


@needs_jax
def test_the_cli_says_which_jax_function_is_missing(monkeypatch):
    import jax._src.interpreters.mlir as jax_mlir

    jaxbridge._mlir.cache_clear()
    monkeypatch.delattr(jax_mlir, "make_ir_context")
    try:
        result = run("analyze", str(LOWERED / "sc_scratch_overflow.stablehlo.mlir"))
    finally:
        jaxbridge._mlir.cache_clear()
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "make_ir_context" in message and "tested with jax 0.10.2" in message
