"""Random modules with ops joined on their lines (tests/read/joined_ops.py) are read as
MLIR reads them: the op count and each alloca's program point and last use.

* The careful reader, against MLIR's answers on the first modules, shipped in
  tests/read/joined_ops_expected.json: always.
* The fast reader, against the careful reader, on the same modules as joined and as
  generated (one op a line): it declines a module or gives the same answer, but on a line
  of its documented limit (README, "Speed").
* With jaxlib: the shipped answers are MLIR's, and SC_MLIR_FUZZ_EXAMPLES more modules
  (from seed 100,000 on) are read by MLIR and both readers.
"""

from __future__ import annotations

import json
import os

import pytest
from joined_ops import (
    EXPECTED,
    Case,
    Line,
    Module,
    campaign,
    careful_answer,
    digest,
    fast_answer,
    generate,
    mlir_answer,
    mlir_available,
    within_documented_limit,
)

SHIPPED = json.loads(EXPECTED.read_text())
EXAMPLES = int(os.environ.get("SC_MLIR_FUZZ_EXAMPLES", "0") or 0)
needs_mlir = pytest.mark.skipif(not mlir_available(), reason="jaxlib (MLIR's C++ parser) is "
                                "not installed: pip install jax==0.10.2 jaxlib==0.10.2")


def test_the_shipped_answers_are_for_these_modules() -> None:
    changed = [seed for seed, answer in SHIPPED.items()
               if digest(generate(int(seed)).text) != answer["digest"]]
    assert not changed, (f"the generator makes other modules for seeds {changed[:5]}...: "
                         "python tests/read/joined_ops.py --write-expected (with jaxlib)")


def test_the_careful_reader_gives_mlirs_answers() -> None:
    wrong = {}
    for seed, expected in SHIPPED.items():
        got = careful_answer(generate(int(seed)).text)
        if got != (expected["ops"], [tuple(pair) for pair in expected["allocas"]]):
            wrong[seed] = (got, expected)
    assert not wrong, f"{len(wrong)} of {len(SHIPPED)} modules, e.g. {next(iter(wrong.items()))}"


def test_the_fast_reader_declines_or_gives_the_careful_answer() -> None:
    read = {"joined": 0, "one op a line": 0}
    outside_limit = []
    for seed in map(int, SHIPPED):
        case = generate(seed)
        for layout, text in (("joined", case.text), ("one op a line", case.unjoined)):
            fast = fast_answer(text)
            if fast is None:
                continue
            read[layout] += 1
            # Generated one op a line, a module has no line of the limit.
            if fast != careful_answer(text) and (layout != "joined"
                                                 or not within_documented_limit(case)):
                outside_limit.append((seed, layout))
    assert not outside_limit, outside_limit
    # The fast reader declines most joined modules (a `}` with an op after it, a string
    # holding a brace): enough are read for the comparison to mean something.
    assert read["joined"] >= 30 and read["one op a line"] >= 300, read


@pytest.mark.parametrize(("row", "within"), [
    (['"x.op"() : () -> ()', '"x.op"() : () -> ()'], True),  # names no derived name
    (['"x.use"(%a1) : (memref<16xf32>) -> ()', "return"], True),  # after the first use
    (['%c0 = arith.constant 0 : index', '"x.use"(%a1) : (memref<16xf32>) -> ()'],
     False),  # the second op holds the first use: the fast reader checks it
    (["}", '"x.use"(%a1) : (memref<16xf32>) -> ()'], False),  # a `}` is no op
    (["}", "^bb0(%i: index):", '"x.op"() : () -> ()'], False),  # nor is a label
    (['"x.use"(%a1) : (memref<16xf32>) -> ()'], False),  # alone on its line
])
def test_the_documented_limit(row: list[str], within: bool) -> None:
    """Lines of two ops the fast reader reads as one (README, "Speed"), and others."""
    lines = [Line(2, text) for text in row]
    case = Case(0, Module(lines, {"%a1"}), [lines])
    assert within_documented_limit(case) is within


@needs_mlir
def test_the_shipped_answers_are_mlirs() -> None:
    for seed in list(SHIPPED)[:300]:
        expected = SHIPPED[seed]
        assert mlir_answer(generate(int(seed)).text) == (
            expected["ops"], [tuple(pair) for pair in expected["allocas"]]), seed


@needs_mlir
@pytest.mark.skipif(not EXAMPLES, reason="a campaign: SC_MLIR_FUZZ_EXAMPLES=N")
def test_a_campaign_against_mlir() -> None:
    counts = campaign(EXAMPLES, 100_000)
    print(counts)
    assert counts["careful differs from MLIR"] == 0
    assert counts["fast differs, outside the limit"] == 0
