"""HTML renderings for notebooks (`_repr_html_`). Every string from a dump is escaped."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sc_mlir.analysis import Analysis


def _n(words: int | None) -> str:
    return "?" if words is None else f"{words:,}"


def analysis_summary_html(analysis: Analysis) -> str:
    rows = []
    for r in analysis.reports:
        crossing = ""
        if r.crossing is not None:
            c = r.crossing
            crossing = (f"{escape(c.alloca.name)} at line {c.alloca.record.line}: "
                        f"{c.offset_upper_bound_words:,} &gt; {c.bound_words:,}")
        rows.append(
            "<tr>" + "".join(f"<td>{cell}</td>" for cell in (
                escape(r.verdict), escape(r.func), escape(r.space_label), _n(r.bound_words),
                _n(r.stack_peak_words), _n(r.liveness_peak_words), _n(r.packed_peak_words),
                str(len(r.allocas)), crossing, escape(r.file))) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in (
        "verdict", "func", "space", "bound", "stack peak", "liveness peak", "packed",
        "allocas", "crossing", "file"))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
