"""The fast reader's liveness (sc_mlir/read/event_uses.py): its first pass passes over the
lines a class of the text before their first use shows to be plain ops that make no view;
every other line, and every last use, is read as the line reader reads it. These tests
hold the first pass to the line-by-line path it stands in for (`_prefix_class` made to
class nothing, so that every line is read by `_plain_inert` and `_use_line`), and both to
the careful reader."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from test_events import GENERATOR, _ModuleBuilder, assert_same, scan_key

from sc_mlir.read import event_uses
from sc_mlir.read.events import scan_bytes
from sc_mlir.read.scan import FileScan, scan_text

# Lines that use a value in the shapes the first pass must tell apart: views and yields
# (which make names to follow), terminators, strings holding value names or a
# terminator's word, a use among the results, an op that opens a region, an allocation,
# a comment, tabs, ops without results holding strings besides their name.
_USE_SHAPES = (
    '"foo.bar"({n}) {{note = "%x yield"}} : (memref<4xf32>) -> ()',
    '"foo.bar"({n}) {{note = "%x"}} : (memref<4xf32>) -> ()',
    '"foo.bar"({n}) {{note = "yield"}} : (memref<4xf32>) -> ()',
    '"foo.bar"({n}) : (memref<4xf32>) -> () loc("a%b.py":1:2)',
    '"foo.bar"({n}) : (memref<4xf32>) -> () loc("return.py":1:2)',
    '%q{k} = "memref.load"({n}, %c) : (memref<4xf32>, index) -> f32 loc("a%b.py":1:2)',
    '%q{k} = "memref.load"({n}) {{s = "{n}"}} : (memref<4xf32>) -> f32',
    '{n} = "memref.load"(%c) : (memref<4xf32>) -> f32',
    '%q{k}, {n} = "memref.load"(%c) : (memref<4xf32>) -> f32',
    '%q{k} = "memref.subview"({n}) : (memref<4xf32>) -> memref<2xf32>',
    '%q{k} = "foo.op"({n}) : (memref<4xf32>) -> memref<2xf32>',
    '%q{k} = "foo.op"({n}) : (memref<4xf32>) -> f32',
    '"scf.yield"({n}) : (memref<4xf32>) -> ()',
    "scf.yield {n} : memref<4xf32>",
    'memref.store %f, {n}[%c0] : memref<16xf32> loc("x.py":1:2)',
    "memref.store %f, {n}[%c0] : memref<16xf32>",
    "%q{k} = memref.load {n}[%c0] : memref<16xf32>",
    '"foo.yield_like"({n}) : (memref<4xf32>) -> ()',
    "foo.returner {n} : memref<4xf32>",
    '%q{k} = "memref.alloca"({n}) : (index) -> memref<?xf32>',
    '"tpu.wait_dma2"({n}) ({{',
    "// {n} yield",
    "foo.bar {n} {{",
    '%q{k} = "memref.load"{n} : f32',
    '\t"memref.store"(%f, {n}) : (f32, memref<4xf32>) -> ()',
    '%q{k} = "memref.load"({n}) : (memref<4xf32>) -> f32 {{',
    '"memref.store"(%f, {n}) <{{a = "%"}}> : (f32, memref<4xf32>) -> ()',
    '%q{k} = "memref.dim"({n}) : (memref<4xf32>) -> index loc("y.py":3:4)',
    '"scf.condition"(%t, {n}) : (i1, memref<4xf32>) -> ()',
    '"func.return"({n}) : (memref<4xf32>) -> ()',
    '"" ({n})',
    '%q{k} = "tpu.memref_slice"({n}) : (memref<4xf32>) -> memref<2xf32> loc("s%.py":1:1)',
)


def _with_uses(text: str, rng: random.Random) -> str:
    """`text` with a few lines using its value names, in the shapes above."""
    lines = text.split("\n")
    names = re.findall(r"%[A-Za-z_0-9]+", text)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(1, max(2, len(lines) - 1))
        pad = re.match(r"[ \t]*", lines[at]).group(0)  # type: ignore[union-attr]
        shape = rng.choice(_USE_SHAPES)
        lines.insert(at, pad + shape.format(n=rng.choice(names), k=rng.randrange(1000)))
    return "\n".join(lines)


def _line_by_line(monkeypatch: pytest.MonkeyPatch, text: str) -> FileScan | None:
    """The fast reader with its first pass classing no line."""
    with monkeypatch.context() as patch:
        patch.setattr(event_uses, "_prefix_class",
                      lambda prefix, no_view_ops: event_uses._NOT_PLAIN_OP)
        patch.setattr(event_uses, "_PREFIX_CLASSES", {})
        return scan_bytes(text.encode())


def _assert_read_alike(monkeypatch: pytest.MonkeyPatch, text: str) -> bool:
    fast = scan_bytes(text.encode())
    slow = _line_by_line(monkeypatch, text)
    assert (fast is None) == (slow is None)
    if fast is None or slow is None:
        return False
    assert scan_key(fast) == scan_key(slow)
    assert_same(fast, scan_text(text))
    return True


@pytest.mark.parametrize("seed", range(40))
def test_first_pass_reads_as_line_by_line(monkeypatch, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    form, locs = rng.choice(["generic", "pretty"]), rng.choice(["simple", "xla"])
    path = tmp_path / "generated.mlir"
    GENERATOR.write_module(path, form, rng.randint(2_000, 12_000), seed, locs)
    text = path.read_text()
    assert _assert_read_alike(monkeypatch, text)
    for _ in range(4):
        _assert_read_alike(monkeypatch, _with_uses(text, rng))
    _assert_read_alike(monkeypatch, _with_uses(_ModuleBuilder(rng).module(), rng))


_GENERIC = """"builtin.module"() ({
  "func.func"() <{function_type = (memref<64xf32, 203>) -> (), sym_name = "k"}> ({
  ^bb0(%arg0: memref<64xf32, 203>, %cond: i1, %f: f32):
    %c0 = "arith.constant"() <{value = 0 : index}> : () -> index
    %a = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> memref<16xf32, 201>
    %b = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> memref<16xf32, 201>
    %c = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> memref<16xf32, 201>
    %v = "memref.subview"(%a) : (memref<16xf32, 201>) -> memref<4xf32, 201>
    %r = "scf.if"(%cond) ({
      "scf.yield"(%b) : (memref<16xf32, 201>) -> ()
    }, {
      "scf.yield"(%b) : (memref<16xf32, 201>) -> ()
    }) : (i1) -> memref<16xf32, 201>
    "scf.for"(%c0, %c0, %c0) ({
    ^bb0(%i: index):
      "memref.store"(%f, %c, %c0) : (f32, memref<16xf32, 201>, index) -> () loc("a.py":1:2)
      %x = "memref.load"(%v, %c0) : (memref<4xf32, 201>, index) -> f32
      "tpu.region"() ({
        %y = "memref.load"(%v, %c0) : (memref<4xf32, 201>, index) -> f32
        "tpu.yield"() : () -> ()
      }) : () -> ()
      %w = "arith.addi"(%c0, %c0) : (index, index) -> index
      "scf.yield"() : () -> ()
    }) : (index, index, index) -> ()
    %z = "memref.load"(%r, %c0) : (memref<16xf32, 201>, index) -> f32
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
"""


def test_generic_views_yields_and_loops_are_followed(monkeypatch) -> None:
    assert _assert_read_alike(monkeypatch, _GENERIC)
    fast = scan_bytes(_GENERIC.encode())
    assert fast is not None
    by_name = {a.results[0]: a for a in fast.allocas}
    # %a through the view %v, last used in the loop: live to the loop's end (its last op,
    # line 23); %c, used only in the loop, likewise; %b through %r (yielded by scf.if),
    # last used at line 25.
    assert by_name["%a"].live_end_line == 23
    assert by_name["%c"].live_end_line == 23
    assert by_name["%b"].live_end_line == 25


def _module_using(use: str, then_used: bool) -> str:
    later = '    "memref.store"(%f, %a, %c0) : (f32, memref<16xf32, 201>, index) -> ()\n'
    return ('"builtin.module"() ({\n'
            '  %a = "memref.alloca"() : () -> memref<16xf32, 201>\n'
            f"  {use}\n" + (later if then_used else "") + "}) : () -> ()\n")


@pytest.mark.parametrize(("use", "then_used", "read"), [
    # No results, a string holding a value name: declined when a terminator's word is
    # on the line or it is the last use (the line reader reads those lines); passed over
    # otherwise, as before.
    ('"foo.bar"(%a) {note = "%x yield"} : (memref<16xf32, 201>) -> ()', True, False),
    ('"foo.bar"(%a) {note = "%x"} : (memref<16xf32, 201>) -> ()', True, True),
    ('"foo.bar"(%a) {note = "%x"} : (memref<16xf32, 201>) -> ()', False, False),
    # A name defined again among an op's results.
    ('%a = "memref.load"(%c0) : (index) -> f32', True, False),
    # A use on the line of an allocation.
    ('%s = "memref.alloca"(%a) : (memref<16xf32, 201>) -> memref<?xf32, 201>', True, False),
    # A load with an inline location: a plain op making no view.
    ('%x = "memref.load"(%a, %c0) : (memref<16xf32, 201>, index) -> f32 loc("a.py":1:2)',
     False, True),
])
def test_lines_declined_and_read_as_before(monkeypatch, use: str, then_used: bool,
                                           read: bool) -> None:
    text = _module_using(use, then_used)
    assert (scan_bytes(text.encode()) is not None) == read
    assert (_line_by_line(monkeypatch, text) is not None) == read


def test_name_finder_finds_what_find_finds() -> None:
    rng = random.Random(7)
    alphabet = ["%a", "%a1", "%a.b", "%1", "%12", "a", "1", " ", ",", "(", ")", "-", "$", "\n"]
    text = "".join(rng.choice(alphabet) for _ in range(5_000)).encode() + b"\n"
    name_bytes = event_uses._NAME_BYTES
    for name in ("%a", "%a1", "%1", "%12", "%a.b"):
        token = name.encode()
        expected = []
        at = text.find(token)
        while at >= 0:
            if text[at + len(token)] not in name_bytes:
                expected.append(at)
            at = text.find(token, at + 1)
        # The scope ends where a line starts (after a newline), as every scope does.
        end = text.rfind(b"\n", 0, len(text) // 2) + 1
        found = [m.start() for m in event_uses._uses_of(name)(text, 3, end)]
        assert found == [at for at in expected if at >= 3 and at + len(token) <= end]


def test_kept_finders_and_classes_do_not_change_the_reading(monkeypatch, tmp_path) -> None:
    path = tmp_path / "generated.mlir"
    GENERATOR.write_module(path, "generic", 8_000, 3, "xla")
    data = path.read_bytes()
    kept = scan_bytes(data)
    assert kept is not None
    monkeypatch.setattr(event_uses, "_FINDERS_KEPT", 1)  # cleared at every new name
    monkeypatch.setattr(event_uses, "_FINDERS", {})
    monkeypatch.setattr(event_uses, "_PREFIX_CLASSES", {})
    fresh = scan_bytes(data)
    assert fresh is not None
    assert scan_key(fresh) == scan_key(kept)


_SEVERAL_ON_A_LINE = """"builtin.module"() ({
  "func.func"() <{function_type = (memref<64xf32, 203>) -> (), sym_name = "k"}> ({
  ^bb0(%arg0: memref<64xf32, 203>, %cond: i1, %f: f32):
    %c0 = "arith.constant"() <{value = 0 : index}> : () -> index
    %a = "memref.alloca"() : () -> memref<16xf32, 201>
    %b = "memref.alloca"() : () -> memref<16xf32, 201>
    %c = "memref.alloca"() : () -> memref<16xf32, 201>
    %d = "memref.alloca"() : () -> memref<16xf32, 201>
    %v = "memref.subview"(%c) : (memref<16xf32, 201>) -> memref<4xf32, 201>
    %r = "scf.if"(%cond) ({
      "scf.yield"(%d) : (memref<16xf32, 201>) -> ()
    }, {
      "scf.yield"(%a) : (memref<16xf32, 201>) -> ()
    }) : (i1) -> memref<16xf32, 201>
    "scf.for"(%c0, %c0, %c0) ({
    ^bb0(%i: index):
      "tpu.enqueue_dma"(%a, %b, %a) : (memref<16xf32, 201>, memref<16xf32, 201>, memref<16xf32, 201>) -> ()
      "scf.yield"() : () -> ()
    }) : (index, index, index) -> ()
    "tpu.wait_dma2"(%v, %b, %r) : (memref<4xf32, 201>, memref<16xf32, 201>, memref<16xf32, 201>) -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
"""


def test_several_names_on_a_last_use_line(monkeypatch) -> None:
    """Lines that end several allocas' lives at once, through the same name twice, two
    names, a view and a value yielded from two allocas (each extended one by one)."""
    assert _assert_read_alike(monkeypatch, _SEVERAL_ON_A_LINE)
    fast = scan_bytes(_SEVERAL_ON_A_LINE.encode())
    assert fast is not None
    lines = {a.results[0]: a.live_end_line for a in fast.allocas}
    # %a's loop use is not its last: %r (yielded from %a and %d) is used at line 20, with
    # %b and the view of %c.
    assert lines == {"%a": 20, "%b": 20, "%c": 20, "%d": 20}


def test_several_names_in_a_loop_last_to_its_end(monkeypatch) -> None:
    text = _SEVERAL_ON_A_LINE.replace(
        '    "tpu.wait_dma2"(%v, %b, %r) : (memref<4xf32, 201>, memref<16xf32, 201>, '
        'memref<16xf32, 201>) -> ()\n', "")
    assert _assert_read_alike(monkeypatch, text)
    fast = scan_bytes(text.encode())
    assert fast is not None
    lines = {a.results[0]: a.live_end_line for a in fast.allocas}
    # %a and %b, last used twice and once on one line in the loop: to the loop's last op
    # (line 18); %c and %d, through a view and a yield never used, at their makers.
    assert lines["%a"] == lines["%b"] == 18


_ON_EVENT_LINES = """"builtin.module"() ({
  "func.func"() <{function_type = () -> (), sym_name = "k"}> ({
    %c0 = "arith.constant"() <{value = 0 : index}> : () -> index
    %a = "memref.alloca"() : () -> memref<16xf32, 201>
    %b = "memref.alloca"() : () -> memref<16xf32, 201>
    %c = "memref.alloca"() : () -> memref<16xf32, 201>
    "scf.for"(%c0, %c0, %c0, %a) ({
    ^bb0(%i: index, %t: memref<16xf32, 201>):
      %x = "memref.load"(%b, %c0) : (memref<16xf32, 201>, index) -> f32
      "scf.yield"(%t) : (memref<16xf32, 201>) -> ()
    }) : (index, index, index, memref<16xf32, 201>) -> memref<16xf32, 201>
    "memref.store"(%f, %c, %c0) : (f32, memref<16xf32, 201>, index) -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
"""


def test_last_uses_on_and_after_event_lines(monkeypatch) -> None:
    """A last use on a region op's line (itself an event: its line is the event's), one
    in that loop's region, one on the line after the region's end: each line, order and
    region found by the second pass's bisects as the careful reader finds them."""
    assert _assert_read_alike(monkeypatch, _ON_EVENT_LINES)
    fast = scan_bytes(_ON_EVENT_LINES.encode())
    assert fast is not None
    lines = {a.results[0]: a.live_end_line for a in fast.allocas}
    # %a, used by the loop's op, lasts to its region's last op (line 10); so does %b,
    # used in the loop; %c to the store after the loop.
    assert lines == {"%a": 10, "%b": 10, "%c": 12}


def _searched_together(monkeypatch: pytest.MonkeyPatch, text: str) -> FileScan | None:
    """The fast reader with every group of names sharing a scope's end searched for
    together (`_scanned_together`), however few and short."""
    with monkeypatch.context() as patch:
        patch.setattr(event_uses, "_SCAN_TOGETHER_MIN_NAMES", 1)
        patch.setattr(event_uses, "_SCAN_TOGETHER_RATIO", -1)
        return scan_bytes(text.encode())


@pytest.mark.parametrize("seed", range(12))
def test_names_searched_together_read_as_one_by_one(monkeypatch, tmp_path, seed) -> None:
    rng = random.Random(seed)
    path = tmp_path / "generated.mlir"
    GENERATOR.write_module(path, rng.choice(["generic", "pretty"]), rng.randint(2_000, 12_000),
                           seed, rng.choice(["simple", "xla"]))
    texts = [_with_uses(path.read_text(), rng), _ModuleBuilder(rng).module()]
    for text in texts:
        together = _searched_together(monkeypatch, text)
        one_by_one = scan_bytes(text.encode())
        assert (together is None) == (one_by_one is None)
        if together is not None and one_by_one is not None:
            assert scan_key(together) == scan_key(one_by_one)
            assert_same(together, scan_text(text))


def _many_allocas(count: int, seed: int) -> str:
    """A func of `count` allocas, each used in a store after some later alloca, every
    seventh loaded at the end, names that are prefixes of others (`%q1`, `%q10`, `%q7`
    and `%q7-y`), views of some."""
    rng = random.Random(seed)
    lines = ["func.func @many(%i: index, %f: f32) {"]
    for k in range(count):
        lines.append(f"  %q{k} = memref.alloca() : memref<{rng.randint(1, 64)}xf32, 201>")
        if k >= 3:
            lines.append(f"  memref.store %f, %q{rng.randrange(k)}[%i] : memref<64xf32, 201>")
        if k % 50 == 7:  # a name that is another's, then name characters
            suffix = (".x", "-y", "$z")[k % 3]
            lines.append(f"  %q{k}{suffix} = memref.alloca() : memref<8xf32, 201>")
        if k % 97 == 5:
            lines.append(f"  %v{k} = memref.subview %q{k - 2}[0] [1] [1] : "
                         "memref<64xf32, 201> to memref<1xf32, 201>")
    lines += [f"  %w{k} = memref.load %q{k}[%i] : memref<64xf32, 201>" for k in range(0, count, 7)]
    lines += [f"  memref.store %f, %v{k}[%i] : memref<1xf32, 201>"
              for k in range(count) if k % 97 == 5]
    lines += [f"  memref.store %f, %q{k}{('.x', '-y', '$z')[k % 3]}[%i] : memref<8xf32, 201>"
              for k in range(count) if k % 50 == 7]
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"


def test_a_func_of_many_allocas_is_searched_once(monkeypatch) -> None:
    """A thousand allocas in one func: their names are searched for together (a search
    each read the func's body a thousand times; 20,000 allocas took 8.6 s), and the
    reading is the careful reader's."""
    text = _many_allocas(1_000, 5)
    searched: list[str] = []
    finder = event_uses._uses_of

    def counted(name: str):
        searched.append(name)
        return finder(name)

    monkeypatch.setattr(event_uses, "_uses_of", counted)
    monkeypatch.setattr(event_uses, "_FINDERS", {})
    fast = scan_bytes(text.encode())
    assert fast is not None and len(fast.allocas) == 1_020
    assert not any(name.startswith("%q") for name in searched)
    assert_same(fast, scan_text(text))


# Texts before a line's first use, their value names left as slots (`_templated_class`
# reads one text of each template, and the others alike).
_PREFIX_PIECES = [" ", " ", "SLOT", "SLOT", ", ", "SLOT = ", "(", ")", "[", "]", "<", ">",
                  ":", ":2", "-", "->", "{", "}", "{a = 1}", '"', '"x"', '"SLOT"', '"a%"',
                  "x.y", "memref.load", "memref.store", "return", "yield", "=", "@f", "%"]
_NAME_CHARS = "ab0_$.-x.y"


def _class_or_refusal(prefix: bytes, templated: bool, classes: dict[bytes, int]) -> object:
    no_view_ops = frozenset({b"memref.load", b"arith.constant"})
    try:
        if templated:
            return event_uses._templated_class(prefix, no_view_ops, classes)
        return event_uses._prefix_class(prefix, no_view_ops)
    except event_uses.Unvouched as refused:
        return ("unvouched", str(refused))


@pytest.mark.parametrize("seed", range(4))
def test_texts_alike_but_for_value_names_class_alike(seed: int) -> None:
    rng = random.Random(seed)
    alike = 0
    for _ in range(3000):
        head = rng.choice(["  ", "  SLOT = ", "  SLOT, SLOT = "])
        skeleton = head + rng.choice(["memref.store ", "x.y ", '"x.y"(', "memref.load ",
                                      '"memref.alloca"(', "scf.yield "]) + "".join(
            rng.choice(_PREFIX_PIECES) for _ in range(rng.randint(0, 6)))
        prefixes = [re.sub("SLOT", lambda _: "%" + "".join(
            rng.choice(_NAME_CHARS) for _ in range(rng.randint(1, 4))), skeleton).encode()
            for _ in range(4)]
        classes: dict[bytes, int] = {}
        for prefix in prefixes:
            expected = _class_or_refusal(prefix, False, classes)
            assert _class_or_refusal(prefix, True, classes) == expected
        alike += len(classes) < len(prefixes)
    assert alike > 1000
