"""`sc-mlir explain`: each logged failure matched to its alloca, checked, and advised."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from sc_mlir.cli import app

runner = CliRunner()
LOGS = FIXTURES / "logs"
SAMPLE = FIXTURES / "sample"


def explain(log: str, *extra: str) -> tuple[int, list[dict]]:
    result = runner.invoke(app, ["explain", str(LOGS / log), "--dump", str(SAMPLE),
                                 "--format", "json", *extra])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("log", ["classic_traceback.log", "e3000_colour.log",
                                 "json_lines.log", "wrapped.log", "source_location.log",
                                 "dump_position.log"])
def test_each_log_form_is_matched_to_the_alloca_that_crossed(log):
    code, [answer] = explain(log)
    assert code == 1
    assert answer["matched"]["name"] == "%232"
    assert answer["matched"]["line"] == 36 and answer["matched"]["col"] == 24
    assert answer["matched"]["file"].endswith("module_0007.sc_embedding_lookup_fwd.mlir")
    assert answer["simulated_upper_bound_words"] == 140704
    assert answer["agrees"] is True
    assert answer["verdict"] == "allocator-limited"
    assert any("--xla_tpu_enable_sparse_core_collective_offload_all_gather=false" in a
               for a in answer["advice"])


def test_the_json_contract():
    _, [answer] = explain("classic_traceback.log")
    for key in ("memory_space", "bound_words", "offset_upper_bound_words", "allocating_words",
                "matched", "simulated_upper_bound_words", "agrees", "verdict", "advice"):
        assert key in answer
    assert set(answer["matched"]) >= {"file", "line", "col", "name", "words"}
    assert answer["memory_space"] == "201" and answer["bound_words"] == 131071


def test_reasons_name_every_clue():
    _, [answer] = explain("classic_traceback.log")
    reasons = " ".join(answer["matched"]["reasons"])
    assert "result name %232 as in the note" in reasons
    assert "type memref<23440xf32, 201> as in the note" in reasons
    assert "same upper bound (140704)" in reasons
    assert any("result.1:279:1" in note for note in answer["notes"])


def test_two_failures_give_two_answers():
    code, answers = explain("two_failures.log")
    assert code == 1
    assert [(a["matched"]["name"], a["verdict"]) for a in answers] == [
        ("%232", "allocator-limited"), ("%203", "overflow")]
    spmem = answers[1]
    assert spmem["agrees"] and spmem["simulated_upper_bound_words"] == 2048
    assert any("at least 1,048 words must go" in a for a in spmem["advice"])


def test_no_failure_says_so_with_exit_0():
    result = runner.invoke(app, ["explain", str(LOGS / "no_failure.log"), "--dump", str(SAMPLE)])
    assert result.exit_code == 0
    assert "No SparseCore allocation failure" in result.stdout
    code, answers = explain("no_failure.log")
    assert code == 0 and answers == []


def test_numbers_that_disagree_are_shown_with_likely_reasons():
    _, [answer] = explain("misaligned.log")
    assert answer["matched"]["name"] == "%232"
    assert answer["agrees"] is False and answer["delta_words"] == 80
    assert any("alignment of 128 bytes" in r and "exactly 140784" in r
               for r in answer["disagreement"])


def test_a_failure_from_another_run_matches_nothing_and_says_why():
    _, [answer] = explain("another_run.log")
    assert answer["matched"] is None and answer["agrees"] is False
    assert "another run" in answer["no_match_reason"]
    assert "crosses at %232" in answer["no_match_reason"]


def test_e3001_and_fixed_size_are_reported_with_advice():
    _, answers = explain("e3001_and_fixed_size.log")
    assert [a["kind"] for a in answers] == ["E3001", "fixed-size"]
    assert answers[0]["numbers"]["row_dependent_size_allocation_bytes"] == 1696224
    assert any("max_ids_per_partition" in a for a in answers[0]["advice"])
    assert answers[1]["fixed_amount"] == [610880, "bytes"]


def test_hbm_failures_get_sharding_advice(tmp_path):
    dump = tmp_path / "hbm.mlir"
    dump.write_text('func.func @k() {\n  %a = memref.alloca() : memref<4096xf32, 203>\n'
                    "  return\n}\n")
    log = tmp_path / "hbm.log"
    log.write_text("error: 'memref.alloca' op current allocation offset upper bound (4096 "
                   "words) exceeds the legitimate user allocatable offset upper bound (1024 "
                   "words) in memory space 203 when allocating 4096 words.\n")
    result = runner.invoke(app, ["explain", str(log), "--dump", str(dump), "-f", "json"])
    [answer] = json.loads(result.stdout)
    assert answer["matched"]["name"] == "%a"
    assert "max_ids_per_partition" in answer["advice"][0] and "Shard" in answer["advice"][0]


def test_without_a_dump_the_failures_are_still_listed():
    result = runner.invoke(app, ["explain", str(LOGS / "two_failures.log"), "-f", "json"])
    answers = json.loads(result.stdout)
    assert result.exit_code == 1 and len(answers) == 2
    assert all(a["matched"] is None for a in answers)
    assert "no dump given" in answers[0]["no_match_reason"]


def test_table_output_explains_in_words():
    result = runner.invoke(app, ["explain", str(LOGS / "classic_traceback.log"), "--dump",
                                 str(SAMPLE)], env={"COLUMNS": "200"})
    assert "Matched %232" in result.stdout
    assert "Checked: the scoped-stack simulation gives the same upper bound, 140,704" in (
        result.stdout)


def test_analyze_takes_the_bounds_from_the_log():
    result = runner.invoke(app, ["analyze", str(SAMPLE), "--log", str(LOGS / "two_failures.log"),
                                 "--space", "202", "-f", "json"])
    [space] = json.loads(result.stdout)["spaces"]
    assert space["bound_words"] == 1000 and space["bound_source"].startswith("log")
    assert space["verdict"] == "overflow" and result.exit_code == 1


def test_unreadable_log_is_exit_2(tmp_path):
    result = runner.invoke(app, ["explain", str(tmp_path / "missing.log")])
    assert result.exit_code == 2
