"""`sc-mlir diff BEFORE AFTER`: which buffers changed, by how much, and does it fit now."""

from __future__ import annotations

import json

from conftest import FIXTURES
from typer.testing import CliRunner

from sc_mlir.cli import app
from sc_mlir.compare.diff import (
    AllocaView,
    Moved,
    Resized,
    SpaceView,
    Unchanged,
    diff_views,
    match_spaces,
    strip_number,
)

runner = CliRunner()
DIFF = FIXTURES / "diff"
SAMPLE = FIXTURES / "sample"


def diff_json(before, after, *extra: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["diff", str(before), str(after), "--format", "json", *extra])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def space(out: dict, func: str, label_start: str) -> dict:
    return next(s for s in out["spaces"] if s["func"] == func
                and s["space"].startswith(label_start))


def test_a_halved_limit_shrinks_two_buffers_and_the_func_now_fits():
    _, out = diff_json(DIFF / "limit_halved/before", DIFF / "limit_halved/after")
    changes = out["allocations"]
    assert [(c["kind"], c["name_before"], c["name_after"], c["delta_words"]) for c in changes] == [
        ("resized", "%231", "%331", -11720), ("resized", "%232", "%332", -11720)]
    assert out["unchanged_allocations"] == 9
    s = space(out, "sc_embedding_lookup_fwd", "201")
    assert (s["before_stack_peak_words"], s["after_stack_peak_words"], s["delta_words"]) == (
        140704, 117264, -23440)
    assert (s["before_verdict"], s["after_verdict"]) == ("allocator-limited", "fits")
    assert s["after_free_words"] == 131071 - 117264 and s["after_over_words"] == 0


def test_a_new_scope_moves_a_buffer_and_lowers_the_stack_peak():
    _, out = diff_json(DIFF / "new_scope/before.mlir", DIFF / "new_scope/after.mlir")
    [moved] = out["allocations"]
    assert moved["kind"] == "moved" and moved["name_before"] == moved["name_after"] == "%b"
    assert moved["scope_before"] == "func.func@stage"
    assert moved["scope_after"] == "func.func@stage/memref.alloca_scope#0"
    s = out["spaces"][0]
    assert (s["before_stack_peak_words"], s["after_stack_peak_words"]) == (6000, 4000)
    assert s["delta_words"] == -2000 and out["unchanged_allocations"] == 2


def test_renumbered_values_and_modules_diff_as_all_unchanged():
    _, out = diff_json(SAMPLE, DIFF / "renumbered_sample")
    assert out["allocations"] == []
    assert out["unchanged_allocations"] == 15
    assert all(s["delta_words"] == 0 and s["before_verdict"] == s["after_verdict"]
               for s in out["spaces"])
    assert all(s["program_before"] != s["program_after"] for s in out["spaces"])


def test_swapping_before_and_after_negates_every_delta():
    _, forward = diff_json(DIFF / "limit_halved/before", DIFF / "limit_halved/after")
    _, backward = diff_json(DIFF / "limit_halved/after", DIFF / "limit_halved/before")
    assert sorted(c["delta_words"] for c in forward["allocations"]) == sorted(
        -c["delta_words"] for c in backward["allocations"])
    assert sorted((s["func"], s["space"], s["delta_words"]) for s in forward["spaces"]) == sorted(
        (s["func"], s["space"], -s["delta_words"]) for s in backward["spaces"])
    for f in forward["spaces"]:
        b = next(x for x in backward["spaces"] if (x["func"], x["space"]) == (f["func"], f["space"]))
        assert (f["before_verdict"], f["after_verdict"]) == (b["after_verdict"], b["before_verdict"])


def test_added_and_removed_swap_with_the_direction(tmp_path):
    one = tmp_path / "one.mlir"
    two = tmp_path / "two.mlir"
    one.write_text('func.func @k() {\n  %a = memref.alloca() : memref<8xf32, 201> loc("k.py":1:1)\n'
                   "  return\n}\n")
    two.write_text('func.func @k() {\n  %a = memref.alloca() : memref<8xf32, 201> loc("k.py":1:1)\n'
                   '  %b = memref.alloca() : memref<4xf32, 201> loc("k.py":2:1)\n  return\n}\n')
    _, forward = diff_json(one, two)
    _, backward = diff_json(two, one)
    assert [(c["kind"], c["delta_words"]) for c in forward["allocations"]] == [("added", 4)]
    assert [(c["kind"], c["delta_words"]) for c in backward["allocations"]] == [("removed", -4)]


def test_the_json_contract():
    _, out = diff_json(DIFF / "limit_halved/before", DIFF / "limit_halved/after")
    assert {"before", "after", "spaces", "allocations"} <= set(out)
    assert out["before"].endswith("limit_halved/before")
    assert out["after"].endswith("limit_halved/after")
    assert {"func", "memory_space", "before_stack_peak_words", "after_stack_peak_words",
            "delta_words", "before_verdict", "after_verdict"} <= set(out["spaces"][0])
    assert {"kind", "name_before", "name_after", "words_before", "words_after",
            "loc"} <= set(out["allocations"][0])
    assert out["allocations"][0]["loc"] == "model/embedding.py:88:12"


def test_fail_on_overflow_and_regression():
    halved = (DIFF / "limit_halved/before", DIFF / "limit_halved/after")
    assert diff_json(*halved, "--fail-on", "overflow")[0] == 0
    assert diff_json(*reversed(halved), "--fail-on", "overflow")[0] == 1
    assert diff_json(*halved, "--fail-on", "regression")[0] == 0
    assert diff_json(*reversed(halved), "--fail-on", "regression")[0] == 1
    assert diff_json(*reversed(halved))[0] == 0  # no --fail-on: report only


def test_saved_json_analyses_diff_like_the_dumps(tmp_path):
    paths = []
    for name in ("before", "after"):
        result = runner.invoke(app, ["analyze", str(DIFF / "limit_halved" / name), "-f", "json",
                                     "--allocations"])
        path = tmp_path / f"{name}.json"
        path.write_text(result.stdout)
        paths.append(path)
    _, from_json = diff_json(*paths)
    _, from_dumps = diff_json(DIFF / "limit_halved/before", DIFF / "limit_halved/after")
    strip = lambda out: (out["spaces"], out["allocations"])  # noqa: E731
    assert strip(from_json) == strip(from_dumps)


def test_a_saved_analysis_without_allocas_is_refused_with_the_fix(tmp_path):
    result = runner.invoke(app, ["analyze", str(DIFF / "limit_halved" / "before"), "-f", "json"])
    saved = tmp_path / "before.json"
    saved.write_text(result.stdout)
    refused = runner.invoke(app, ["diff", str(saved), str(DIFF / "limit_halved" / "after")])
    assert refused.exit_code == 2
    assert "--allocations" in refused.output


def test_space_filter_and_csv():
    _, out = diff_json(DIFF / "limit_halved/before", DIFF / "limit_halved/after",
                       "--space", "spmem")
    assert [s["space"] for s in out["spaces"]] == ["202 (spmem)"] and out["allocations"] == []
    result = runner.invoke(app, ["diff", str(DIFF / "limit_halved/before"),
                                 str(DIFF / "limit_halved/after"), "-f", "csv"])
    lines = result.stdout.splitlines()
    assert lines[0].startswith("kind,func,space,entry_kind,scratch_index,name_before,name_after")
    assert len(lines) == 1 + 11


def test_table_names_the_direction():
    result = runner.invoke(app, ["diff", str(DIFF / "limit_halved/before"),
                                 str(DIFF / "limit_halved/after")], env={"COLUMNS": "160"})
    assert "before:" in result.stdout and "→  after:" in result.stdout
    assert "-23,440" in result.stdout and "limited → fits" in result.stdout


def test_unusable_inputs_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "an analysis"}')
    result = runner.invoke(app, ["diff", str(bad), str(SAMPLE)])
    assert result.exit_code == 2


# Every field the diff reads from a saved analysis, and a value of another type for it.
_DAMAGE = [
    ("allocations", None, "x"), ("allocations", 0, "x"), ("spaces", None, {}),
    ("spaces", 0, ["x"]), ("spaces", "stack_peak_words", "9"),
    ("spaces", "liveness_peak_words", None), ("spaces", "packed_peak_words", 1.5),
    ("spaces", "bound_words", "131071"), ("spaces", "verdict", 3), ("spaces", "file", 1),
    ("spaces", "func", ["k"]), ("spaces", "chunk", "0"), ("spaces", "space_id", "201"),
    ("spaces", "space_name", 201), ("spaces", "memory_space", {}),
    ("spaces", "stack_peak_words", True), ("allocations", "words", "16"),
    ("allocations", "order", "1"), ("allocations", "line", 2.5),
    ("allocations", "loc_names", "k.py"), ("allocations", "loc_names", [1]),
    ("allocations", "shape", 4), ("allocations", "name", 7), ("allocations", "file", None),
    ("allocations", "func", 0), ("allocations", "kind", 1),
    ("allocations", "scratch_index", "0"), ("allocations", "loc_line", "3"),
]


def test_a_damaged_saved_analysis_is_refused_naming_the_field(tmp_path):
    result = runner.invoke(app, ["analyze", str(DIFF / "limit_halved" / "before"), "-f", "json",
                                 "--allocations"])
    saved = json.loads(result.stdout)
    after = str(DIFF / "limit_halved" / "after")
    for table, field, value in _DAMAGE:
        damaged = json.loads(json.dumps(saved))
        if field is None:
            damaged[table] = value
            where = table
        elif field == 0:
            damaged[table][0] = value
            where = f"{table}[0]"
        else:
            # The field in every record: whichever the diff reads first is named.
            for record in damaged[table]:
                record[field] = value
            where = f".{field}"
        path = tmp_path / "damaged.json"
        path.write_text(json.dumps(damaged))
        refused = runner.invoke(app, ["diff", str(path), after])
        assert refused.exit_code == 2 and refused.exception is not None, (table, field, value)
        assert isinstance(refused.exception, SystemExit), refused.exception
        message = " ".join(refused.output.split())
        assert where in message and "damaged.json" in message, (table, field, message)
    # A field left out that the diff cannot do without.
    for table, field in (("spaces", "stack_peak_words"), ("spaces", "verdict"),
                         ("allocations", "func")):
        damaged = json.loads(json.dumps(saved))
        for record in damaged[table]:
            del record[field]
        path = tmp_path / "damaged.json"
        path.write_text(json.dumps(damaged))
        refused = runner.invoke(app, ["diff", str(path), after])
        assert refused.exit_code == 2 and f"no '{field}'" in " ".join(refused.output.split())
    path.write_text('{"spaces": ' * 100_000 + '1' + '}' * 100_000)
    assert runner.invoke(app, ["diff", str(path), after]).exit_code == 2
    for broken in (b'{"spaces": [', b'{"spaces": "\xff"}'):  # cut short; not UTF-8
        path.write_bytes(broken)
        refused = runner.invoke(app, ["diff", str(path), after])
        assert refused.exit_code == 2 and "damaged.json: not a saved analysis" in " ".join(
            refused.output.split())


# --- the matching rules, on small views -------------------------------------------------


def alloca(name, words, scope="func.func@k", line=1, order=1, loc=("k.py", 1, 1), names=()):
    return AllocaView(name, words, f"memref<{words}xf32, 201>", "f32", 1, scope, line, order,
                      loc[0], loc[1], loc[2], names)


def view(func, allocas, program="m_0001.mlir"):
    return SpaceView(program, func, "201", "201 (tile_spmem)", "201", 131071,
                     sum(a.words for a in allocas), 0, 0, "fits", tuple(allocas))


def test_funcs_match_despite_numeric_suffixes_and_module_numbers():
    assert strip_number("sc_lookup_12") == "sc_lookup"
    before = [view("fusion.12", [alloca("%0", 8)], "module_0007.mlir")]
    after = [view("fusion.15", [alloca("%9", 8)], "module_0009.mlir")]
    [(b, a)] = match_spaces(before, after)
    assert b is before[0] and a is after[0]
    result = diff_views(before, after, "A", "B")
    assert [type(e) for e in result.allocations] == [Unchanged]


def test_ssa_numbers_alone_never_match():
    # Same SSA names, different sources: not the same buffers.
    before = [view("k", [alloca("%0", 8, loc=("a.py", 1, 1)), alloca("%1", 16, order=2,
                                                                        loc=("a.py", 2, 1))])]
    after = [view("k", [alloca("%0", 16, loc=("a.py", 2, 1)), alloca("%1", 8, order=2,
                                                                        loc=("a.py", 1, 1))])]
    result = diff_views(before, after, "A", "B")
    assert sorted((e.before.name, e.after.name) for e in result.allocations) == [
        ("%0", "%1"), ("%1", "%0")]
    assert all(isinstance(e, Unchanged) for e in result.allocations)


def test_code_that_moved_lines_still_matches_by_names_and_scope():
    before = [view("k", [alloca("%0", 8, loc=("a.py", 10, 4), names=("gather",))])]
    after = [view("k", [alloca("%5", 4, loc=("a.py", 14, 4), names=("gather",))])]
    [edit] = diff_views(before, after, "A", "B").allocations
    assert isinstance(edit, Resized) and edit.delta_words == -4


def test_without_locations_the_order_within_the_scope_decides():
    before = [view("k", [alloca("%0", 8, loc=(None, None, None)),
                         alloca("%1", 4, order=2, loc=(None, None, None))])]
    after = [view("k", [alloca("%7", 8, loc=(None, None, None)),
                        alloca("%8", 2, order=2, loc=(None, None, None))])]
    edits = diff_views(before, after, "A", "B").allocations
    assert sorted((e.before.name, e.after.name, type(e).__name__) for e in edits) == [
        ("%0", "%7", "Unchanged"), ("%1", "%8", "Resized")]


def test_a_move_to_another_scope_is_moved():
    before = [view("k", [alloca("%0", 8, scope="func.func@k")])]
    after = [view("k", [alloca("%0", 8, scope="func.func@k/tpu.region#0")])]
    [edit] = diff_views(before, after, "A", "B").allocations
    assert isinstance(edit, Moved)
