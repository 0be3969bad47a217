"""`looks_like_program` finds its signals by literal searches; here the regular expression
that states them decides instead, on random heads built from the signals' pieces."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from sc_mlir.read.embedded import looks_like_program

SIGNAL = re.compile(rb'HloModule\b|\bstablehlo\.|\bmhlo\.|"tpu_custom_call"')
PIECES = [b"HloModule", b"stablehlo.", b"mhlo.", b'"tpu_custom_call"', b"tpu_custom_call",
          b"x", b"_", b"9", b" ", b".", b"\n", b"\xc3\xa9", b"hlo", b"Module", b'"']


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=8).map(b"".join))
def test_a_program_is_recognised_exactly_where_the_pattern_matches(head: bytes) -> None:
    assert looks_like_program(head) == (SIGNAL.search(head) is not None)
