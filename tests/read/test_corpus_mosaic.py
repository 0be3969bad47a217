"""Every alloca in jax's real Mosaic output, in both printed forms, against values read
off the files by hand (line numbers, shapes, source lines in pallas_kernels.py)."""

from __future__ import annotations

import pytest

from sc_mlir.model.dump import load

# (pretty line, generic line, shape, element type, space id or name, words, source line:col)
EXPECTED = {
    "sc_vec_basic": [(6, 7, (16,), "f32", 201, 16, "312:6")],
    "sc_vec_memspaces": [
        (6, 7, (256,), "f32", 201, 256, "339:6"),
        (7, 8, (4096,), "f32", 202, 4096, "339:6"),
        (23, 24, (32,), "i32", 0, 32, "336:8"),
        (32, 33, (16,), "f32", 201, 16, "335:10"),
    ],
    "sc_vec_over_bound_nested": [
        (6, 7, (64,), "i32", 201, 64, "413:6"),
        *[(line, line + 1, (23440,), "f32", 201, 23440, "408:8") for line in (14, 22, 30, 38, 46, 54)],
    ],
    "sc_vec_siblings_under_bound": [
        *[(p, g, (23440,), "f32", 201, 23440, "431:8")
          for p, g in ((6, 11), (38, 43), (70, 75), (102, 107), (134, 139), (166, 171))],
        (207, 213, (100000,), "f32", 201, 100000, "438:8"),
    ],
    # TensorCore kernels: vmem is the TensorCore's VMEM, a named space of its own.
    "tc_loops_scoped": [
        (20, 30, (8, 128), "f32", "vmem", 1024, "145:6"),
        (55, 67, (8, 128), "f32", "vmem", 1024, "152:6"),
        (56, 68, (8, 128), "f32", "vmem", 1024, "152:6"),
        (107, 119, (16, 128), "f32", "vmem", 2048, "160:6"),
        (132, 145, (8, 128), "bf16", "vmem", 512, "166:6"),
    ],
    "tc_nested_scopes": [
        (5, 6, (16, 128), "f32", "vmem", 2048, "125:4"),
        (6, 7, (8,), "i32", 0, 8, "125:4"),
        (21, 22, (16, 128), "bf16", "vmem", 1024, "123:6"),
        (33, 34, (16, 128), "f32", "vmem", 2048, "122:8"),
    ],
    "tc_scoped_basic": [(5, 6, (8, 128), "f32", "vmem", 1024, "99:4")],
}


@pytest.mark.parametrize("kernel", sorted(EXPECTED))
@pytest.mark.parametrize("form", ["pretty", "generic"])
def test_every_mosaic_alloca_is_read_exactly(mosaic, kernel, form):
    name = f"{kernel}.mlir" if form == "pretty" else f"{kernel}.generic.mlir"
    dump = load(mosaic / name)
    # The only note: semaphores are counted on an assumed size.
    assert [d.message for d in dump.diagnostics if "tpu.sem_alloc" not in d.message] == []
    got = [
        (r.line, r.shape, r.element_type,
         r.space_id if r.space_id is not None else r.space_name,
         r.words, f"{r.loc.line}:{r.loc.col}", r.loc.file, r.op_form)
        for r in dump.records if r.kind == "alloca"
    ]
    want = [
        (pretty if form == "pretty" else generic, shape, element, space, words, source,
         "pallas_kernels.py", form)
        for pretty, generic, shape, element, space, words, source in EXPECTED[kernel]
    ]
    assert got == want


def _overlaps(records):
    """Which pairs of allocas are live at the same time (program points differ between
    forms: the pretty printer elides implicit terminators such as `scf.yield`)."""
    return [[a.order <= b.live_end and b.order <= a.live_end for b in records]
            for a in records]


def test_pretty_and_generic_forms_agree_on_structure(mosaic):
    for kernel in EXPECTED:
        pretty = load(mosaic / f"{kernel}.mlir").records
        generic = load(mosaic / f"{kernel}.generic.mlir").records
        assert [(r.scope_op, r.scope_path, r.func, r.loc.names) for r in pretty] == [
            (r.scope_op, r.scope_path, r.func, r.loc.names) for r in generic], kernel
        assert _overlaps(pretty) == _overlaps(generic), kernel


def test_name_chain_of_a_nested_scope_alloca(mosaic):
    record = [r for r in load(mosaic / "sc_vec_over_bound_nested.mlir").records
              if r.kind == "alloca"][2]
    assert record.name == "%alloca_1"
    assert record.loc.names == (
        "run_scoped:", "run_scoped",
        "build_sc_vec_over_bound_nested.<locals>.f.<locals>.sc_vec_over_bound_nested_kernel"
        ".<locals>.level",
    )
    # The call site's caller is the `body` frame at line 407.
    assert [(c.line, c.col) for c in record.loc.callers] == [(407, 10)]
    assert record.scope_op == "tpu.region"
    assert record.func == "sc_vec_over_bound_nested_kernel"
    assert record.core_type == "sc_vector_subcore"
