"""Reading compile logs of every shape: the failures and their numbers."""

from __future__ import annotations

from conftest import FIXTURES

from sc_mlir.failures.logs import (
    AllocationFailure,
    FixedSizeFailure,
    ReplicaCountFailure,
    read_log,
    read_log_lines,
    read_log_text,
)

LOGS = FIXTURES / "logs"
E3000_NUMBERS = (140704, 131071, "201", 23440)


def numbers(f: AllocationFailure) -> tuple[object, ...]:
    return (f.offset_upper_bound_words, f.bound_words, f.memory_space, f.allocating_words)


def test_classic_message_in_a_python_traceback_with_its_note():
    [f] = read_log(str(LOGS / "classic_traceback.log"))
    assert numbers(f) == E3000_NUMBERS
    assert f.location == "result.1:279:1" and f.log_line == 8
    assert f.note is not None and f.note.results == ("%232",)
    assert f.note.type.text == "memref<23440xf32, 201>"


def test_newer_form_with_a_named_space_and_colours():
    [f] = read_log(str(LOGS / "e3000_colour.log"))
    assert (f.offset_upper_bound_words, f.bound_words, f.memory_space) == (
        140704, 131071, "tile_spmem")
    assert f.space_id == 201 and f.allocating_words is None and f.code == "E3000"
    assert f.note is None


def test_json_lines_with_escaped_messages():
    [f] = read_log(str(LOGS / "json_lines.log"))
    assert numbers(f) == E3000_NUMBERS and f.note is not None and f.log_line == 2


def test_lines_wrapped_mid_word_with_timestamps():
    [f] = read_log(str(LOGS / "wrapped.log"))
    assert numbers(f) == E3000_NUMBERS
    assert f.location == "result.1:279:1"
    assert f.note is not None and f.note.results == ("%232",)


def test_a_repeated_failure_is_one_failure_seen_on_several_lines():
    failures = read_log(str(LOGS / "two_failures.log"))
    assert [(f.memory_space, f.log_lines) for f in failures] == [("201", (2, 8)), ("202", (5,))]


def test_e3001_and_fixed_size_records_keep_their_numbers():
    e3001, fixed = read_log(str(LOGS / "e3001_and_fixed_size.log"))
    assert isinstance(e3001, ReplicaCountFailure)
    assert e3001.numbers["fixed_size_allocation_bytes"] == 410880
    assert e3001.numbers["total_spmem_size_bytes"] == 524288
    assert e3001.numbers["max_nz_per_row"] == 141352
    assert isinstance(fixed, FixedSizeFailure)
    assert fixed.fixed_amount == (610880, "bytes") and fixed.capacity_amount == (524288, "bytes")
    assert fixed.where == "TileSpmem"


def test_a_log_without_failures():
    assert read_log(str(LOGS / "no_failure.log")) == []
    assert read_log_text("") == []


def test_failures_across_the_reading_window_of_a_large_log():
    filler = ["I1129 17:00:00.000000 1 x.cc:1] " + "x" * 90] * 30_000  # ~3.6 MB
    message = (LOGS / "classic_traceback.log").read_text().splitlines()[-1]
    lines = [*filler[:12_000], message, *filler[12_000:], message.replace("140704", "150000")]
    failures = read_log_lines(lines)
    assert [(f.offset_upper_bound_words, f.log_line) for f in failures] == [
        (140704, 12_001), (150000, 30_002)]


def test_nothing_is_evaluated():
    text = ("error: current allocation offset upper bound (__import__('os') words) exceeds the "
            "legitimate user allocatable offset upper bound (1 words) in memory space 201")
    assert read_log_text(text) == []


def test_log_lines_end_at_lf_only(tmp_path):
    # A progress bar's lone CRs end no line (an editor counts LFs): the failure stays on
    # line 8, as in the plain log.
    text = (LOGS / "classic_traceback.log").read_bytes()
    first_newline = text.index(b"\n")
    with_bar = text[:first_newline] + b"\r 10%\r 50%\r100%" + text[first_newline:]
    path = tmp_path / "bar.log"
    path.write_bytes(with_bar)
    [f] = read_log(str(path))
    assert numbers(f) == E3000_NUMBERS and f.log_line == 8
    [g] = read_log_text(with_bar.decode())
    assert g.log_line == 8
