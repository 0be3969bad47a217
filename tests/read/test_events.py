"""The fast reader (sc_mlir/read/events.py) against the careful line reader (sc_mlir/read/scan.py):
on every file the fast reader vouches for, the two give the same FileScan: the same
allocas (text, syntax, program point, frames, last use), frames, chunks, aliases,
diagnostics, line and op counts. Files it does not vouch for are the careful reader's."""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import pytest
from conftest import REPO, bench_generator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sc_mlir.model.allocation import build_allocations
from sc_mlir.model.dump import load
from sc_mlir.read import events
from sc_mlir.read.events import read_events, scan_bytes
from sc_mlir.read.scan import FileScan, OpFrame, scan_file, scan_text

CORPUS = REPO.parent / "shared" / "corpus"


GENERATOR = bench_generator()


def frame_key(frame: OpFrame | None) -> tuple | None:
    if frame is None:
        return None
    return (frame.name, frame.order, frame.line, frame.col, frame.header, frame.results,
            frame.sibling_index, frame.loop_like, frame.chunk, frame.top_index,
            frame.end_order, tuple(frame.trailer), frame.pending, frame.end_line,
            frame.first_line_chars, frame.entry_block, frame_key(frame.parent))


def scan_key(scan: FileScan) -> tuple:
    allocas = [(a.index, a.order, a.line, a.col, a.text_col, a.text, a.results,
                tuple(frame_key(f) for f in a.frames), a.chunk, a.syntax, a.size_constants,
                a.live_end, a.live_end_line) for a in scan.allocas]
    chunks = [(c.index, c.line, c.header, dict(c.aliases)) for c in scan.chunks]
    funcs = [frame_key(f) for f in scan.funcs]  # what scratch operands are read from
    return allocas, chunks, scan.diagnostics, scan.lines, scan.ops, funcs


def assert_same(fast: FileScan, careful: FileScan) -> None:
    fast_key, careful_key = scan_key(fast), scan_key(careful)
    for name, mine, theirs in zip(("allocas", "chunks", "diagnostics", "lines", "ops", "funcs"),
                                  fast_key, careful_key, strict=True):
        assert mine == theirs, name


def mlir_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix == ".mlir")


def generated(form: str, locs: str, size: int, seed: int, tmp_path: Path) -> Path:
    path = tmp_path / f"{form}_{locs}_{seed}.mlir"
    GENERATOR.write_module(path, form, size, seed, locs)
    return path


@pytest.mark.parametrize("path", mlir_files(REPO / "fixtures"), ids=lambda p: p.name)
def test_fixtures_read_alike(path: Path) -> None:
    fast = read_events(str(path))
    if fast is not None:
        assert_same(fast, scan_file(str(path)))


def test_the_sample_dump_is_read_fast() -> None:
    sample = REPO / "fixtures" / "sample" / "sparse_core"
    lookup = read_events(str(sample / "module_0007.sc_embedding_lookup_fwd.mlir"))
    assert lookup is not None and len(lookup.allocas) > 0
    # A dynamic size takes the value of the `arith.constant` in scope (%c512 = 512).
    update = read_events(str(sample / "module_0008.sc_embedding_update.mlir"))
    assert update is not None
    assert [a.size_constants for a in update.allocas if a.size_constants] == [(512,)]


def test_xla_pass_dumps_are_read_fast() -> None:
    # The files `--xla_sc_dump_mlir_to` writes end with blank lines after the `#loc` table,
    # and a func's line holds its arguments' locations (two strings and value names).
    dumps = sorted((REPO / "fixtures" / "passes" / "xla_named").glob("*.mlir"))
    assert dumps
    for path in dumps:
        assert path.read_bytes().endswith(b")\n\n\n")
        fast = read_events(str(path))
        assert fast is not None, path.name
        assert_same(fast, scan_file(str(path)))


@pytest.mark.parametrize("text", [
    # Escapes that leave the quotes where they are (MLIR prints `"` and `\` as \22, \5C).
    'module {\n  %a = memref.alloca() : memref<4xf32> loc("a\\0Ab\\22c":3:4)\n'
    '  "x.y"() {note = "line\\0A"} : () -> ()\n}\n',
    # A func's line with its arguments' locations: strings beside value names.
    'module {\n  func.func @f(%x: index loc("a.py":1:2), %y: index loc("a.py":1:9)) {\n'
    '    %a = memref.alloca(%x) : memref<?xf32, 201> loc("a.py":2:3)\n'
    '    "x.use"(%a, %y) : (memref<?xf32, 201>, index) -> ()\n    return\n  }\n}\n',
])
def test_shapes_the_fast_reader_reads(text: str) -> None:
    fast = scan_bytes(text.encode())
    assert fast is not None
    assert_same(fast, scan_text(text))


def test_size_operands_take_the_constant_in_scope() -> None:
    text = """module {
  func.func @k(%n: index) {
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %a = memref.alloca(%c4) : memref<?xf32, 201>
    scf.for %i = %c4 to %c8 step %c4 {
      %c4 = arith.addi %i, %i : index
      %b = memref.alloca(%c4) : memref<?xf32, 201>
      %c = memref.alloca(%c8) : memref<?xf32, 201>
    }
    "tpu.region"() ({
      %c16 = arith.constant 16 : index
      "tpu.yield"() : () -> ()
    }) : () -> ()
    %d = memref.alloca(%c16) : memref<?xf32, 201>
    %e = memref.alloca(%n) : memref<?xf32, 201>
    return
  }
}
"""
    fast = scan_bytes(text.encode())
    assert fast is not None
    assert_same(fast, scan_text(text))
    # %b's size is an addi (no constant), %d's constant was in a region already closed.
    assert [a.size_constants for a in fast.allocas] == [(4,), (None,), (8,), (None,), (None,)]


def test_corpus_reads_alike() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"no corpus at {CORPUS}")
    vouched = 0
    files = mlir_files(CORPUS)
    for path in files:
        fast = read_events(str(path))
        if fast is not None:
            vouched += 1
            assert_same(fast, scan_file(str(path)))
    mosaic = mlir_files(CORPUS / "mosaic")
    # Every Pallas/Mosaic dump of the corpus is read fast (upstream test files are mostly
    # `// -----` splits and CHECK comments: the careful reader's).
    assert mosaic and all(read_events(str(p)) is not None for p in mosaic)
    assert vouched >= len(mosaic)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(form=st.sampled_from(["generic", "pretty"]), locs=st.sampled_from(["simple", "xla"]),
       seed=st.integers(0, 10_000), size=st.integers(2_000, 40_000))
def test_generated_modules_read_alike(tmp_path, form, locs, seed, size) -> None:
    path = generated(form, locs, size, seed, tmp_path)
    fast = read_events(str(path))
    assert fast is not None  # the generator's shapes are all ones the fast reader vouches for
    careful = scan_file(str(path))
    assert_same(fast, careful)
    assert len(fast.allocas) == sum(1 for line in path.read_text().splitlines()
                                    if "memref.alloca" in line)


def _mutate(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    at = rng.randrange(len(lines))
    kind = rng.randrange(9)
    if kind == 0:
        del lines[at]
    elif kind == 1:
        lines.insert(at, lines[rng.randrange(len(lines))])
    elif kind == 2:
        lines.insert(at, rng.choice(["}", "{", "  // a comment {", "", "  ^bb1:", ")", "#x = 1"]))
    elif kind == 3:
        lines[at] = lines[at] + rng.choice([" // memref.alloca", " {", "(", ",", " \"%0\""])
    elif kind == 4:
        cut = rng.randrange(max(len(text), 1))
        return text[:cut]
    elif kind == 5:
        lines[at] = lines[at].replace("%", "%x", 1)
    elif kind == 6:
        lines.insert(at, "  %99 = memref.subview %7[0] [4] [1] : memref<16xf32> to memref<4xf32>")
    elif kind == 7:
        lines[at] = lines[at].replace("loc(", "loc(\"a{b\"", 1)
    else:
        lines.insert(at, "  scf.yield %7 : memref<16xf32>")
    return "\n".join(lines)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(form=st.sampled_from(["generic", "pretty"]), locs=st.sampled_from(["simple", "xla"]),
       seed=st.integers(0, 10_000), mutations=st.integers(1, 4))
def test_damaged_modules_are_read_alike_or_declined(tmp_path, form, locs, seed, mutations):
    path = generated(form, locs, 6_000, seed, tmp_path)
    rng = random.Random(seed)
    text = path.read_text()
    for _ in range(mutations):
        text = _mutate(text, rng)
    fast = scan_bytes(text.encode(), "damaged.mlir")
    if fast is not None:
        assert_same(fast, scan_text(text, "damaged.mlir"))


def test_views_yields_and_loops_are_followed() -> None:
    text = """module {
  func.func @k(%arg0: memref<64xf32, 203>) {
    %c0 = arith.constant 0 : index
    %a = memref.alloca() : memref<16xf32, 201>
    %b = memref.alloca() : memref<16xf32, 201>
    %v = memref.subview %a[0] [4] [1] : memref<16xf32, 201> to memref<4xf32, 201>
    %r = scf.if %cond -> (memref<16xf32, 201>) {
      scf.yield %b : memref<16xf32, 201>
    } else {
      scf.yield %b : memref<16xf32, 201>
    }
    scf.for %i = %c0 to %c0 step %c0 {
      %x = memref.load %v[%c0] : memref<4xf32, 201>
      "tpu.region"() ({
        %y = memref.load %v[%c0] : memref<4xf32, 201>
        "tpu.yield"() : () -> ()
      }) : () -> ()
    }
    %z = memref.load %r[%c0] : memref<16xf32, 201>
    return
  }
}
"""
    fast = scan_bytes(text.encode())
    assert fast is not None
    careful = scan_text(text)
    assert_same(fast, careful)
    by_name = {a.results[0]: a for a in fast.allocas}
    # %a through %v, used in the loop: live to the loop's end (its last op, line 16);
    # %b through %r (yielded by scf.if), last used at line 19.
    assert by_name["%a"].live_end_line == 16
    assert by_name["%b"].live_end_line == 19


def test_location_table_is_read_by_position() -> None:
    text = ('module {\n  %a = memref.alloca() : memref<4xf32> loc(#loc7)\n} loc(#loc)\n'
            '#loc = loc(unknown)\n#loc3 = loc("a.py":1:2)\n#loc7 = loc("b"(#loc3))\n'
            '#loc12 = loc(fused[#loc3, #loc7])\n')
    fast = scan_bytes(text.encode())
    assert fast is not None
    table = fast.chunks[0].aliases
    assert dict(table) == scan_text(text).chunks[0].aliases
    assert table["#loc12"] == "loc(fused[#loc3, #loc7])" and "#loc4" not in table
    assert dict(pickle.loads(pickle.dumps(table))) == dict(table)
    records, _ = build_allocations(fast)
    assert (records[0].loc.file, records[0].loc.line, records[0].loc.names) == ("a.py", 1, ("b",))


@pytest.mark.parametrize("text", [
    'module {\n  %a = memref.alloca() : memref<4xf32> // note\n}\n',
    'module {\n  %a = memref.alloca() : memref<4xf32>\n',
    'module {\n  %a = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> memref<4xf3\n}\n',
    'module {\n// -----\n  %a = memref.alloca() : memref<4xf32>\n}\n',
    'module {\n  %a = memref.alloca() : memref<4xf32>\n}\n#loc2 = loc("a":1:1)\n#loc1 = loc("b":1:1)\n',
    # Found by a fuzz campaign: an op after a region's end on its line, generic and pretty
    # (the careful reader counts it, and reads the view it makes)...
    'module {\n  %a = memref.alloca() : memref<4xf32>\n  "scf.if"(%c) ({\n  }) : (i1) -> ()'
    ' %v = "x.view"(%a) : (memref<4xf32>) -> memref<4xf32>\n  "x.use"(%v) : (memref<4xf32>) -> ()\n}\n',
    'module {\n  %a = memref.alloca() : memref<4xf32>\n  scf.if %c {\n    "x.y"() : () -> ()\n'
    '  } "x.use"(%a) : (memref<4xf32>) -> ()\n}\n',
    # ...two ops on a line, the second using an alloca...
    'module {\n  %a = memref.alloca() : memref<4xf32>\n  "x.y"() : () -> ()  %v = "x.view"(%a)'
    ' : (memref<4xf32>) -> memref<4xf32>\n  "x.use"(%v) : (memref<4xf32>) -> ()\n}\n',
    # ...and alias numbers with a leading zero (`#loc01` is not `#loc1`).
    'module {\n  %a = memref.alloca() : memref<4xf32> loc(#loc01)\n}\n#loc01 = loc("a":1:1)\n',
    'module {\n  %a = memref.alloca() : memref<4xf32> loc(#loc1)\n}\n#loc = loc("a":1:1)\n'
    '#loc00 = loc("b":1:1)\n#loc1 = loc("c":1:1)\n',
    # A table number no 64-bit int holds (the table's numbers are an array of them).
    'module {\n  %a = memref.alloca() : memref<4xf32> loc(#loc1)\n}\n#loc0 = loc("a":1:1)\n'
    '#loc1 = loc("b":2:2)\n#loc99999999999999999999 = loc("c":3:3)\n',
    'module {\n  %a = memref.alloca() : memref<4xf32>\x00\n}\n',
    'module {\n  %a = memref.alloca() : memref<4xf32, "\\"">\n}\n',
    'module {\n  %a = memref.alloca() : memref<4xf32> loc("a\\\\":1:1)\n}\n',
    # A value name in a string on a region op's line (its uses may be in the strings).
    'module {\n  %a = memref.alloca() : memref<4xf32>\n'
    '  "x.loop"() ({\n  }) : () -> () loc("%a":1:1)\n}\n',
    # An op before the first block label: a region with several blocks.
    'module {\n  "scf.for"(%c) ({\n    %v = arith.addi %c, %c : index\n  ^bb0(%i: index):\n'
    '    %a = memref.alloca() : memref<4xf32>\n  }) : (index) -> ()\n}\n',
])
def test_shapes_left_to_the_careful_reader(text: str) -> None:
    assert scan_bytes(text.encode()) is None


def test_a_location_number_past_64_bits_is_read_carefully(tmp_path) -> None:
    # The fast reader raised OverflowError on it, and the file was skipped as a bug.
    path = tmp_path / "big.mlir"
    path.write_text('module {\n  %a = memref.alloca() : memref<4xf32> loc(#loc1)\n}\n'
                    '#loc0 = loc("a":1:1)\n#loc1 = loc("b":2:2)\n'
                    '#loc99999999999999999999 = loc("c":3:3)\n')
    dump = load(path)
    assert not dump.diagnostics
    (record,) = dump.records
    assert (record.name, record.loc.file, record.loc.line) == ("%a", "b", 2)


def test_load_reads_fast_and_alike(tmp_path, monkeypatch) -> None:
    path = generated("generic", "xla", 60_000, 3, tmp_path)
    fast = load(path)
    monkeypatch.setattr(events, "scan_bytes", lambda *args: None)
    careful = load(path)
    assert fast.allocations.equals(careful.allocations)
    assert fast.diagnostics == careful.diagnostics


class _ModuleBuilder:
    """Random well-formed modules with what the generator lacks: views, values yielded out
    of `scf.if` and loops, names reused in sibling regions, comments and blank lines."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[str] = []
        self.count = 0

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"%{stem}{self.count}"

    def block(self, indent: int, depth: int, visible: list[str]) -> None:
        rng, pad = self.rng, "  " * indent
        local = list(visible)
        for _ in range(rng.randint(1, 6)):
            roll = rng.random()
            if roll < 0.2:
                # The same name in every sibling region, as MLIR prints `%alloca`.
                name = "%alloca" if rng.random() < 0.3 and depth else self.fresh("a")
                if name in local:
                    name = self.fresh("a")
                if rng.random() < 0.7:
                    self.lines.append(f"{pad}{name} = memref.alloca() : memref<16xf32, 201>")
                else:  # a size operand: a constant here, the func's %c0, or an addi
                    size = rng.choice(["%c0", self.fresh("s")])
                    if size != "%c0":
                        op = rng.choice(["arith.constant 7 : index", "arith.addi %c0, %c0 : index"])
                        self.lines.append(f"{pad}{size} = {op}")
                    self.lines.append(f"{pad}{name} = memref.alloca({size}) : memref<?xf32, 201>")
                local.append(name)
            elif roll < 0.35 and local:
                view = self.fresh("v")
                source = rng.choice(local)
                op = rng.choice(["memref.subview", "tpu.memref_slice"])
                self.lines.append(f"{pad}{view} = {op} {source}[0] [4] [1] : "
                                  "memref<16xf32, 201> to memref<4xf32, 201>")
                local.append(view)
            elif roll < 0.55 and local:
                used = rng.choice(local)
                if rng.random() < 0.5:
                    self.lines.append(f"{pad}memref.store %f, {used}[%c0] : memref<16xf32, 201>")
                else:
                    self.lines.append(f'{pad}"tpu.enqueue_dma"({used}) : (memref<16xf32, 201>) -> ()')
            elif roll < 0.62:
                self.lines.append(rng.choice([f"{pad}// a note {{", "", f"{pad}%x{self.count} = "
                                              "arith.addi %c0, %c0 : index"]))
                self.count += 1
            elif depth < 3:
                self.region(indent, depth, local)
        if local and rng.random() < 0.3:
            self.lines.append(f"{pad}memref.store %f, {rng.choice(local)}[%c0] : "
                              "memref<16xf32, 201>")

    def region(self, indent: int, depth: int, local: list[str]) -> None:
        rng, pad = self.rng, "  " * indent
        kind = rng.choice(["for", "if", "tpu", "if_result"])
        if kind == "for":
            self.lines.append(f"{pad}scf.for %i{self.count} = %c0 to %c8 step %c1 {{")
            self.count += 1
            self.block(indent + 1, depth + 1, local)
            self.lines.append(f"{pad}}}")
        elif kind == "if":
            self.lines.append(f"{pad}scf.if %cond {{")
            self.block(indent + 1, depth + 1, local)
            self.lines.append(f"{pad}}} else {{")
            self.block(indent + 1, depth + 1, local)
            self.lines.append(f"{pad}}}")
        elif kind == "tpu":
            self.lines.append(f'{pad}"tpu.region"() ({{')
            self.block(indent + 1, depth + 1, local)
            self.lines.append(f'{pad}  "tpu.yield"() : () -> ()')
            self.lines.append(f"{pad}}}) : () -> ()")
        elif local:
            result = self.fresh("r")
            self.lines.append(f"{pad}{result} = scf.if %cond -> (memref<16xf32, 201>) {{")
            self.block(indent + 1, depth + 1, local)
            self.lines.append(f"{pad}  scf.yield {rng.choice(local)} : memref<16xf32, 201>")
            self.lines.append(f"{pad}}} else {{")
            self.lines.append(f"{pad}  scf.yield {rng.choice(local)} : memref<16xf32, 201>")
            self.lines.append(f"{pad}}}")
            local.append(result)

    def module(self) -> str:
        self.lines = ["module {"]
        for number in range(self.rng.randint(1, 3)):
            self.lines.append(f"  func.func @k{number}(%f: f32, %cond: i1) {{")
            self.lines.append("    %c0 = arith.constant 0 : index")
            self.block(2, 0, [])
            self.lines.append("    return")
            self.lines.append("  }")
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 1 << 30))
def test_views_yields_and_reused_names_read_alike(seed: int) -> None:
    text = _ModuleBuilder(random.Random(seed)).module()
    fast = scan_bytes(text.encode())
    assert fast is not None  # well-formed, in shapes the fast reader vouches for
    assert_same(fast, scan_text(text))


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 1 << 30), mutations=st.integers(1, 3))
def test_damaged_views_and_yields_are_read_alike_or_declined(seed: int, mutations: int) -> None:
    rng = random.Random(seed)
    text = _ModuleBuilder(rng).module()
    for _ in range(mutations):
        text = _mutate(text, rng)
    fast = scan_bytes(text.encode())
    if fast is not None:
        assert_same(fast, scan_text(text))


def test_bytes_reported_by_a_reader_that_gives_up_are_taken_back():
    """The careful reader reports the file's bytes again: the fast reader's must not count
    twice (a progress bar would reach the end early)."""
    from sc_mlir.read.events import PROGRESS_BYTES, scan_bytes

    func = "func.func @f{i}() {{\n  %a = memref.alloca() : memref<4xf32, 201>\n  return\n}}\n"
    body = "".join(func.format(i=i) for i in range(2 * PROGRESS_BYTES // len(func) + 10))
    # A second block in the last func's region: a shape the fast reader declines, at the end.
    text = body + "func.func @g() {\n  return\n^bb1:\n  return\n}\n"
    told: list[int] = []
    assert scan_bytes(text.encode(), "x.mlir", on_bytes=told.append) is None
    assert any(n > 0 for n in told) and sum(told) == 0
    told.clear()
    assert scan_bytes(body.encode(), "x.mlir", on_bytes=told.append) is not None
    assert sum(told) == len(body) and len(told) >= 2


def test_a_file_without_a_final_newline_reports_its_own_size():
    """The reader reads such a text with a newline added: the byte added is not the
    file's (a progress bar would go past its total)."""
    from sc_mlir.read.events import scan_bytes

    text = b"func.func @f() {\n  %a = memref.alloca() : memref<4xf32, 201>\n  return\n}"
    told: list[int] = []
    scan = scan_bytes(text, "x.mlir", on_bytes=told.append)
    assert scan is not None and len(scan.allocas) == 1
    assert sum(told) == len(text)


@pytest.mark.parametrize("block", [1, 40, 333])
def test_location_table_read_a_block_at_a_time(tmp_path, monkeypatch, block: int) -> None:
    """The table is checked and numbered a block of lines at a time (8 MB; here tiny): the
    same table, the same answers, whatever the blocks."""
    monkeypatch.setattr(events, "_TABLE_BLOCK", block)
    for seed, locs in [(1, "xla"), (2, "simple")]:
        path = generated("generic", locs, 40_000, seed, tmp_path)
        fast = read_events(str(path))
        assert fast is not None
        assert_same(fast, scan_file(str(path)))
    text = ('module {\n  %a = memref.alloca() : memref<4xf32> loc(#loc7)\n} loc(#loc)\n'
            '#loc = loc(unknown)\n#loc3 = loc("a.py":1:2)\n#loc7 = loc("b"(#loc3))\n'
            '#loc12 = loc(fused[#loc3, #loc7])\n\n\n')
    fast = scan_bytes(text.encode())
    assert fast is not None and dict(fast.chunks[0].aliases) == scan_text(text).chunks[0].aliases
    for declined in ("#loc3 = loc(unknown)\n#loc = loc(unknown)\n",  # `#loc` after numbers
                     "#loc3 = loc(unknown)\n%b = memref.alloca() : memref<4xf32>\n",
                     "#loc3 = loc(unknown)\n\n#loc4 = loc(unknown)\n"):
        text = 'module {\n  %a = memref.alloca() : memref<4xf32> loc(#loc3)\n}\n' + declined
        assert scan_bytes(text.encode()) is None, declined
