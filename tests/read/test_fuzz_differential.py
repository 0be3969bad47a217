"""Differential fuzzing of the reader: valid MLIR in any layout is read as MLIR reads it.

Mutants of the seeds in tests/read/fuzz_seeds (see mlir_fuzz.py) are read by sc-mlir and
compared, alloca by alloca (position of the op name, func, shape, size in words, memory
space, resolved source location), with

* the answers shipped in tests/read/fuzz_seeds/expected.json (MLIR's, on the seeds), moved to
  where the mutator wrote each alloca: always, briefly in CI;
* MLIR's own C++ parser on the mutant, when jaxlib is installed (it also checks that the
  first oracle predicts what MLIR says).

Briefly by default (derandomized, a few dozen mutants); SC_MLIR_FUZZ_EXAMPLES=5000 runs a
long campaign with fresh random mutants (`pytest tests/read/test_fuzz_differential.py -s`
prints how many mutants were compared and how many MLIR rejected).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from mlir_fuzz import (
    EXPECTED,
    GAP_KINDS,
    HugeDims,
    Invalid,
    Mutant,
    Mutation,
    alloca_name_indices,
    expected_from_seed,
    mlir_available,
    mlir_facts,
    mutate,
    sc_mlir_facts,
    seed_files,
    tokenize,
)

EXAMPLES = int(os.environ.get("SC_MLIR_FUZZ_EXAMPLES", "0") or 0)
LONG = EXAMPLES > 0
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES or 30,
    derandomize=not LONG,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)

SEEDS = {path.name: path.read_text() for path in seed_files()}
TOKENS = {name: tokenize(text) for name, text in SEEDS.items()}
ALLOCA_TOKENS = {name: alloca_name_indices(tokens) for name, (tokens, _) in TOKENS.items()}
SHIPPED = json.loads(EXPECTED.read_text())
# Notes sc-mlir may give on valid MLIR: the documented limit on sizes, and the stated
# assumption on semaphore sizes (the seeds hold tpu.sem_alloc ops).
ALLOWED_NOTES = ("memref.alloca size too large to count",
                 "counted at one 4-byte word per semaphore: an assumption")
STATS: Counter[str] = Counter()


@st.composite
def mutants(draw: st.DrawFn) -> tuple[str, Mutant]:
    name = draw(st.sampled_from(sorted(SEEDS)))
    _, gaps = TOKENS[name]
    allocas = ALLOCA_TOKENS[name]
    # Half the gaps anywhere, half near an alloca, where the reader has the most to lose.
    anywhere = st.integers(0, len(gaps) - 1)
    near = st.builds(lambda at, offset: min(max(at + offset, 0), len(gaps) - 1),
                     st.sampled_from(allocas), st.integers(-25, 45))
    mutations = draw(st.lists(st.builds(Mutation, st.one_of(anywhere, near),
                                        st.integers(-1, len(GAP_KINDS) - 1)),
                              min_size=1, max_size=60))
    huge = draw(st.lists(st.builds(HugeDims, st.integers(0, len(allocas) - 1),
                                   st.integers(1, 140),
                                   st.sampled_from([1, 3, 10**9, (1 << 63) - 1])),
                         max_size=2))
    return name, mutate(SEEDS[name], mutations, huge)


def check_notes(notes: list[str]) -> None:
    assert all(any(allowed in note for allowed in ALLOWED_NOTES) for note in notes), notes


@FUZZ_SETTINGS
@given(mutants())
def test_mutants_read_as_the_shipped_answers_say(tmp_path_factory: pytest.TempPathFactory,
                                                  case: tuple[str, Mutant]) -> None:
    name, mutant = case
    expected = expected_from_seed(SHIPPED[name]["allocas"], SHIPPED[name]["element_bits"],
                                  mutant)
    directory = tmp_path_factory.mktemp("mutant")
    got, notes = sc_mlir_facts(mutant.text, directory)
    assert got == expected, _show(mutant, directory)
    check_notes(notes)


@pytest.fixture(scope="module")
def report_counts() -> Iterator[None]:
    yield
    if STATS:
        print(f"\ndifferential fuzzing against MLIR: {STATS['agreed']} valid mutants agreed, "
              f"{STATS['invalid']} rejected by MLIR (not compared)")


@pytest.mark.skipif(not mlir_available(), reason="jaxlib (MLIR's C++ parser) is not "
                    "installed: pip install jax==0.10.2 jaxlib==0.10.2")
@FUZZ_SETTINGS
@given(case=mutants())
def test_mutants_read_as_mlir_reads_them(tmp_path_factory: pytest.TempPathFactory,
                                         report_counts: None, case: tuple[str, Mutant]
                                         ) -> None:
    name, mutant = case
    try:
        truth, _ = mlir_facts(mutant.text)
    except Invalid:
        STATS["invalid"] += 1
        assume(False)
        return
    predicted = expected_from_seed(SHIPPED[name]["allocas"], SHIPPED[name]["element_bits"],
                                   mutant)
    directory = tmp_path_factory.mktemp("mutant")
    assert predicted == truth, "the mutator's prediction differs from MLIR: " + _show(
        mutant, directory)
    got, notes = sc_mlir_facts(mutant.text, directory)
    assert got == truth, _show(mutant, directory)
    check_notes(notes)
    STATS["agreed"] += 1


def test_the_shipped_answers_are_the_seeds_own(tmp_path: Path) -> None:
    # Without any mutation, sc-mlir reads every seed as MLIR did.
    for name, text in SEEDS.items():
        got, notes = sc_mlir_facts(text, tmp_path)
        expected = expected_from_seed(SHIPPED[name]["allocas"], SHIPPED[name]["element_bits"],
                                      mutate(text, [], []))
        assert got == expected, name
        check_notes(notes)


def _show(mutant: Mutant, directory: Path | None = None) -> str:
    """The mutant, whole in a file (to replay it) and its start in the message."""
    where = ""
    if directory is not None:
        path = directory / "failing_mutant.mlir"
        path.write_bytes(mutant.text.encode())
        where = f" (whole text in {path})"
    text = mutant.text if len(mutant.text) <= 6000 else mutant.text[:6000] + "..."
    return f"mutant{where}:\n" + text
