"""HTML: tables for notebooks (`_repr_html_`) and self-contained report files.

A report is one file: CSS and a small table-sorting script inline, plots embedded as PNG
data URIs, nothing fetched from the network. Every string that comes from a dump or a log
is escaped.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from html import escape
from typing import TYPE_CHECKING

from sc_mlir.analysis.report import ALLOCATOR_LIMITED, FITS, OVERFLOW, UNKNOWN_BOUND
from sc_mlir.support.numbers import num
from sc_mlir.support.paths import short_path

if TYPE_CHECKING:
    from sc_mlir.analysis import Analysis, SpaceReport
    from sc_mlir.analysis.rollup import Rollup
    from sc_mlir.compare.diff import DiffResult
    from sc_mlir.failures.explain import Explanation
    from sc_mlir.read.scan import Diagnostic

VERDICT_CLASS = {OVERFLOW: "bad", ALLOCATOR_LIMITED: "warn", UNKNOWN_BOUND: "unknown",
                 FITS: "good"}

_CSS = """
body { font-family: system-ui, -apple-system, Segoe UI, sans-serif; margin: 2em; color: #222;
       max-width: 1200px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; } h3 { font-size: 1em; }
h1, h2, p { overflow-wrap: anywhere; }
.table-box { max-width: 100%; overflow-x: auto; margin: 0.8em 0; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: left; vertical-align: top; }
td { max-width: 32em; overflow-wrap: anywhere; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f3f3f3; cursor: pointer; user-select: none; }
th.sorted-asc::after { content: " ▲"; } th.sorted-desc::after { content: " ▼"; }
.bad { color: #b00; font-weight: 600; } .warn { color: #a60; font-weight: 600; }
.good { color: #070; } .unknown { color: #067; }
.dead { color: #888; } .crossing { background: #fde8e8; }
img.plot { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
.note { color: #555; font-size: 0.9em; } code { background: #f5f5f5; padding: 0 3px; }
"""

_SCRIPT = """
// sort keys: BEGIN
function sortKey(text) {
  var number = parseFloat(text.replace(/,/g, ''));
  return isNaN(number) || !/^[-+]?[\\d,.]+/.test(text) ? text : number;
}
// Numbers by value; text in natural order (%3 before %232), then numbers before text.
function compareKeys(x, y) {
  if (typeof x === 'number' && typeof y === 'number') { return x < y ? -1 : x > y ? 1 : 0; }
  if (typeof x === 'number') { return -1; }
  if (typeof y === 'number') { return 1; }
  return x.localeCompare(y, 'en', {numeric: true, sensitivity: 'base'});
}
// sort keys: END
document.addEventListener('DOMContentLoaded', function () {
  function key(cell) {
    return sortKey(cell.getAttribute('data-sort') || cell.textContent.trim());
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('th').forEach(function (th, column) {
      th.addEventListener('click', function () {
        var body = table.tBodies[0];
        var ascending = !th.classList.contains('sorted-asc');
        table.querySelectorAll('th').forEach(function (h) {
          h.classList.remove('sorted-asc', 'sorted-desc'); });
        th.classList.add(ascending ? 'sorted-asc' : 'sorted-desc');
        Array.from(body.rows).sort(function (a, b) {
          return compareKeys(key(a.cells[column]), key(b.cells[column])) *
            (ascending ? 1 : -1);
        }).forEach(function (row) { body.appendChild(row); });
      });
    });
    table.setAttribute('data-sortable-ready', '1');
  });
  document.querySelectorAll('img.plot').forEach(function (img) {
    function mark() {
      img.setAttribute('data-rendered', img.naturalWidth + 'x' + img.naturalHeight);
    }
    if (img.complete) { mark(); } else { img.addEventListener('load', mark); }
  });
});
window.addEventListener('load', function () {
  // For the browser test: whether anything made the page wider than the window.
  document.body.setAttribute('data-layout', document.documentElement.scrollWidth + 'in' +
                             window.innerWidth);
});
"""


def _cell(value: object, numeric: bool = False, css: str = "") -> str:
    """A table cell; text from the dump is escaped, whole numbers get thousands commas."""
    if numeric and (value is None or isinstance(value, int)):
        text = num(value)  # type: ignore[arg-type]
    else:
        text = "" if value is None else escape(str(value))
    classes = " ".join(c for c in ("n" if numeric else "", css) if c)
    return f'<td class="{classes}">{text}</td>' if classes else f"<td>{text}</td>"


def table(headers: Sequence[str], rows: Iterable[str], sortable: bool = True) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    css = ' class="sortable"' if sortable else ""
    # The box scrolls sideways when a table is wider than the page, never the page.
    return (f'<div class="table-box"><table{css}><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _verdict(verdict: str | None) -> str:
    if verdict is None:
        return "<td></td>"
    return f'<td class="{VERDICT_CLASS.get(verdict, "")}">{escape(verdict)}</td>'


# --- analysis ---------------------------------------------------------------------------


def spaces_table(reports: Sequence[SpaceReport], base: str | None = None) -> str:
    rows = []
    for r in reports:
        crossing = ""
        if r.crossing is not None:
            c = r.crossing
            crossing = (f"{c.alloca.name} at line {c.alloca.record.line}: "
                        f"{c.offset_upper_bound_words:,} &gt; {c.bound_words:,}")
        rows.append(
            "<tr>" + _verdict(r.verdict) + _cell(r.func) + _cell(r.space_label)
            + _cell(r.bound_words, True) + _cell(r.stack_peak_words, True)
            + _cell(None if r.percent_of_bound is None else f"{r.percent_of_bound:.1f}", True)
            + _cell(r.headroom_words, True)
            + _cell(r.liveness_peak_words, True) + _cell(r.packed_peak_words, True)
            + _cell(len(r.allocas), True) + f"<td>{crossing}</td>"
            + _cell(short_path(r.file, base) + (f" #{r.chunk}" if r.chunk else "")) + "</tr>")
    return table(("verdict", "func", "space", "bound", "stack peak", "% of bound", "headroom",
                  "liveness peak", "packed", "entries", "crossing", "file"), rows)


def analysis_summary_html(analysis: Analysis) -> str:
    """The notebook view of an Analysis: one row per (func, space), worst first."""
    return spaces_table(analysis.reports)


def allocas_table(report: SpaceReport) -> str:
    crossing = report.crossing.alloca if report.crossing else None
    point = crossing.live_start if crossing is not None else None
    rows = []
    for a in report.allocas:
        css = "crossing" if a is crossing else (
            "dead" if point is not None and a.on_stack_at_crossing and a.live_end < point else "")
        r = a.record
        rows.append(
            f'<tr class="{css}">' + _cell(a.name) + _cell(r.kind) + _cell(a.words, True)
            + _cell(r.type)
            + _cell(a.offset, True) + _cell(a.upper_bound, True)
            + _cell(f"{a.live_start}–{a.live_end}") + _cell(r.line, True)
            + _cell(r.last_use_line, True) + _cell(r.scope_op) + _cell(r.loc.short())
            + _cell(" > ".join(r.loc.names)) + "</tr>")
    return table(("name", "kind", "words", "type", "offset", "upper bound",
                  "live (program points)",
                  "line", "last use line", "scope", "source", "names"), rows)


def contributors_table(report: SpaceReport) -> str:
    if report.crossing is None:
        return ""
    rows = []
    for x in report.crossing.contributors:
        r = x.alloca.record
        rows.append("<tr>" + _cell(x.alloca.name) + _cell(r.kind) + _cell(x.alloca.words, True)
                    + _cell(f"{x.cumulative_percent:.1f}", True)
                    + f'<td class="{"" if x.live else "dead"}">'
                    + ("live" if x.live else "dead") + "</td>" + _cell(r.line, True)
                    + _cell(r.last_use_line, True) + _cell(r.loc.short()) + "</tr>")
    return table(("name", "kind", "words", "cumulative %", "at the crossing", "line",
                  "last use line",
                  "source"), rows)


def space_report_html(report: SpaceReport) -> str:
    """The notebook view of one SpaceReport: numbers, then every alloca."""
    return (f"<p><b>{escape(report.func)}</b>, memory space {escape(report.space_label)}: "
            f'<span class="{VERDICT_CLASS[report.verdict]}">{escape(report.verdict)}</span>; '
            f"stack peak {num(report.stack_peak_words)}, liveness peak "
            f"{num(report.liveness_peak_words)}, packed {num(report.packed_peak_words)}, bound "
            f"{num(report.bound_words)} ({escape(report.bound_source)}).</p>"
            + allocas_table(report))


def _explain_crossing(report: SpaceReport) -> str:
    c = report.crossing
    if c is None:
        return ""
    r = c.alloca.record
    parts = [
        f"<p>The scoped stack reaches <b>{c.offset_upper_bound_words:,}</b> words when "
        f"<b>{escape(c.alloca.name)}</b> ({num(r.words)} words, <code>{escape(r.type)}</code>) is "
        f"allocated at <code>{escape(r.file)}:{r.line}:{r.col}</code>, from "
        f"<code>{escape(r.loc.short() or 'an unknown location')}</code>; the bound is "
        f"{c.bound_words:,} words ({escape(report.bound_source)}), alignment "
        f"{report.align_bytes} bytes ({escape(report.align_source)}).</p>",
        f'<p class="note">As the compiler prints it: offset upper bound '
        f"({c.offset_upper_bound_words} words) exceeds the legitimate user allocatable offset "
        f"upper bound ({c.bound_words} words) in memory space "
        f"{escape(str(report.space_id if report.space_id is not None else report.space_name))}"
        f" when allocating {c.allocating_words} words.</p>",
    ]
    if report.verdict == ALLOCATOR_LIMITED:
        parts.append(f"<p>The liveness peak is {report.liveness_peak_words:,} words (a packed "
                     f"assignment needs {report.packed_peak_words:,}): <b>reuse would fit</b>. "
                     f"The scopes keep {c.dead_reserved_words:,} words reserved for "
                     f"{len(c.dead_reserved)} alloca(s) already past their last use.</p>")
    else:
        parts.append(f"<p>Even with perfect reuse {report.liveness_peak_words:,} words are live "
                     f"at once: <b>at least {report.must_free_words:,} words must go</b>.</p>")
    if c.fix:
        steps = "".join(f"<li>{escape(step.advice())}</li>" for step in c.fix)
        parts.append(f"<p>Cheapest fix for the func (fewest entries; dead-but-reserved first, "
                     f"then the smallest that suffice):</p><ul>{steps}</ul>")
        if c.fix_still_crosses is not None:
            parts.append(f"<p>With it the stack still crosses the bound at "
                         f"{escape(c.fix_still_crosses.name)}: more must go.</p>")
    return "".join(parts)


def png_img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="plot" alt="{escape(alt)}" src="data:image/png;base64,{data}">'


# Marks a file as a report of ours: the CLI replaces such a file without --force.
GENERATOR_MARK = '<meta name="generator" content="sc-mlir">'


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f"{GENERATOR_MARK}<title>{escape(title)}</title><style>{_CSS}</style>"
            f"<script>{_SCRIPT}</script></head><body>{body}</body></html>\n")


def groups_html(report: SpaceReport, by: str) -> str:
    """Who holds the stack peak of one (func, space), grouped `by`, largest first; the rows
    add up to the stack peak."""
    from sc_mlir.analysis.rollup import roll_up

    return rollup_html(roll_up(report, by))


def rollup_html(rollup: Rollup) -> str:
    """A roll-up as a heading and a table (also its notebook view)."""
    by = rollup.by
    rows = ["<tr>" + _cell(g.key) + _cell(g.n_allocas, True) + _cell(g.words, True)
            + _cell(f"{g.percent:.1f}", True)
            + _cell(", ".join(m.name for m in g.members)) + "</tr>" for g in rollup.groups]
    if rollup.padding_words:
        rows.append("<tr>" + _cell("(alignment padding)") + _cell(0, True)
                    + _cell(rollup.padding_words, True)
                    + _cell(f"{rollup.padding_percent:.1f}", True) + _cell("") + "</tr>")
    return (f"<h3>Who holds the stack peak ({rollup.total_words:,} words), by "
            f"{escape(by)}</h3>"
            + table((by, "entries", "words", "% of peak", "entries' names"), rows))


def analysis_report(analysis: Analysis, source: str, max_sections: int = 12,
                    group_by: str | None = None) -> str:
    """A self-contained HTML report of an analysis, with plots of the worst spaces; with
    `group_by`, each space's roll-up too."""
    from sc_mlir.analysis.rollup import roll_up
    from sc_mlir.render.plots import figure_png, plot_contributors, plot_groups, plot_stack

    title = f"sc-mlir analysis of {source}"
    counts: dict[str, int] = {}
    for r in analysis.reports:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    tally = ", ".join(f'<span class="{VERDICT_CLASS[v]}">{counts[v]} {escape(v)}</span>'
                      for v in (OVERFLOW, ALLOCATOR_LIMITED, UNKNOWN_BOUND, FITS) if v in counts)
    body = [f"<h1>{escape(title)}</h1>",
            f"<p>{len(analysis.reports)} (func, memory space) pair(s): {tally or 'none'}. "
            "Words are 4 bytes. <i>stack</i> is the scoped stack the compiler allocates on; "
            "<i>liveness</i> the most words live at once, the least any allocator needs; "
            "<i>packed</i> a greedy reuse-aware assignment.</p>",
            "<h2>Every (func, memory space), worst first</h2>",
            spaces_table(analysis.reports, source)]
    focus = [r for r in analysis.reports if r.crossing is not None][:max_sections]
    if not focus:
        focus = analysis.reports[: min(3, max_sections)]
    for report in focus:
        body.append(f'<h2 id="{escape(report.func)}-{escape(report.space_label)}">'
                    f"{escape(report.func)} · memory space {escape(report.space_label)} · "
                    f'<span class="{VERDICT_CLASS[report.verdict]}">'
                    f"{escape(report.verdict)}</span></h2>")
        body.append(f'<p class="note">{escape(short_path(report.file, source))}'
                    + (f" (after {escape(report.dump_header)})" if report.dump_header else "")
                    + "</p>")
        body.append(_explain_crossing(report))
        body.append(png_img(figure_png(plot_stack(report)),
                            f"scoped stack of {report.func}, space {report.space_label}"))
        if report.allocas:
            body.append(png_img(figure_png(plot_contributors(report)),
                                f"allocas on the stack of {report.func}"))
        if report.crossing is not None:
            body.append("<h3>Allocas on the stack at the crossing</h3>")
            body.append(contributors_table(report))
        if group_by is not None and report.allocas:
            body.append(groups_html(report, group_by))
            body.append(png_img(figure_png(plot_groups(report, roll_up(report, group_by))),
                                f"who holds the stack peak of {report.func}, by {group_by}"))
        body.append("<h3>Every alloca</h3>")
        body.append(allocas_table(report))
    if group_by is not None:
        shown = {id(r) for r in focus}
        rest = [r for r in analysis.reports if id(r) not in shown and r.allocas]
        if rest:
            body.append(f"<h2>Who holds the scratch in the other spaces, by "
                        f"{escape(group_by)}</h2>")
            for report in rest:
                body.append(f"<p><b>{escape(report.func)}</b> · memory space "
                            f"{escape(report.space_label)}</p>" + groups_html(report, group_by))
    body.append(diagnostics_html(analysis.diagnostics))
    return _page(title, "".join(body))


def diagnostics_html(diagnostics: Sequence[Diagnostic]) -> str:
    if not diagnostics:
        return ""
    rows = ["<tr>" + _cell(d.file) + _cell(d.line, True) + _cell(d.col, True)
            + _cell(d.message) + _cell(d.quote) + "</tr>" for d in diagnostics]
    return ("<h2>Notes on the input</h2>"
            + table(("file", "line", "col", "message", "text"), rows))


# --- diff ------------------------------------------------------------------------------


def diff_tables(result: DiffResult) -> str:
    from sc_mlir.formats.diff_rows import edit_object

    rows = []
    for c in result.spaces:
        b, a = c.before, c.after
        rows.append("<tr>" + _cell(c.func) + _cell(c.space_label)
                    + _cell(b.stack_peak_words if b else None, True)
                    + _cell(a.stack_peak_words if a else None, True)
                    + _cell(f"{c.delta_words:+,}", True)
                    + _verdict(b.verdict if b else None) + _verdict(a.verdict if a else None)
                    + _cell(c.still_over_words, True) + _cell(c.now_free_words, True) + "</tr>")
    spaces = table(("func", "space", "before: stack peak", "after: stack peak",
                    "Δ (after − before)", "before: verdict", "after: verdict",
                    "after: words over", "after: words free"), rows)
    changes = [edit_object(e) for e in result.changed]
    rows = ["<tr>" + _cell(e["kind"]) + _cell(e["func"]) + _cell(e["space"])
            + _cell(e["name_before"]) + _cell(e["name_after"])
            + _cell(e["words_before"], True) + _cell(e["words_after"], True)
            + _cell(f"{e['delta_words']:+,}", True) + _cell(e["loc"])
            + _cell(e["scope_before"]) + _cell(e["scope_after"]) + "</tr>" for e in changes]
    allocas = table(("kind", "func", "space", "before", "after", "words before", "words after",
                     "Δ words", "source", "scope before", "scope after"), rows)
    return spaces + "<h3>Allocas that changed</h3>" + (allocas if changes else "<p>none</p>")


def diff_summary_html(result: DiffResult) -> str:
    return (f"<p>before: <code>{escape(result.before)}</code> → after: "
            f"<code>{escape(result.after)}</code>; Δ = after − before, + grew in after.</p>"
            + diff_tables(result))


def diff_report(result: DiffResult) -> str:
    from sc_mlir.render.plots import figure_png, plot_diff

    title = f"sc-mlir diff: {result.before} → {result.after}"
    body = (f"<h1>{escape(title)}</h1>" + diff_summary_html(result)
            + png_img(figure_png(plot_diff(result)), "stack peaks before and after"))
    return _page(title, body)


# --- explanations -----------------------------------------------------------------------


def explanations_html(explanations: Sequence[Explanation]) -> str:
    if not explanations:
        return "<p>No SparseCore allocation failure in the log.</p>"
    parts = []
    for e in explanations:
        f = e.failure
        matched = ""
        if e.matched is not None:
            r = e.matched.record
            matched = (f"matched <b>{escape(r.name)}</b> ({num(r.words)} words) in "
                       f"<code>{escape(r.func)}</code> at <code>{escape(r.file)}:{r.line}:"
                       f"{r.col}</code>; simulated upper bound {num(e.simulated_upper_bound_words)}"
                       f" ({'agrees' if e.agrees else 'differs'})")
        elif e.no_match_reason:
            matched = escape(e.no_match_reason)
        advice = "".join(f"<li>{escape(a)}</li>" for a in e.advice)
        parts.append(f"<div><p><b>{escape(f.kind)}</b> at log line {f.log_line}: "
                     f"{escape(f.text)}</p><p>{matched}</p>"
                     + (f"<p>verdict: {escape(e.verdict)}</p>" if e.verdict else "")
                     + f"<ul>{advice}</ul></div>")
    return "".join(parts)
