"""Properties that tie the three views together, on random programs (hypothesis).

For every (func, space): the interference graph's heaviest clique equals the liveness
peak; the scoped stack and the packed assignment both need at least that much; the packed
assignment never overlaps two allocas that are live at the same time.
"""

from __future__ import annotations

import os

import networkx as nx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sc_mlir.analysis import analyze_records
from sc_mlir.model.allocation import build_allocations
from sc_mlir.model.bounds import Bounds
from sc_mlir.read.scan import scan_text

EXAMPLES = int(os.environ.get("SC_MLIR_PROPERTY_EXAMPLES", "60"))
REGION_OPS = ["tpu.region", "scf.for", "scf.if", "my.unknown_region", "memref.alloca_scope"]


@st.composite
def programs(draw, depth: int = 0, counter: list[int] | None = None,
             visible: tuple[str, ...] = ()) -> list[str]:
    """Lines of a func body: allocas, uses of visible allocas, nested regions."""
    counter = counter if counter is not None else [0]
    lines: list[str] = []
    names = list(visible)
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["alloca", "alloca", "use", "region"] if depth < 3
                                    else ["alloca", "use"]))
        if kind == "alloca":
            counter[0] += 1
            name = f"%a{counter[0]}"
            words = draw(st.integers(1, 64))
            lines.append(f"{name} = memref.alloca() : memref<{words}xf32, 201>")
            names.append(name)
        elif kind == "use" and names:
            target = draw(st.sampled_from(names))
            lines.append(f"memref.store %f, {target}[%i] : memref<?xf32, 201>")
        elif kind == "region":
            op = draw(st.sampled_from(REGION_OPS))
            body = draw(programs(depth + 1, counter, tuple(names)))
            if op == "scf.for":
                head, tail = "scf.for %i = %c0 to %c4 step %c1 {", "}"
            elif op == "scf.if":
                head, tail = "scf.if %c {", "}"
            elif op == "memref.alloca_scope":
                head, tail = "memref.alloca_scope {", "}"
            else:
                head, tail = f'"{op}"() ({{', "}) : () -> ()"
            lines.append(head)
            lines.extend("  " + line for line in body)
            lines.append(tail)
    return lines


def program_text(body: list[str]) -> str:
    inner = "\n".join("  " + line for line in body)
    return f"func.func @k(%f: f32, %i: index, %c: i1) {{\n{inner}\n  return\n}}\n"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_heaviest_clique_is_the_liveness_peak_and_bounds_every_allocator(body):
    text = program_text(body)
    records, diagnostics = build_allocations(scan_text(text))
    assert diagnostics == []
    assert len(records) == sum("memref.alloca()" in line for line in body)
    for report in analyze_records(records, Bounds.default()):
        intervals = [(a.live_start, a.live_end) for a in report.allocas]
        graph = nx.Graph()
        for i, a in enumerate(report.allocas):
            graph.add_node(i, words=a.words)
        for i, (s1, e1) in enumerate(intervals):
            for j, (s2, e2) in enumerate(intervals[:i]):
                if s1 <= e2 and s2 <= e1:
                    graph.add_edge(i, j)
        from sc_mlir.analysis.interference import interference_edges

        ours = interference_edges([(s, e, 0) for s, e in intervals])
        assert sorted(ours) == sorted((min(i, j), max(i, j)) for i, j in graph.edges)
        _, heaviest = nx.max_weight_clique(graph, weight="words")
        assert heaviest == report.liveness_peak_words
        assert report.stack_peak_words >= report.liveness_peak_words
        assert report.packed_peak_words >= report.liveness_peak_words
        for i, j in graph.edges:
            a, b = report.allocas[i], report.allocas[j]
            assert (a.packed_offset + a.words <= b.packed_offset
                    or b.packed_offset + b.words <= a.packed_offset), (a.record.name,
                                                                        b.record.name)
        for a in report.allocas:
            assert a.live_start <= a.live_end <= max(a.record.scope_end, a.live_start)
