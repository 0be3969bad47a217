"""The fast reader's events loop reads in bulk what it once read per event: what follows
each region's `}` (the key checked, the trailer kept) against the per-line regex it
replaces, and the events' lines against a count per line. (A span's frames moved to the
file's lines: tests/read/test_event_spans.py.)"""

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
