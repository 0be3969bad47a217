"""Figures draw what the analysis says, and stay legible with hundreds of allocas."""

from __future__ import annotations

import random
import warnings

import pytest
from conftest import FIXTURES

import sc_mlir
from sc_mlir.render.plots import figure_png


@pytest.fixture(scope="module")
def sample():
    return sc_mlir.load(sc_mlir.example_path()).analyze()


def texts(figure) -> list[str]:
    return [t.get_text() for ax in figure.axes for t in ax.texts]


def test_stack_plot_draws_every_alloca_the_bound_and_the_crossing(sample):
    figure = sample.plot_stack("sc_embedding_lookup_fwd", 201)
    [ax] = figure.axes
    # Two rectangles per alloca: the scope's reservation and the live range.
    assert len(ax.patches) == 2 * 8
    assert any("%232 crosses: 140,704 > 131,071" in t and "model/embedding.py:89:12" in t
               for t in texts(figure))
    assert any(t.startswith("bound 131,071") for t in texts(figure))
    assert max(line.get_ydata().max() for line in ax.lines if len(line.get_ydata()) > 2) == 46880
    assert figure_png(figure)[:8] == b"\x89PNG\r\n\x1a\n"


def test_contributors_plot_ranks_the_stack_at_the_crossing(sample):
    figure = sample.plot_contributors("sc_embedding_lookup_fwd", 201)
    [ax] = figure.axes
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0].startswith("%227") and labels[-1].startswith("%202")
    assert any("100% cum." in t for t in texts(figure))


def test_contributors_at_the_peak_when_nothing_crosses(sample):
    figure = sample.plot_contributors("sc_embedding_update", 201)
    assert "at the stack peak" in figure.axes[0].get_title(loc="left")


def test_diff_plot():
    change = sc_mlir.diff(FIXTURES / "diff/limit_halved/before", FIXTURES / "diff/limit_halved/after")
    figure = sc_mlir.plot_diff(change)
    _, right = figure.axes
    assert [t.get_text() for t in right.texts] == ["-11,720", "-11,720"]
    assert "before:" in figure.get_suptitle() and "after:" in figure.get_suptitle()


def many_allocas(n: int = 200) -> str:
    rng = random.Random(7)
    lines = ["func.func @many(%f: f32, %i: index) {"]
    depth = 0
    for i in range(n):
        if rng.random() < 0.15 and depth < 6:
            lines.append('"tpu.region"() ({')
            depth += 1
        words = rng.choice([8, 16, 64, 128, 512, 1024, 4096, 16384])
        lines.append(f'%a{i} = memref.alloca() : memref<{words}xf32, 201> loc("big.py":{i}:4)')
        if rng.random() < 0.7:
            lines.append(f"memref.store %f, %a{i}[%i] : memref<{words}xf32, 201>")
        if depth and rng.random() < 0.12:
            lines.append('"tpu.yield"() : () -> ()\n}) : () -> ()')
            depth -= 1
    lines.extend(['"tpu.yield"() : () -> ()\n}) : () -> ()'] * depth)
    lines.append("return\n}")
    return "\n".join(lines) + "\n"


def _overlapping(figure) -> list[tuple[str, str]]:
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for ax in figure.axes for t in ax.texts
             if t.get_text()]
    return [(a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1:]
            if box_a.overlaps(box_b)]


def test_two_hundred_allocas_stay_legible(tmp_path):
    path = tmp_path / "many.mlir"
    path.write_text(many_allocas())
    analysis = sc_mlir.load(path).analyze(bounds={"201": 200_000})
    report = analysis.reports[0]
    assert len(report.allocas) == 200
    stack = analysis.plot_stack("many", 201)
    labels = [t for t in texts(stack) if "w\n" in t or "crosses" in t]
    assert 1 <= len(labels) <= 12
    assert _overlapping(stack) == []
    legend = [t.get_text() for t in stack.axes[0].get_legend().get_texts()]
    assert any("smaller allocas not labelled" in t for t in legend)
    bars = analysis.plot_contributors("many", 201)
    ticks = [t.get_text() for t in bars.axes[0].get_yticklabels()]
    assert len(ticks) == 16 and ticks[-1].endswith("smaller allocas")


def test_diff_plot_title_names_files_not_paths():
    before, after = FIXTURES / "diff/limit_halved/before", FIXTURES / "diff/limit_halved/after"
    figure = sc_mlir.plot_diff(sc_mlir.diff(before, after))
    assert figure.get_suptitle() == "before: before  →  after: after"
    assert str(FIXTURES) not in figure.get_suptitle()


def test_legends_count_in_good_grammar(tmp_path):
    # Four allocas of 20,000 words, one on another: their labels never overlap.
    text = "func.func @f() {\n" + "".join(
        f"  %a{i} = memref.alloca() : memref<20000xf32, 201>\n" for i in range(4)
    ) + "  return\n}\n"
    path = tmp_path / "f.mlir"
    path.write_text(text)
    analysis = sc_mlir.load(path).analyze()
    for labels, expected in ((3, "1 smaller alloca not labelled"),
                             (2, "2 smaller allocas not labelled")):
        figure = analysis.plot_stack("f", 201, labels=labels)
        assert len([t for t in texts(figure) if t.startswith("%a")]) == labels
        legend = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
        assert [t for t in legend if "not labelled" in t] == [expected]


def test_counts_too_long_for_a_label_are_printed_short(tmp_path):
    # 30 dims of 10^9 f32: 10^270 words. Printed whole, its label (a 360-character count)
    # left no room for the axes: matplotlib warned on the user's terminal and laid nothing
    # out. Labels and titles print it as 1.00e270, and the layout holds.
    huge = "memref<" + "1000000000x" * 30 + "f32, 201>"
    text = ("func.func @f() {\n  %a = memref.alloca() : memref<64xf32, 201>\n"
            f"  %b = memref.alloca() : {huge}\n  return\n}}\n")
    path = tmp_path / "huge.mlir"
    path.write_text(text)
    analysis = sc_mlir.load(path).analyze()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stack, bars = analysis.plot_stack("f", 201), analysis.plot_contributors("f", 201)
        figure_png(stack), figure_png(bars)
    assert any(t.startswith("%b crosses: 1.00e270 > 131,071") for t in texts(stack))
    assert any(t.startswith("1.00e270  (") for t in texts(bars))
    assert "(1.00e270 words)" in bars.axes[0].get_title(loc="left")
