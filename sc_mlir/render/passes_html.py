"""Pass timelines as HTML: the notebook tables and the self-contained report (one figure
per timeline, embedded as PNG; every string from a dump escaped)."""

from __future__ import annotations

from html import escape

from sc_mlir.compare.passes import PassChange, PassTimelines, Timeline
from sc_mlir.formats.passes_rows import change_object
from sc_mlir.render.html import _cell, _page, _verdict, diagnostics_html, png_img, table
from sc_mlir.render.passes_terminal import changed_steps
from sc_mlir.support.numbers import ABSENT, num
from sc_mlir.support.paths import short_path


def _change_html(title: str, change: PassChange) -> str:
    delta = change.delta_stack_words
    before = "not dumped" if change.stack_before_words is None \
        else f"{change.stack_before_words:,}"
    head = (f"<p><b>{escape(title)} #{change.index} {escape(change.arg or change.pass_name)}"
            f"</b> ({escape(change.pass_name)}): stack peak {before} → "
            f"{change.stack_after_words:,}"
            + (f" ({delta:+,})" if delta is not None else "") + "</p>")
    if not change.edits:
        return head
    rows = []
    for e in change.edits:
        row = change_object(e)
        after = "—" if row["kind"] == "removed" else row["name"]
        rows.append("<tr>" + _cell(row["kind"]) + _cell(row["name_before"] or "—")
                    + _cell(after) + _cell(num(row["words_before"], ABSENT), True)
                    + _cell(num(row["words_after"], ABSENT), True)
                    + _cell(f"{row['delta_words']:+,}", True) + _cell(row["loc"])
                    + _cell(row["scope_before"]) + _cell(row["scope_after"]) + "</tr>")
    return head + table(("kind", "before", "after", "words before", "words after",
                         "Δ words", "source", "scope before", "scope after"), rows)


def _steps_table(t: Timeline) -> str:
    crossing = t.first_crossing.index if t.first_crossing else None
    rows = []
    for s in changed_steps(t):
        css = "crossing" if s.index == crossing else ""
        rows.append(f'<tr class="{css}">' + _cell(s.index, True)
                    + _cell((s.arg or s.pass_name) + (" (failed)" if s.failed else ""))
                    + _cell(s.pass_name) + _cell(s.stack_peak_words, True)
                    + _cell(s.liveness_peak_words, True) + _cell(s.packed_peak_words, True)
                    + _verdict(s.verdict) + "</tr>")
    hidden = len(t.steps) - len(rows)
    note = (f'<p class="note">{hidden} pass(es) after which no peak changed are not '
            "listed.</p>" if hidden else "")
    return table(("#", "pass", "name", "stack peak", "liveness peak", "packed", "verdict"),
                 rows) + note


def _summary_table(result: PassTimelines) -> str:
    rows = []
    for t in result.timelines:
        change = t.first_crossing or t.largest_growth
        what = ""
        if change is not None:
            what = (("crosses after" if t.first_crossing else "largest growth at")
                    + f" #{change.index} {change.arg or change.pass_name}")
        last = t.steps[-1] if t.steps else None
        rows.append("<tr>" + _cell(t.module + " " + t.func if t.module else t.func)
                    + _cell(t.space_label) + _cell(t.bound_words, True)
                    + _cell(len(t.steps), True)
                    + _cell(last.stack_peak_words if last else None, True)
                    + _verdict(last.verdict if last else None) + _cell(what) + "</tr>")
    return table(("func", "space", "bound", "passes", "last stack peak", "last verdict",
                  "which pass"), rows)


def timelines_tables(result: PassTimelines) -> str:
    """The notebook view: one row per (func, space) timeline."""
    return _summary_table(result)


def timelines_report(result: PassTimelines, max_sections: int = 12) -> str:
    from sc_mlir.render.passes_plot import plot_passes
    from sc_mlir.render.plots import figure_png

    title = f"sc-mlir passes: {result.source}"
    body = [f"<h1>{escape(title)}</h1>",
            f"<p>{result.passes} pass dump(s), {len(result.timelines)} (func, memory space) "
            "timeline(s). Δ is after the pass minus before it. Words are 4 bytes.</p>",
            _summary_table(result)]
    for t in result.timelines[:max_sections]:
        where = short_path(t.stream, result.source)
        body.append(f"<h2>{escape(t.module + ' ' if t.module else '')}{escape(t.func)} · "
                    f"memory space {escape(t.space_label)}"
                    + (f" · {escape(where)}" if where not in ("", ".") else "") + "</h2>")
        body.append(png_img(figure_png(plot_passes(t)),
                            f"peaks of {t.func} in space {t.space_label} per pass"))
        if t.first_crossing is not None:
            body.append(_change_html("First crosses the bound after pass", t.first_crossing))
        elif t.largest_growth is not None:
            body.append(_change_html("Never crosses; largest growth at pass",
                                     t.largest_growth))
        body.append(_steps_table(t))
    if len(result.timelines) > max_sections:
        body.append(f'<p class="note">{len(result.timelines) - max_sections} more '
                    "timeline(s) are in the table above only.</p>")
    body.append(diagnostics_html(result.diagnostics))
    return _page(title, "".join(body))
