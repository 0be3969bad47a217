"""Broken and hostile input: never a traceback, never a lost alloca, always a position.

Each case is built here from one small valid dump (three allocas, a #loc table) and read
with `sc-mlir analyze --format json`, as a user would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sc_mlir.cli import app
from sc_mlir.read.discover import discover

runner = CliRunner()

GOOD = """\
module {
  func.func @f(%arg0: memref<8xf32, 203>) attributes {tpu.core_type = #tpu.core_type<sc_vector_subcore>} {
    %0 = memref.alloca() : memref<64xf32, 201> loc(#loc1)
    %1 = memref.alloca() : memref<128xi32, 201> loc(#loc2)
    "tpu.region"() ({
      %2 = memref.alloca() : memref<256xf32, 201> loc(#loc3)
      memref.store %c, %2[%i] : memref<256xf32, 201>
      "tpu.yield"() : () -> ()
    }) : () -> () loc(#loc4)
    memref.store %c, %0[%i] : memref<64xf32, 201>
    return
  } loc(#loc5)
} loc(#loc6)
#loc1 = loc("model.py":10:3)
#loc2 = loc("op_a"(#loc1))
#loc3 = loc(callsite(#loc1 at #loc2))
#loc4 = loc("model.py":20:1)
#loc5 = loc("model.py":1:1)
#loc6 = loc(unknown)
"""


def analyze(path: Path, *args: str) -> tuple[int, dict | None, str]:
    result = runner.invoke(app, ["analyze", str(path), "--format", "json", "--quiet", *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"traceback on {path.name}") from result.exception
    out = json.loads(result.stdout) if result.stdout.strip() else None
    return result.exit_code, out, result.output


def allocas(out: dict) -> int:
    return sum(space["n_allocas"] for space in out["spaces"])


def notes(out: dict) -> list[tuple[int, int, str, str]]:
    return [(d["line"], d["col"], d["message"], d["quote"]) for d in out["diagnostics"]]


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def cut_after(text: str, marker: str, extra: int = 0) -> str:
    return text[: text.index(marker) + len(marker) + extra]


def test_the_base_case_is_clean(tmp_path):
    code, out, _ = analyze(write(tmp_path, "good.mlir", GOOD))
    assert code == 0 and allocas(out) == 3 and out["diagnostics"] == []


def test_empty_file_is_unusable(tmp_path):
    code, out, output = analyze(write(tmp_path, "empty.mlir", ""))
    assert code == 2 and out is None
    assert "empty file" in output


@pytest.mark.parametrize(("name", "cut", "expect_allocas", "message", "line"), [
    ("mid-op", cut_after(GOOD, "%1 = memref.alloca() : memr"), 1,
     "memref.alloca skipped: text ends inside the op", 4),
    ("mid-type", cut_after(GOOD, "memref<128"), 1,
     "memref.alloca skipped: text ends inside the op", 4),
    ("mid-region", cut_after(GOOD, '"tpu.yield"() : () -> ()'), 3,
     "3 region(s) still open at the end of the file", 8),
    ("mid-alias-table", cut_after(GOOD, "#loc3 = loc(callsite(#loc1"), 3,
     "alias #loc3 is not closed before the end of the file", 16),
])
def test_truncated_files_keep_what_was_read(tmp_path, name, cut, expect_allocas, message, line):
    code, out, _ = analyze(write(tmp_path, f"{name}.mlir", cut))
    assert code == 0 and allocas(out) == expect_allocas
    found = [n for n in notes(out) if message in n[2]]
    assert found and found[0][0] == line, notes(out)
    # Whatever was cut is accounted for: read, or skipped with a note.
    assert allocas(out) + out["skipped_allocas"] == cut.count("memref.alloca()")


def test_truncated_before_the_alias_table(tmp_path):
    code, out, _ = analyze(write(tmp_path, "noloc.mlir", GOOD[: GOOD.index("#loc1 =")]))
    assert code == 0 and allocas(out) == 3
    (line, col, message, quote), = notes(out)
    assert (line, col) == (3, 10) and "3 alloca(s) refer to location aliases that are never " \
        "defined (first: #loc1)" in message and "memref<64xf32" in quote


def test_unbalanced_braces_and_parentheses(tmp_path):
    extra_brace = GOOD.replace("    }) : () -> () loc(#loc4)\n", "    }}) : () -> () loc(#loc4)\n")
    _, out, _ = analyze(write(tmp_path, "brace.mlir", extra_brace))
    assert allocas(out) == 3
    assert any("'}' closes nothing that is open" in m for _, _, m, _ in notes(out))
    open_paren = GOOD.replace("memref.store %c, %2[%i]", "memref.store (%c, %2[%i]")
    _, out, _ = analyze(write(tmp_path, "paren.mlir", open_paren))
    assert allocas(out) == 3
    assert [(n[0], n[2]) for n in notes(out)] == [
        (9, "'(' or '[' opened at line 7 is never closed; assumed closed where its region ends")]
    # Unclosed before an op with results: recovered there, the alloca is still read.
    before_op = GOOD.replace("    %1 = memref.alloca()", '    "x.y"(%a, (%b\n    %1 = memref.alloca()')
    _, out, _ = analyze(write(tmp_path, "paren2.mlir", before_op))
    assert allocas(out) == 3
    assert any("opened at line 4 is never closed; assumed closed before this op" in m
               for _, _, m, _ in notes(out))


def test_an_alloca_whose_type_does_not_parse(tmp_path):
    _, out, _ = analyze(write(tmp_path, "badtype.mlir",
                                 GOOD.replace("memref<128xi32, 201>", "memref<128xq32?, 201>")))
    assert allocas(out) == 2 and out["skipped_allocas"] == 1
    (line, col, message, quote), = notes(out)
    assert (line, col) == (4, 39) and message.startswith("memref.alloca skipped: unexpected")
    assert "expected" in message and "memref<128xq32?" in quote


def test_a_zeroed_block_says_that_text_is_lost(tmp_path):
    # A block of NULs in the place of text (a page a crash zeroed, small enough for the
    # file to be read): what it held is missing, here the second alloca, and the note
    # says so rather than only that a NUL byte was blanked.
    text = b"// a note\n" * 1_000 + GOOD.encode()
    start = text.index(b"    %1 = memref")
    end = text.index(b"\n", start)
    damaged = text[:start] + b"\x00" * 70 + text[end:]
    assert damaged.count(b"\x00") * 100 <= len(damaged)  # read, not skipped as binary
    _, out, _ = analyze(write(tmp_path, "zeroed.mlir", damaged))
    assert allocas(out) == 2
    line = text[:start].count(b"\n") + 1
    assert notes(out)[0][:3] == (line, 1, "70 NUL bytes in a row (a block a crash may have "
                                 "zeroed): the text that was there is lost, and the report "
                                 "lacks what it held")


def test_unknown_dialect_types_and_attributes(tmp_path):
    text = GOOD.replace("memref<128xi32, 201>", "memref<4x!foo.bar<1, 2>, #my.space<x>>")
    _, out, _ = analyze(write(tmp_path, "unknown.mlir", text), "--allocations")
    assert allocas(out) == 3 and out["skipped_allocas"] == 0
    unknown = next(a for a in out["allocations"] if a["name"] == "%1")
    assert unknown["words"] is None and unknown["memory_space"] == "#my.space<x>"


def test_nul_bytes_and_binary_garbage(tmp_path):
    nul = GOOD.encode().replace(b"    %1 = memref", b"    \x00\x00%1 = memref")
    code, out, _ = analyze(write(tmp_path, "nul.mlir", nul))
    assert allocas(out) == 3
    assert notes(out)[0][:3] == (4, 5, "control byte 0x00 (NUL) in the text; read as a space")
    garbage = GOOD.encode().replace(b"    return\n", b"    return\n" + bytes(range(256)) + b"\n")
    code, out, _ = analyze(write(tmp_path, "garbage.mlir", garbage))
    assert allocas(out) == 3
    # bytes(range(256)) holds one "\n" (lines 12 and 13); its "\r" ends no line, as in MLIR.
    assert {n[0] for n in notes(out) if "control byte" in n[2]} == {12, 13}
    assert all("\x1b" not in n[3] and "\x00" not in n[3] for n in notes(out))
    code, out, output = analyze(write(tmp_path, "random.bin", os.urandom(4096) + b"\x00" * 512))
    assert code == 2 and "binary file" in output


def test_invalid_utf8(tmp_path):
    text = GOOD.encode().replace(b'"model.py":10', b'"mod\xff\xfeel.py":10')
    _, out, _ = analyze(write(tmp_path, "utf8.mlir", text))
    assert allocas(out) == 3
    assert notes(out)[0][:3] == (14, 17, "invalid UTF-8 in the text; its bytes read as U+FFFD")


def test_crlf_line_ends_and_tabs(tmp_path):
    text = GOOD.replace("\n", "\r\n").replace("    ", "\t")
    code, out, _ = analyze(write(tmp_path, "crlf.mlir", text.encode()))
    assert code == 0 and allocas(out) == 3 and out["diagnostics"] == []
    code, plain, _ = analyze(write(tmp_path, "plain.mlir", GOOD))
    assert [s["stack_peak_words"] for s in out["spaces"]] == \
        [s["stack_peak_words"] for s in plain["spaces"]]


def _reported(out: dict) -> list[tuple[object, ...]]:
    """What a report says of each space and of the allocas it shows, lines aside."""
    return [(s["func"], s["space_id"], s["stack_peak_words"], s["liveness_peak_words"],
             [(e["name"], e["loc"]) for e in s["live_at_peak"]]) for s in out["spaces"]]


# 20,000 more `#loc` definitions (a path with a `/`, whose `x.py` looks like an op's name to
# the search for an op after an alias's value).
MANY_ALIASES = "".join(f' #loc{n} = loc("src/x.py":{n}:1)' for n in range(7, 20_007))


@pytest.mark.parametrize("line_end", ["\n", "\r"])
def test_a_loc_table_on_one_line(tmp_path, line_end):
    # MLIR reads a line break as a blank, and a lone CR ends no line: a table written on
    # one line, or a dump whose lines end in a lone CR, defines its aliases on one line.
    # Before: a call per definition (past about a thousand, RecursionError: the file was
    # skipped, and a directory holding it exited 0), and a new search of the rest of the
    # line per definition (a 5 MB dump with lone CRs: 86 s).
    ops, _, table = GOOD.partition("#loc1 =")
    one_line = ("#loc1 =" + table).replace("\n", " ").rstrip() + MANY_ALIASES
    text = (ops + one_line + "\n").replace("\n", line_end)
    code, out, _ = analyze(write(tmp_path, "one_line_table.mlir", text.encode()))
    _, plain, _ = analyze(write(tmp_path, "plain.mlir", GOOD))
    assert code == 0 and out["diagnostics"] == [] and allocas(out) == 3
    assert _reported(out) == _reported(plain)
    assert any(e["loc"]["file"] == "model.py" for s in out["spaces"] for e in s["live_at_peak"])


def test_a_lone_cr_dump_reads_its_table_in_linear_time(tmp_path):
    """As `test_pathological_lines_do_not_hang`: 100,000 definitions on the one line of a
    dump with lone CRs (4 MB), read in about a second; each definition searching the rest
    of the line again, as before, needs hours."""
    table = "".join(f' #loc{n} = loc("src/x.py":{n}:1)' for n in range(7, 100_007))
    ops, _, rest = GOOD.partition("#loc1 =")
    text = (ops + "#loc1 =" + rest).replace("\n", "\r") + table + "\r"
    write(tmp_path, "lone_cr.mlir", text.encode())
    done = subprocess.run([sys.executable, "-m", "sc_mlir.cli", "analyze", str(tmp_path),
                           "--format", "json", "--quiet", "--jobs", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert allocas(out) == 3 and out["diagnostics"] == []


def test_a_20_mb_line(tmp_path):
    line = '    "x.y"() {s = "' + "a{%" * 7_000_000 + '"} : () -> ()\n'
    text = GOOD.replace("    return\n", line + "    return\n")
    code, out, _ = analyze(write(tmp_path, "long.mlir", text))
    assert code == 0 and allocas(out) == 3 and out["diagnostics"] == []


def test_10000_deep_regions(tmp_path):
    depth = 10_000
    lines = ["func.func @deep() {"]
    lines += ['"tpu.region"() ({'] * depth
    lines.append("%a = memref.alloca() : memref<4xf32, 201>")
    lines += ["}) : () -> ()"] * depth
    lines += ["return", "}"]
    path = write(tmp_path, "deep.mlir", "\n".join(lines) + "\n")
    code, out, _ = analyze(path, "--allocations")
    assert code == 0 and allocas(out) == 1 and out["diagnostics"] == []
    assert out["allocations"][0]["scope_path"].count("/") == depth
    result = runner.invoke(app, ["allocas", str(path), "--format", "csv"])
    assert result.exit_code == 0 and result.exception is None


# Runs the CLI and, at exit, prints the process's own high-water RSS (VmHWM, of this
# program's memory only). A child's ru_maxrss would not do: Linux carries the peak of the
# memory a process replaced across exec, and a child spawned by pytest (vfork) starts from
# pytest's own peak.
_CLI_WITH_PEAK = """
import atexit, re, runpy, sys
def report() -> None:
    with open("/proc/self/status") as status:
        sys.stderr.write("peak-kib " + re.search(r"VmHWM:\\s*(\\d+)", status.read())[1] + "\\n")
atexit.register(report)
sys.argv = ["sc-mlir", *sys.argv[1:]]
runpy.run_module("sc_mlir.cli", run_name="__main__", alter_sys=True)
"""


def _peak_rss_mib(arguments: list[str]) -> tuple[int, str, float]:
    """Exit code, stdout and peak RSS (MiB) of `sc-mlir ARGUMENTS` in a process of its own."""
    done = subprocess.run([sys.executable, "-c", _CLI_WITH_PEAK, *arguments],
                          capture_output=True, text=True, timeout=300)
    peak = [line for line in done.stderr.splitlines() if line.startswith("peak-kib ")]
    assert peak, done.stderr
    return done.returncode, done.stdout, int(peak[-1].split()[1]) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(),
                    reason="/proc/self/status (a process's own peak RSS, Linux)")
def test_10000_deep_regions_in_linear_memory(tmp_path):
    # Before: every region of the chain kept its ancestors (the fast reader's frames, 400
    # MB) and every op its scope path (the records, 1 GB) for this 230 KB file.
    depth = 10_000
    lines = ["func.func @f() -> f32 {", *["scf.execute_region {"] * depth,
             "%a = memref.alloca() : memref<4xf32, 201>", *["}"] * depth, "}"]
    path = write(tmp_path, "deep.mlir", "\n".join(lines) + "\n")
    for extra in ([], ["--allocations"]):
        code, out, peak = _peak_rss_mib(["analyze", str(path), "--format", "json", "--quiet",
                                         "--jobs", "1", *extra])
        assert code == 0 and allocas(json.loads(out)) == 1
        assert peak < 200, f"{peak:.0f} MiB"
    found = json.loads(out)["allocations"][0]["scope_path"]
    assert found == "/".join(["func.func@f"] + ["scf.execute_region#0"] * depth)


@pytest.mark.skipif(not Path("/proc/self/status").exists(),
                    reason="/proc/self/status (a process's own peak RSS, Linux)")
def test_5000_allocas_live_at_once(tmp_path):
    # One func whose 5,000 allocas are all live together and cross the bound. Before: the
    # packing listed all 12.5 million pairs of them (1.1 GB), the fix tried every entry
    # with every other at each of its 500 slots (40 s; 20,000 allocas: 7.6 GB, minutes),
    # and every name was searched for over the whole body (quadratic).
    sizes = [1 + (k * 7919) % 64 for k in range(5_000)]
    lines = ["func.func @dense(%i: index, %f: f32) {"]
    lines += [f"  %b{k} = memref.alloca() : memref<{words}xf32, 201>"
              for k, words in enumerate(sizes)]
    lines += [f"  memref.store %f, %b{k}[%i] : memref<64xf32, 201>" for k in range(5_000)]
    path = write(tmp_path, "dense.mlir", "\n".join([*lines, "  return", "}"]) + "\n")
    code, out, peak = _peak_rss_mib(["analyze", str(path), "--format", "json", "--quiet",
                                     "--jobs", "1"])
    assert code == 1 and peak < 200, f"exit {code}, {peak:.0f} MiB"
    space = json.loads(out)["spaces"][0]
    excess = sum(sizes) - 131_071
    assert space["stack_peak_words"] == space["liveness_peak_words"] == sum(sizes)
    assert space["must_free_words"] == excess
    # The fewest allocas that cover the excess: the largest ones, counted here.
    largest_first = sorted(sizes, reverse=True)
    fewest = next(n for n in range(len(sizes)) if sum(largest_first[:n]) >= excess)
    fix = space["crossing"]["fix"]
    assert len(fix) == fewest and sum(step["free_words"] for step in fix) == excess


@pytest.mark.parametrize("opener, closer", [
    ('"tpu.region"() ({ ', '"tpu.yield"() : () -> () }) : () -> () '),
    ("scf.for %i = %c0 to %c8 step %c1 { ", "} "),
])
def test_10000_regions_nested_on_one_line(tmp_path, opener, closer):
    # Before: each op kept the rest of the line as its header (2,000 deep: 931 MB; 30,000:
    # killed at 12.9 GB; 10,000: several GB). Linear memory: tens of MB for this line.
    import tracemalloc

    from sc_mlir.read.scan import scan_file

    depth = 10_000
    line = ("    " + opener * depth + "%a = memref.alloca() : memref<4xf32, 201> "
            + closer * depth)
    path = write(tmp_path, "oneline.mlir", GOOD.replace("    return\n", line + "\n    return\n"))
    tracemalloc.start()
    try:
        scan = scan_file(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 60 * 1024 * 1024, f"{peak / 2**20:.0f} MiB"
    assert len(scan.allocas) == 4 and scan.diagnostics == []
    deepest = next(a for a in scan.allocas if a.results == ("%a",))
    assert len(deepest.frames) == 2 + depth
    code, out, _ = analyze(path, "--allocations")
    assert code == 0 and allocas(out) == 4
    by_name = {a["name"]: a for a in out["allocations"]}
    assert by_name["%a"]["scope_path"].count("/") == depth and by_name["%a"]["func"] == "f"


def test_huge_and_zero_sizes(tmp_path):
    text = GOOD.replace("memref<64xf32, 201>", "memref<9223372036854775807x3xf32, 201>") \
               .replace("memref<128xi32, 201>", "memref<0xi32, 201>")
    path = write(tmp_path, "sizes.mlir", text)
    code, out, _ = analyze(path, "--allocations", "--html", str(tmp_path / "r.html"))
    assert code == 1 and allocas(out) == 3
    words = {a["name"]: a["words"] for a in out["allocations"]}
    assert words == {"%0": 9223372036854775807 * 3, "%1": 0, "%2": 256}
    assert all(a["offset"] >= 0 and a["upper_bound"] >= a["offset"] for a in out["allocations"])
    from sc_mlir import load

    frame = load(path).allocations
    assert frame.set_index("name").loc["%0", "words"] == 9223372036854775807 * 3
    assert frame.set_index("name").loc["%2", "words"] == 256


def test_sizes_beyond_any_float_or_printable_integer(tmp_path):
    # 30 dims of 10^9 f32: 10^270 words exactly (beyond int64, within a float). 600 dims:
    # 5,400 digits, more than Python prints; read with its size unknown, and said so.
    exact = "memref<" + "1000000000x" * 30 + "f32, 201>"
    huge = "memref<" + "1000000000x" * 600 + "f32, 201>"
    text = GOOD.replace("memref<64xf32, 201>", exact).replace("memref<128xi32, 201>", huge)
    path = write(tmp_path, "huge.mlir", text)
    code, out, _ = analyze(path, "--allocations", "--html", str(tmp_path / "r.html"))
    assert code == 1 and allocas(out) == 3
    words = {a["name"]: a["words"] for a in out["allocations"]}
    assert words == {"%0": 10**270, "%1": None, "%2": 256}
    assert [(n[0], n[2]) for n in notes(out)] == [
        (4, "memref.alloca size too large to count (more than 2^900 elements); read with "
            "its size unknown")]
    for command in (["allocas", str(path)], ["allocas", str(path), "--format", "json"],
                    ["analyze", str(path)], ["analyze", str(path), "--format", "csv"],
                    ["diff", str(path), str(path)]):
        result = runner.invoke(app, command)
        assert result.exception is None or isinstance(result.exception, SystemExit), command
        assert result.exit_code in (0, 1), command
    # One such alloca does not cost its directory.
    directory = tmp_path / "dir"
    directory.mkdir()
    write(directory, "a.mlir", text)
    write(directory, "b.mlir", GOOD)
    code, out, _ = analyze(directory)
    assert allocas(out) == 6


def test_a_dimension_beyond_64_bits_is_skipped_with_a_note(tmp_path):
    text = GOOD.replace("memref<64xf32, 201>", "memref<" + "9" * 5000 + "xf32, 201>")
    _, out, _ = analyze(write(tmp_path, "dim.mlir", text))
    assert allocas(out) == 2 and out["skipped_allocas"] == 1
    assert "does not fit in 64 bits" in notes(out)[0][2]


def test_a_file_cut_right_after_an_alias_name_says_where_it_ends(tmp_path):
    text = GOOD[: GOOD.index("#loc6 =") + len("#loc6 =")]
    _, out, _ = analyze(write(tmp_path, "cut.mlir", text))
    assert allocas(out) == 3
    assert (19, 8, "the file ends after '#loc6 =': the alias has no value") in [
        n[:3] for n in notes(out)]


def test_a_value_on_the_line_after_its_alias_name_is_read():
    from sc_mlir.read.scan import scan_text

    scan = scan_text('#loc1 =\n  loc("a.py":1:2)\nmodule {\n}\n')
    assert scan.chunks[0].aliases == {"#loc1": 'loc("a.py":1:2)'} and scan.diagnostics == []


def test_notes_are_capped_per_kind_and_the_rest_counted(tmp_path):
    text = GOOD.replace("    return\n", "    return\n" + "}" * 500_000 + "\n", 1)
    _, out, _ = analyze(write(tmp_path, "braces.mlir", text))
    assert allocas(out) == 3
    closes = [n for n in notes(out) if n[2] == "'}' closes nothing that is open; ignored"]
    assert len(closes) == 20
    assert any(n[2] == "499980 more note(s) like: '}' closes nothing that is open; ignored "
               "(not listed)" for n in notes(out))
    assert len(out["diagnostics"]) < 30


def test_duplicate_self_and_missing_location_aliases(tmp_path):
    text = GOOD + '#loc1 = loc("other.py":99:9)\n'
    code, out, _ = analyze(write(tmp_path, "dup.mlir", text))
    assert (20, 1, "alias #loc1 is defined again; this definition is ignored (the first one "
            "is used)", '#loc1 = loc("other.py":99:9)') in notes(out)
    broken = GOOD.replace('#loc2 = loc("op_a"(#loc1))', '#loc2 = loc("op_a"(#loc2))') \
                 .replace('#loc1 = loc("model.py":10:3)', "#loc1 = loc(#loc99)")
    code, out, _ = analyze(write(tmp_path, "loops.mlir", broken), "--bound", "201=100")
    assert code == 1 and allocas(out) == 3
    problems = [p for space in out["spaces"] for c in space["crossing"]["contributors"]
                for p in c["loc"].get("problems", [])]
    assert "location alias #loc99 is not defined" in problems
    assert "location alias #loc2 refers to itself" in problems


def test_a_directory_of_bad_entries_still_reads_the_good_file(tmp_path):
    dump = tmp_path / "dump"
    dump.mkdir()
    write(dump, "good.mlir", GOOD)
    os.mkfifo(dump / "fifo.mlir")
    os.symlink(dump / "loop_a", dump / "loop_b")
    os.symlink(dump / "loop_b", dump / "loop_a")
    with open(dump / "sparse.mlir", "wb") as handle:
        handle.truncate(2 << 30)  # 2 GB of holes: read only as far as the sniffer looks
    write(dump, "empty.mlir", "")
    code, out, _ = analyze(dump)
    assert code == 0 and allocas(out) == 3
    skipped = {Path(d["file"]).name: d["message"] for d in out["diagnostics"]}
    assert skipped["fifo.mlir"] == "file skipped: not a regular file (FIFO, socket or device)"
    assert skipped["loop_a"].startswith("file skipped: cannot read: Too many levels")
    assert skipped["sparse.mlir"] == "file skipped: binary file (NUL bytes)"
    assert skipped["empty.mlir"] == "file skipped: empty file"


def test_an_archive_of_dumps_beside_them_is_not_read_again(tmp_path):
    # A tar holds its files' text between blocks of NULs: read as MLIR, every func of the
    # dump would be counted twice (a review caught it when blocks of NULs were read).
    dump = tmp_path / "dump"
    dump.mkdir()
    write(dump, "good.mlir", GOOD)
    with tarfile.open(tmp_path / "backup.tar", "w") as archive:
        archive.add(dump / "good.mlir", arcname="good.mlir")
    (tmp_path / "backup.tar").rename(dump / "backup.tar")
    code, out, _ = analyze(dump)
    assert code == 0 and allocas(out) == 3
    skipped = {Path(d["file"]).name: d["message"] for d in out["diagnostics"]}
    assert skipped == {"backup.tar": "file skipped: binary file (NUL bytes)"}


def test_an_unreadable_file_is_a_note(tmp_path, monkeypatch):
    dump = tmp_path / "dump"
    dump.mkdir()
    write(dump, "good.mlir", GOOD)
    secret = write(dump, "secret.mlir", GOOD)
    secret.chmod(0)
    if os.access(secret, os.R_OK):  # root reads anything: make the read itself fail
        import sc_mlir.read.discover as discover_module

        real = discover_module._read_head

        def refuse(path: str) -> bytes:
            if path.endswith("secret.mlir"):
                raise PermissionError(13, "Permission denied", path)
            return real(path)

        monkeypatch.setattr(discover_module, "_read_head", refuse)
    found, skipped = discover(dump)
    assert [Path(f).name for f in found] == ["good.mlir"]
    assert skipped[0].reason == "cannot read: Permission denied"
    code, out, _ = analyze(dump)
    assert code == 0 and allocas(out) == 3


PATHOLOGICAL = [
    '    "x.y"() {s = "' + "a{" * 300_000 + "\n",
    '    %1 = "x.y"() ' + "<{a = 1}>" * 60_000 + ' "\n',
    "    %1 = x.y " + "{" * 300_000 + "\n",
    "    " + "%a, " * 150_000 + "\n",
    "    a." + "a" * 600_000 + "\n",
    "// -----// IR Dump After " + " " * 600_000 + "x\n",
    "    %1 = memref.alloca() : memref<4x" + "vector<4x" * 30_000 + "f32" + ">" * 30_000
    + ", 201>\n",
    # An inline location of 50,000 parts (read without the grammar: `_inline_location`).
    '    %2 = memref.alloca() : memref<4xf32, 201> loc(fused[' + '"a.py":1:2, ' * 50_000
    + '"a.py":1:2])\n',
]


def test_pathological_lines_do_not_hang(tmp_path):
    """A guard against superlinear patterns: each line is ~0.6 MB, read in well under a
    second when linear; a quadratic pattern would need hours. bench/pathological.py prints
    the actual time per MB."""
    for index, line in enumerate(PATHOLOGICAL):
        write(tmp_path, f"case{index}.mlir", GOOD.replace("    return\n", line + "    return\n"))
    done = subprocess.run([sys.executable, "-m", "sc_mlir.cli", "analyze", str(tmp_path),
                           "--format", "json", "--quiet", "--jobs", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    out = json.loads(done.stdout)
    assert len({s["file"] for s in out["spaces"]}) == len(PATHOLOGICAL)


def test_no_escape_sequence_from_a_dump_reaches_the_terminal(tmp_path):
    evil = GOOD.replace("@f(", '@"f\x1b]0;pwned\x07\x1b[31m"(').replace(
        '"model.py":10:3', '"\x1b[2Jmodel.py":10:3')
    path = write(tmp_path, "evil.mlir", evil)
    for command in (["analyze", str(path), "--bound", "201=100"], ["allocas", str(path)]):
        result = runner.invoke(app, command, env={"COLUMNS": "200"})
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "\x1b]0;pwned" not in result.output and "\x1b[2J" not in result.output
        assert "\x07" not in result.output


def test_input_never_executes():
    """No eval or exec, no unpickling, no network in the package (the lark table cache is
    a pickle in a private directory: see syntax._private_cache_file)."""
    package = Path(__file__).resolve().parents[2] / "sc_mlir"
    forbidden = ("eval(", "exec(", "pickle.load", "import pickle", "import socket",
                 "urllib", "http.client", "requests")
    for source in package.rglob("*.py"):
        text = source.read_text()
        found = [word for word in forbidden if word in text]
        assert not found, f"{source.name}: {found}"
