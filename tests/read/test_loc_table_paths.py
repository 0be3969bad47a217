"""The `#loc` table's fast paths give what the careful ones give: the common line shapes
against the balanced pattern, the one-by-one numbering check against the int-per-line
one, a table numbered by a range against one numbered by an array, the C-made index
against bisecting."""

from __future__ import annotations

import re
from array import array
from itertools import accumulate
from pathlib import Path
from random import Random

import pytest
from conftest import CORPUS, FIXTURES, bench_generator
from hypothesis import given, settings
from hypothesis import strategies as st

from sc_mlir.read import events, loc_table
from sc_mlir.read.event_regions import Unvouched
from sc_mlir.read.event_spans import SpanReader
from sc_mlir.read.events import (
    _COMMON_LOC_LINE,
    _checked_table,
    _increasing,
    _inline_loc_line,
    _loc_line,
    _loc_table,
    _numbered_in_order,
    trailing_table,
)
from sc_mlir.read.loc_table import LocationTable, TableGone
from sc_mlir.read.records import ScanSettings

_TABLE_LINE = re.compile(rb"^#loc[^\n]*$", re.MULTILINE)


def _table_lines(paths: list[Path]) -> list[bytes]:
    return [m.group() for path in paths for m in _TABLE_LINE.finditer(path.read_bytes())]


def _generated(tmp_path: Path, form: str) -> Path:
    generator = bench_generator()
    path = tmp_path / f"{form}.mlir"
    generator.write_module(path, form, 300_000, 11, "xla")
    return path


def _takes(pattern: re.Pattern[bytes], data: bytes) -> bool:
    found = pattern.match(data, 1)
    return found is not None and found.end() == len(data)


def _verdicts(line: bytes) -> tuple[bool, bool, bool]:
    """Whether a common pattern (`_COMMON_LOC_LINE`, else `_inline_loc_line()`), the line
    pattern and the balanced table pattern take `line` whole."""
    data = b"\n" + line + b"\n"
    return (_takes(_COMMON_LOC_LINE, data) or _takes(_inline_loc_line(), data),
            _takes(_loc_line(), data), _loc_table().match(data, 1).end() == len(data))


def _assert_alike(line: bytes) -> None:
    data = b"\n" + line + b"\n"
    common, any_line, table = _verdicts(line)
    assert any_line == table, line
    assert not common or table, line
    assert not _takes(_COMMON_LOC_LINE, data) or _takes(_inline_loc_line(), data), line


def test_the_corpus_and_fixture_table_lines_read_alike(tmp_path):
    paths = sorted(FIXTURES.rglob("*.mlir"))
    if CORPUS.is_dir():
        paths += sorted(CORPUS.rglob("*.mlir"))
    paths += [_generated(tmp_path, "generic"), _generated(tmp_path, "pretty")]
    lines = _table_lines(paths)
    assert len(lines) > 1000
    common = 0
    for line in lines:
        _assert_alike(line)
        common += _verdicts(line)[0]
    assert common > len(lines) // 2


_name = st.sampled_from(["#loc", "#loc0", "#loc7", "#loc12", "#loc007", "#locx", "#lo"])
_piece = st.sampled_from([
    '"f.py"', '"jit(f)/fusion"', '"f.<locals>.g"', '"a->b"', '"a<b"', '"a(b"', '"x=y"',
    '"esc\\"q"', ":1", ":2:3", " to ", ":9", "(", ")", "[", "]", "<", ">", "{", "}", "->",
    "#loc3", ", ", " at ", "callsite", "fused", "unknown", "=", " ", "\t", "\r", "é"])


@settings(max_examples=3000, deadline=None)
@given(_name, st.lists(_piece, max_size=10))
def test_generated_table_lines_read_alike(name, pieces):
    _assert_alike(f"{name} = loc({''.join(pieces)})".encode())


@pytest.mark.parametrize("line", [
    '#loc1 = loc("f.py":1:2)', '#loc1 = loc("f.py":1:2 to 3:4)', '#loc1 = loc("f.py":1:2 to :9)',
    '#loc1 = loc("jit(f)/fusion.3"(#loc2))', '#loc1 = loc("name")', "#loc1 = loc(unknown)",
    "#loc1 = loc(fused[#loc2, #loc3, #loc4])", "#loc1 = loc(callsite(#loc2 at #loc3))",
    '#loc1 = loc("f.<locals>.g"(#loc2))',
    # Written inline, as jax prints them (fixtures/sample): without the common pattern,
    # a table of these compiled the balanced patterns (55 ms of a small dump's run).
    '#loc2 = loc("run_scoped"("model/embedding.py":122:4 to :61))',
    '#loc6 = loc("epilogue_scratch"("model/epilogue.py":12:4))',
    '#loc20 = loc(callsite("lookup_level"("e.py":88:12 to :66) at "e.py":84:4))',
    '#loc22 = loc(callsite(#loc23 at "model/embedding.py":90:8))',
    '#loc23 = loc(fused["model/embedding.py":89:12 to :66, "table_shard"])',
    '#loc7 = loc(callsite(callsite("f"("a.py":1:2) at "b.py":3:4) at "c.py":5:6))'])
def test_the_printer_s_shapes_are_common(line):
    assert _verdicts(line.encode()) == (True, True, True)


@pytest.mark.parametrize("line", [
    '#loc1 = loc(callsite(callsite(callsite("f"("a.py":1:2) at "b.py":3:4) at "c":5:6) at "d"))',
    '#loc1 = loc(fused<{x = 1}>["a.py":1:2])', '#loc1 = loc("args[0]")'])
def test_deeper_or_other_brackets_are_left_to_the_balanced_patterns(line):
    # Brackets nested four deep, `<`/`{` outside strings, `[` in a string: not common
    # (the balanced patterns say what they are).
    assert not _verdicts(line.encode())[0]


def _tables() -> list[bytes]:
    line = '#loc{} = loc("f.py":{}:2)\n'
    numbered = "".join(line.format(n, n) for n in range(1, 40))
    return [
        numbered.encode(),
        numbered.encode() + b"\n\n",
        numbered.encode() + b"  \n\t\n",
        numbered.encode() + b"   ",  # blanks without a newline
        numbered.encode()[:-1],  # the last line unterminated
        ("#loc = loc(unknown)\n" + numbered).encode(),
        ("#loc = loc(unknown)\n" + "".join(line.format(n, n) for n in range(0, 9))).encode(),
        "".join(line.format(n, n) for n in (1, 2, 5, 9)).encode(),  # increasing, gaps
        "".join(line.format(n, n) for n in (1, 3, 2)).encode(),  # out of order
        "".join(line.format(n, n) for n in (1, 2, 2)).encode(),  # defined again
        "".join(line.format(n, n) for n in ("1", "02", "3")).encode(),  # a leading zero
        (line.format(1, 1) + "#loc = loc(unknown)\n").encode(),  # `#loc` after numbered
        ("#loc = loc(unknown)\n#loc = loc(unknown)\n" + numbered).encode(),  # `#loc` twice
        b"#loc = loc(unknown)\n",  # `#loc` alone
        "".join(line.format(n, 1) for n in range(10**17 - 2, 10**17 + 2)).encode(),
        "".join(line.format(n, 1) for n in range(10**18 - 2, 10**18 + 2)).encode(),
        "".join(line.format(n, 1) for n in range(2**63 - 2, 2**63 + 2)).encode(),
        "".join(line.format("1" * 5000, 1)).encode(),
        (line.format(1, 1) + '#loc2 = loc("f.py"(#loc1) junk\n' + line.format(3, 3)).encode(),
        (line.format(1, 1) + '#loc2 = loc("memref.alloca"(#loc1))\n').encode(),
        (line.format(1, 1) + "#loc2 = loc(fused<{x = 1}>[#loc1])\n").encode(),
        (line.format(1, 1) + "#loc2 = loc(callsite(callsite(#loc1 at #loc1) at #loc1))\n"
         ).encode(),
        (line.format(1, 1) + "#loc2 = loc(\"a\\\"b\":1:2)\n").encode(),
        (line.format(1, 1) + "// a comment\n").encode(),
        (line.format(1, 1) + "#map = affine_map<(d0) -> (d0)>\n").encode(),
    ]


def _read(data: bytes, before: dict[str, str], fast: bool
          ) -> tuple[object, ...]:
    """What trailing_table gives for `data` (with or without the fast path), as plain
    values: the body's end, the table's bounds, numbers and items, or the refusal."""
    saved = events._numbered_in_order
    if not fast:
        events._numbered_in_order = lambda data, body_end: None
    try:
        body_end, table = trailing_table(data, 0, before)
    except Unvouched as refusal:
        return ("refused", str(refusal))
    except (ValueError, OverflowError) as error:  # numbers past what an int64 holds
        return ("raised", type(error).__name__, str(error))
    finally:
        events._numbered_in_order = saved
    if not isinstance(table, LocationTable):
        return (body_end, table)
    return (body_end, table._start, table._end, list(table._numbers), list(table),
            dict(table.items()), len(table))


@pytest.mark.parametrize("table", _tables())
@pytest.mark.parametrize("before", [{}, {"#loc": 'loc("b.py":1:1)'}, {"#loc2": "loc(unknown)"}])
def test_the_numbering_check_gives_what_the_careful_check_gives(table, before):
    data = b"module {\n}\n" + table
    assert _read(data, before, fast=True) == _read(data, before, fast=False)


def _table_ends(data: bytes) -> tuple[int, int]:
    """`_table_end` of the whole text after its first line, and where `_loc_table()` stops."""
    start = data.index(b"\n") + 1
    return (events._table_end(data, start, len(data)),
            _loc_table().match(data, start, len(data)).end())


_INLINE_LINES = [
    '#loc{} = loc("run_scoped"("model/embedding.py":122:4 to :61))',
    '#loc{} = loc(callsite("lookup_level"("e.py":88:12 to :66) at "e.py":84:4))',
    '#loc{} = loc(fused["model/embedding.py":89:12 to :66, "table_shard"])',
    '#loc{} = loc("a.py":{}:2)']


@pytest.mark.parametrize("table", [
    *_tables(),
    "".join(line.format(n, n) + "\n" for n in (1, 2, 7, 9) for line in _INLINE_LINES).encode(),
    "".join(line.format(n, n) + "\n" for n in (1, 2, 7)
            for line in _INLINE_LINES)[:-1].encode(),  # no newline at the end
    b"#loc1 = loc(unknown)\n\n#loc2 = loc(unknown)\n",  # a blank line ends it
    b"#loc1 = loc(unknown)\n#loc2 = loc(\"args[0]\")\n#loc3 = loc(unknown)\n", b"", b"\n"])
def test_the_table_s_end_is_where_the_balanced_pattern_stops(table):
    assert len(set(_table_ends(b"module {\n" + table))) == 1


def test_a_table_of_common_lines_out_of_order_compiles_no_balanced_pattern():
    # fixtures/sample's tables skip numbers (#loc14, then #loc20): read by `_checked_table`,
    # whose lines are all common.
    sample = FIXTURES / "sample" / "sparse_core" / "module_0007.sc_embedding_lookup_fwd.mlir"
    data = sample.read_bytes()
    start = events.table_start(data, 0)
    assert start is not None and _numbered_in_order(data, start) is None
    _loc_table.cache_clear()
    _loc_line.cache_clear()
    trailing_table(data, 0, {})
    assert _loc_table.cache_info().currsize == _loc_line.cache_info().currsize == 0


def test_a_table_numbered_one_by_one_of_inline_lines_compiles_no_balanced_pattern():
    data = b"module {\n}\n" + "".join(
        line.format(n, n) + "\n" for n, line in enumerate(_INLINE_LINES * 3, 1)).encode()
    _loc_table.cache_clear()
    _loc_line.cache_clear()
    assert _numbered_in_order(data, data.index(b"#loc")) is not None
    assert _loc_table.cache_info().currsize == _loc_line.cache_info().currsize == 0


def test_a_table_numbered_one_by_one_is_a_range():
    data = b"module {\n}\n" + b"".join(b'#loc%d = loc("f.py":%d:2)\n' % (n, n)
                                       for n in range(3, 300))
    checked = _numbered_in_order(data, data.index(b"#loc"))
    assert checked is not None and checked[1] == range(3, 300)
    table_end, numbers = _checked_table(data, data.index(b"#loc"))
    assert (table_end, list(numbers)) == (checked[0], list(range(3, 300)))
    assert _increasing(numbers)


def _both(lines: list[str]) -> tuple[LocationTable, LocationTable]:
    table = ("\n" + "".join(line + "\n" for line in lines)).encode()
    numbers = [int(line[4 : line.index(" ")] or -1) for line in lines]
    as_array = LocationTable(table, 1, len(table), array("q", numbers), {})
    consecutive = numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    as_range = LocationTable(table, 1, len(table),
                             range(numbers[0], numbers[-1] + 1) if consecutive
                             else array("q", numbers), {})
    return as_array, as_range


@pytest.mark.parametrize("first", [-1, 0, 1, 5])
def test_a_range_table_looks_up_as_an_array_table(first):
    lines = [f'#loc{n if n >= 0 else ""} = loc("f{n}.py":{n}:1)  '
             for n in range(first, first + 200)]
    as_array, as_range = _both(lines)
    names = [*as_array, "#loc", "#loc-1", "#loc01", "#loc999", "#loc1x", "#map", "x", 3]
    for name in names:
        assert (name in as_array) == (name in as_range), name
        assert as_array.get(name) == as_range.get(name), name  # type: ignore[arg-type]
        assert as_array._line_index(name) == as_range._line_index(name), name
    assert list(as_array) == list(as_range) and len(as_array) == len(as_range)


@pytest.mark.parametrize("int32_stop", [1 << 31, 0])  # 4 bytes a line, or 8
@pytest.mark.parametrize("block", [1 << 20, 64, 1])
def test_the_index_reads_what_bisecting_reads(block, int32_stop, monkeypatch):
    monkeypatch.setattr(loc_table, "_INDEX_BLOCK", block)
    monkeypatch.setattr(loc_table, "_INT32_STOP", int32_stop)
    lines = [f'#loc{n} = loc("f.py":{n}:{n % 7})' for n in range(1, 3000)]
    bisected, indexed = _both(lines)
    indexed._index()
    assert indexed._index().itemsize == (4 if int32_stop else 8)
    newlines = [offset + at for at, offset in enumerate(indexed._index())]
    starts = [m.start() for m in re.finditer(rb"\n(?=#)", indexed._data)]
    assert newlines == [*starts, len(indexed._data) - 1]
    for name in bisected:  # past 64 look-ups the first table makes its index too
        assert bisected[name] == indexed[name] == f'loc("f.py":{name[4:]}:{int(name[4:]) % 7})'
    with pytest.raises(KeyError):
        indexed["#loc3000"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=300), st.booleans(),
       st.sampled_from([0, 1, 5]), st.data())
def test_lines_found_from_the_marks_are_those_the_index_finds(
        gaps, bare, mark_shift, data):
    """Numbers one by one or with gaps (a range or an array), a bare `#loc` first or not,
    names that begin other names (`#loc1`, `#loc12`), values with spaces around them and
    ` = ` inside: the marked table reads every name as the indexed one, and as bisecting."""
    numbers = list(accumulate(gaps))
    if bare:
        numbers = [-1, *numbers]
    values = [data.draw(st.sampled_from(['loc("a = b.py":1:2)', ' loc(unknown)  ',
                                         'loc("#loc12 = "(#loc1))', 'loc(callsite(#loc at #loc1))']))
              for _ in numbers]
    lines = [f"#loc{n if n >= 0 else ''} = {value}" for n, value in zip(numbers, values,
                                                                         strict=True)]
    as_array, as_range = _both(lines)
    indexed = _both(lines)[1]
    indexed._index()
    for marked in (as_array, as_range):
        old_shift = loc_table._MARK_SHIFT
        loc_table._MARK_SHIFT = mark_shift
        try:
            marked._marks = None
            marked._mark()
            names = [*indexed, "#loc0", "#loc01", f"#loc{numbers[-1] + 1}", "#map"]
            for name in names:
                assert marked.get(name) == indexed.get(name), name
            assert [marked[name] for name in indexed] == [value.strip() for value in values]
        finally:
            loc_table._MARK_SHIFT = old_shift


def test_a_table_read_from_its_file_reads_what_it_held():
    lines = [f'#loc{n} = loc("g.py":{n}:1)' for n in range(1, 500)]
    held, from_file = _both(lines)
    data = from_file._data
    from_file.read_from_file(lambda position, size: data[position : position + size])
    assert from_file.reads_from_file
    assert all(held[name] == from_file[name] for name in held)


def test_defines_all_is_every_name_in_the_table():
    lines = [f"#loc{n} = loc(unknown)" for n in range(1, 100)]
    as_array, as_range = _both(lines)
    as_range._before = {"#loc": "loc(unknown)"}  # type: ignore[misc]
    for names in (["#loc1", "#loc99"], ["#loc0"], ["#loc100"], ["#loc5", "#loc05"],
                  ["#loc"], ["#loc", "#loc3"], ["#loc1\n#loc2"], ["x"], [],
                  ["#loc1", "#loc" + "9" * 19]):
        for table in (as_array, as_range):
            assert table.defines_all(names) == all(name in table for name in names), names
    for table in (as_array, as_range):
        assert not table.defines_all(["#loc1", "#loc" + "1" * 5000])  # no int made of it


def test_defines_all_orders_names_as_numbers_not_as_text():
    # A table of #loc10 to #loc99: "#loc9" is the least name by number and the greatest as
    # text, "#loc100" the greatest by number and the least as text.
    as_array, as_range = _both([f"#loc{n} = loc(unknown)" for n in range(10, 100)])
    random = Random(12)
    for names in (["#loc10", "#loc99"], ["#loc99", "#loc10", "#loc55"], ["#loc9", "#loc10"],
                  ["#loc10", "#loc9", "#loc99"], ["#loc99", "#loc100"], ["#loc100", "#loc10"],
                  ["#loc0"], ["#loc0", "#loc99"],
                  *([f"#loc{random.randrange(0, 120)}" for _ in range(random.randrange(1, 6))]
                    for _ in range(300))):
        for table in (as_array, as_range):
            assert table.defines_all(names) == all(name in table for name in names), names


@pytest.mark.parametrize(("value", "opens"), [
    ('loc("a.py":1:2)', True), ('loc("a\\"b.py":1:2)', False), ('loc("a\\\\b.py":1:2)', False),
    ('loc("a\\0Ab.py":1:2)', False)])  # a table string holds no backslash
def test_the_tail_s_escapes_decline_spans_as_before(tmp_path, value, opens):
    path = tmp_path / "escapes.mlir"
    path.write_text("module {\n  func.func @f() {\n    return\n  }\n}\n"
                    f'#loc1 = loc("b.py":1:1)\n#loc2 = {value}\n')
    with SpanReader(str(path), ScanSettings()) as reader:
        assert reader.open() is opens


def test_values_looked_up_before_the_table_went_to_its_file_need_not_read_it():
    lines = [f'#loc{n} = loc("g.py":{n}:1)' for n in range(1, 100)]
    _, table = _both(lines)
    assert table["#loc5"] == 'loc("g.py":5:1)'

    def gone(position: int, size: int) -> bytes:
        raise OSError("the file is gone")

    table.read_from_file(gone)
    assert table["#loc5"] == 'loc("g.py":5:1)'
    with pytest.raises(TableGone):
        table["#loc6"]
