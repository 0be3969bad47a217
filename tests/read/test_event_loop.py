"""The fast reader's events loop reads in bulk what it once read per event: what follows
each region's `}` (the key checked, the trailer kept) against the per-line regex it
replaces, and the events' lines against a count per line; what follows each `}`, taken by
the search over line starts, against the line sliced from the `}`; the `{`s ending a line
and those a dict entry, blank line or comment follows, found by one search, against a
search for each. (A span's frames moved to the file's lines:
tests/read/test_event_spans.py.)"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from test_events import generated

from sc_mlir.read import events
from sc_mlir.read.records import ScanSettings

# The closing line as the loop read it, one match per `}`: 1 what follows it, 2 the same
# less an alias location at its end.
_CLOSING_LINE = re.compile(
    rb"[ \t]*+\}(([^\n]*?)(?: loc\(#[A-Za-z_0-9][\w$.\-]*\))?)\n")
_PIECES = [b" ", b"loc", b"(", b")", b"#", b"a", b"1", b".", b"-", b"$", b'"', b"x y",
           b" loc(#", b" loc(#a)", b" loc(#loc12)", b"\t", b"{", b" {", b"}", b",", b"else"]


@pytest.mark.parametrize("seed", range(5))
def test_closing_keys_and_trailers_read_at_once_are_the_lines_own(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(2000):
        rests = [b"".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 8)))
                 for _ in range(rng.randint(1, 6))]
        joined = b"\n".join(rests)
        keys = events._ALIAS_AT_LINE_END.sub(b"", joined).split(b"\n")
        trailers = events._BRACE_AT_LINE_END.sub("", joined.decode()).split("\n")
        for rest, key, trailer in zip(rests, keys, trailers, strict=True):
            whole, expected_key = _CLOSING_LINE.match(b"  }" + rest + b"\n").group(1, 2)
            text = whole.decode()
            assert key == expected_key
            assert trailer == (text[:-1] if text.endswith("{") else text)


@pytest.mark.parametrize("form", ["pretty", "generic"])
def test_event_lines_are_the_lines_counted_one_by_one(tmp_path: Path, form: str) -> None:
    data = generated(form, "xla", 20_000, 3, tmp_path).read_bytes()
    reader = events._Reader(data, "<text>", ScanSettings())
    assert reader.read() is not None
    assert len(reader.event_offsets) > 100
    for offset, line in zip(reader.event_offsets, reader.event_lines, strict=True):
        assert data[offset - 1 : offset] in (b"\n", b"")  # a line's start
        assert line == data.count(b"\n", 0, offset) + 1
    assert sorted(reader.event_offsets) == reader.event_offsets


# Texts around the `{`s and `}`s the searches read: what follows a `}` (attributes, an
# alias location, `else {`, blanks), and what follows a `{` ending a line (an op, a dict
# entry, a blank line, a comment, a string key).
_AROUND = [b"  }", b"}", b"  }) : () -> () loc(#loc3)", b"  } else {", b"  }, {", b"  } \t",
           b'  }) {a = "x}"} : () -> ()', b"  %a = x.y() {", b'  "t.r"() ({', b"  a = 1,",
           b'  "k" = 2', b"", b"  // note {", b"  b, c", b"  ^bb0(%a: i32):", b"  x.y %a {",
           b"  \t", b"  }x", b"{", b"  %b = x.z {a = 1} : i32"]


def _texts(seed: int) -> list[bytes]:
    rng = random.Random(seed)
    texts = []
    for _ in range(300):
        lines = [rng.choice(_AROUND) for _ in range(rng.randint(1, 12))]
        texts.append(b"\n".join([b"module {", *lines, b"}"]) + b"\n")
    return texts


@pytest.mark.parametrize("seed", range(3))
def test_what_follows_each_close_is_its_line_from_the_brace(seed: int) -> None:
    read = 0
    for data in _texts(seed):
        reader = events._Reader(data, "<text>", ScanSettings())
        reader.body_start, reader.body_end = data.index(b"\n") + 1, len(data)
        try:
            reader._line_starts()
        except events.Unvouched:
            continue
        assert reader.close_rests == [data[brace + 1 : data.index(b"\n", brace)]
                                      for brace in reader.close_braces]
        assert all(data[brace : brace + 1] == b"}" for brace in reader.close_braces)
        read += bool(reader.close_braces)
    assert read > 30


def test_what_follows_each_close_in_generated_modules(tmp_path: Path) -> None:
    for form in ("pretty", "generic"):
        data = generated(form, "xla", 20_000, 5, tmp_path).read_bytes()
        reader = events._Reader(data, "<text>", ScanSettings())
        assert reader.read() is not None
        assert len(reader.close_braces) > 10
        assert reader.close_rests == [data[brace + 1 : data.index(b"\n", brace)]
                                      for brace in reader.close_braces]


# The searches `_REGION_OPEN` stands for: the `{`s ending a line, and those after which
# `_AFTER_OPEN` matches (its group 1: a blank line or a comment).
_OPEN = re.compile(rb"\{\n")
_OPEN_FOLLOWED = re.compile(rb"\{\n(?=" + events._AFTER_OPEN.pattern + rb")")


@pytest.mark.parametrize("seed", range(3))
def test_opens_and_those_followed_by_one_search_as_by_two(seed: int) -> None:
    followed = 0
    for data in _texts(seed):
        found = list(events._REGION_OPEN.finditer(data))
        assert [m.start() for m in found] == [m.start() for m in _OPEN.finditer(data)]
        assert [(m.start(), m.group(1)) for m in found if m.lastindex] == [
            (m.start(), m.group(1)) for m in _OPEN_FOLLOWED.finditer(data)]
        followed += any(m.lastindex for m in found)
    assert followed > 30


# Region ops' lines, their value names left as slots (`_region_op_shape` checks one line of
# each template, and reads the others alike).
_OP_PIECES = ["scf.for", "scf.if", "x.y", "func.func", "return", "memref.alloca(", " ", " ",
              " = ", "=", " to ", " step ", "(", ")", "[", "]", "<", ">", ", ", ":", ":2",
              "-", "->", "{", "}", "{a = 1}", "{b}", "@f", "#t<x>", "^bb0", "iter_args(",
              "%", "SLOT", "SLOT", "SLOT", "SLOT = "]
_NAME_CHARS = "ab0_$.-x.y"


def _value_name(rng: random.Random) -> str:
    return "%" + "".join(rng.choice(_NAME_CHARS) for _ in range(rng.randint(1, 5)))


def _shape_or_refusal(reader: events._Reader, text: str, checked: bool) -> object:
    try:
        if checked:
            return reader._checked_region_op_shape(text)
        return reader._region_op_shape(text)
    except events.Unvouched as refused:
        return ("unvouched", str(refused))


@pytest.mark.parametrize("seed", range(4))
def test_region_op_lines_alike_but_for_value_names_check_alike(seed: int) -> None:
    rng = random.Random(seed)
    reader = events._Reader(b"", "<text>", ScanSettings())
    alike = read_alike = 0
    for _ in range(3000):
        pieces = [rng.choice(_OP_PIECES) for _ in range(rng.randint(0, 9))]
        head = rng.choice(["  ", "  SLOT = ", "  SLOT, SLOT = "])
        skeleton = head + rng.choice(["scf.for ", "x.y ", "func.func @f("]) + "".join(
            pieces) + rng.choice([" {", "({", "{"])
        first, *others = [re.sub("SLOT", lambda _: _value_name(rng), skeleton)
                          for _ in range(4)]
        events._REGION_OP_NAMES.clear()
        checked_first = _shape_or_refusal(reader, first, checked=True)
        assert _shape_or_refusal(reader, first, checked=False) == checked_first
        template = events._VALUE_NAME_TEXT.sub("%_", first)
        for line in others:
            if events._VALUE_NAME_TEXT.sub("%_", line) != template:
                continue
            alike += 1
            expected = _shape_or_refusal(reader, line, checked=True)
            assert isinstance(expected, tuple) == isinstance(checked_first, tuple)
            assert _shape_or_refusal(reader, line, checked=False) == expected
            read_alike += template in events._REGION_OP_NAMES
    assert alike > 1000 and read_alike > 300
