"""Explanations of logged failures in the terminal (their JSON: formats/explain_rows.py)."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from sc_mlir.failures.explain import Explanation
from sc_mlir.failures.logs import AllocationFailure
from sc_mlir.render.analysis_terminal import STYLE
from sc_mlir.render.terminal import fitted
from sc_mlir.support.paths import short_path


def _para(text: str, style: str = "") -> Padding:
    return Padding(Text(text, style=style), (0, 0, 0, 2), expand=False)


def explanation_view(e: Explanation, base: str, console: Console | None = None
                     ) -> RenderableType:
    """One failure, explained; with the `console` it is for, tables too wide for it are
    printed as wrapped rows."""
    f = e.failure
    parts: list[RenderableType] = []
    lines = ", ".join(str(n) for n in f.log_lines[:5]) + (" ..." if len(f.log_lines) > 5 else "")
    title = Text()
    title.append(f"{f.kind} ", style="bold")
    title.append(f"at log line {lines}")
    parts.append(title)
    if not isinstance(f, AllocationFailure):
        parts.append(_para(f.text, "dim"))
        parts.extend(_para("→ " + advice) for advice in e.advice)
        return Group(*parts)
    where = f" at {f.location}" if f.location else ""
    parts.append(_para(
        f"The compiler's stack reached {f.offset_upper_bound_words:,} words{where}, over the "
        f"bound of {f.bound_words:,} words in memory space {f.memory_space}"
        + (f", when allocating {f.allocating_words:,} words." if f.allocating_words else ".")))
    if f.note_op:
        parts.append(_para(f"note: {f.note_op}", "dim"))
    parts.extend(_para(note, "dim") for note in e.notes)
    if e.matched is None:
        parts.append(_para(f"No alloca in the dump matches: {e.no_match_reason}", "yellow"))
    else:
        r = e.matched.record
        parts.append(_para(
            f"Matched {r.name or '(unnamed)'} ({r.words:,} words, {r.type}) in func {r.func} at "
            f"{short_path(r.file, base)}:{r.line}:{r.col}"
            + (f", from {r.loc.short()}" if r.loc.short() else "") + "."))
        parts.append(_para("because: " + "; ".join(e.matched.reasons), "dim"))
        if e.agrees:
            parts.append(_para(
                f"Checked: the scoped-stack simulation gives the same upper bound, "
                f"{e.simulated_upper_bound_words:,} words.", "green"))
        else:
            parts.append(_para(
                f"The simulation gives {e.simulated_upper_bound_words:,} words, "
                f"{abs(e.delta_words or 0):,} {'less' if (e.delta_words or 0) > 0 else 'more'} "
                "than the log.", "yellow"))
            parts.extend(_para("possible reason: " + reason, "yellow")
                         for reason in e.disagreement)
        if e.verdict:
            parts.append(_para(f"Verdict: {e.verdict}", STYLE.get(e.verdict, "")))
    for advice in e.advice:
        parts.append(_para("→ " + advice))
    if e.matched is None and e.candidates:
        table = Table(title="closest allocas", title_justify="left", box=None,
                      header_style="bold")
        table.add_column("name", no_wrap=True)
        table.add_column("words", justify="right", no_wrap=True)
        table.add_column("where", no_wrap=True)  # a path: whole, or the prose gives way
        table.add_column("why", overflow="fold")
        for c in e.candidates:
            table.add_row(c.record.name, f"{c.record.words or 0:,}",
                          f"{short_path(c.record.file, base)}:{c.record.line}",
                          "; ".join(c.reasons))
        parts.append(fitted(console, table, indent=2) if console is not None
                     else Padding(table, (0, 0, 0, 2), expand=False))
    return Group(*parts)


def print_explanations(console: Console, explanations: list[Explanation], log: str,
                       base: str) -> None:
    if not explanations:
        console.print(Text(f"No SparseCore allocation failure (E3000, E3001, fixed-size) found "
                           f"in {log}.", style="green"))
        return
    console.print(Text(f"{len(explanations)} allocation failure(s) in {log}", style="bold"))
    for e in explanations:
        console.print()
        console.print(explanation_view(e, base, console))
