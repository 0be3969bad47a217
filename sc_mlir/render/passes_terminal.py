"""Pass timelines in the terminal (their JSON and CSV rows: formats/passes_rows.py). Deltas are
AFTER the pass minus BEFORE it: "+" means the pass grew the stack."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sc_mlir.compare.passes import CROSSING_VERDICTS, PassChange, PassStep, PassTimelines, Timeline
from sc_mlir.formats.passes_rows import (
    change_object,
)
from sc_mlir.render.diff_terminal import SHORT, signed
from sc_mlir.support.numbers import ABSENT, num
from sc_mlir.support.paths import short_path


def changed_steps(t: Timeline) -> list[PassStep]:
    """The passes worth showing in a long timeline: the first, the last, and those after
    which a peak or the verdict changed."""
    shown = []
    previous: PassStep | None = None
    for i, s in enumerate(t.steps):
        if (previous is None or i == len(t.steps) - 1
                or (s.stack_peak_words, s.liveness_peak_words, s.verdict)
                != (previous.stack_peak_words, previous.liveness_peak_words, previous.verdict)):
            shown.append(s)
        previous = s
    return shown


def _headline(t: Timeline, source: str) -> Text:
    bound = f"bound {t.bound_words:,}" if t.bound_words is not None else "bound unknown"
    where = f"{t.module} " if t.module else ""
    stream = short_path(t.stream, source)
    return Text.assemble(("func ", "bold"), (f"{where}{t.func}", "bold"),
                         f" · space {t.space_label} · {bound} · {len(t.steps)} pass(es)"
                         + (f" · {stream}" if stream not in ("", ".") else ""))


def _change_text(label: str, change: PassChange, style: str) -> Text:
    delta = change.delta_stack_words
    before = "not dumped" if change.stack_before_words is None \
        else f"{change.stack_before_words:,}"
    return Text.assemble(
        (f"{label} ", style), (f"#{change.index} {change.arg or change.pass_name}", "bold"),
        f" ({change.pass_name}): stack peak {before} → {change.stack_after_words:,}",
        (f" ({signed(delta)})" if delta is not None else "", style))


def print_timelines(console: Console, result: PassTimelines, top: int = 10) -> None:
    console.print(Text.assemble(("pass timelines of ", "bold"), result.source,
                                f": {result.passes} pass dump(s), "
                                f"{len(result.timelines)} (func, memory space) timeline(s)"))
    if not result.timelines:
        console.print("No memref.alloca in any pass dump.")
        return
    console.print(Text("Δ is after the pass minus before it: + the pass grew the stack",
                       style="dim"))
    for t in result.timelines:
        console.print()
        console.print(_headline(t, result.source))
        if t.first_crossing is not None:
            console.print(_change_text("first crosses the bound after pass", t.first_crossing,
                                       "red"))
        elif t.largest_growth is not None:
            console.print(_change_text("never crosses; largest growth at pass",
                                       t.largest_growth, "yellow"))
        else:
            console.print(Text("never crosses; no pass grew the stack", style="green"))
        shown = changed_steps(t)
        table = Table(box=None, padding=(0, 1), header_style="bold")
        for name, justify in (("#", "right"), ("pass", "left"), ("stack", "right"),
                              ("Δ", "right"), ("live", "right"), ("packed", "right"),
                              ("verdict", "left")):
            table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
        previous_stack: dict[int, int] = {}
        for i, s in enumerate(t.steps):
            previous_stack[s.index] = t.steps[i - 1].stack_peak_words if i else s.stack_peak_words
        crossing_index = t.first_crossing.index if t.first_crossing else None
        for s in shown:
            delta = s.stack_peak_words - previous_stack[s.index]
            style = "red" if s.verdict in CROSSING_VERDICTS else ""
            name = (s.arg or s.pass_name) + (" (failed)" if s.failed else "")
            table.add_row(str(s.index), Text(name, style="bold" if s.index == crossing_index
                                              else ""),
                          f"{s.stack_peak_words:,}", Text(signed(delta), style=_style(delta)),
                          f"{s.liveness_peak_words:,}", f"{s.packed_peak_words:,}",
                          Text(SHORT.get(s.verdict, s.verdict), style=style))
        console.print(table)
        if len(shown) < len(t.steps):
            console.print(Text(f"{len(t.steps) - len(shown)} pass(es) that changed no peak "
                               "not shown", style="dim"))
        change = t.first_crossing or t.largest_growth
        if change is not None and change.edits:
            print_changes(console, change, top)


def print_changes(console: Console, change: PassChange, top: int) -> None:
    table = Table(title=f"what pass #{change.index} {change.arg or change.pass_name} changed",
                  title_justify="left", header_style="bold", box=None, padding=(0, 1))
    table.add_column("kind", no_wrap=True)
    table.add_column("alloca", no_wrap=True)
    table.add_column("words before → after", justify="right", no_wrap=True)
    table.add_column("Δ", justify="right", no_wrap=True)
    table.add_column("source / scope", overflow="fold", ratio=1)
    for e in change.edits[:top]:
        row = change_object(e)
        name = str(row["name"]) if row["name_before"] in (None, row["name"]) \
            else f"{row['name_before']} → {row['name']}"
        words = f"{num(row['words_before'], ABSENT)} → {num(row['words_after'], ABSENT)}"
        where = str(row["loc"])
        if row["kind"] == "moved" or (row["scope_before"] and row["scope_after"]
                                      and row["scope_before"] != row["scope_after"]):
            where += f"  {row['scope_before']} → {row['scope_after']}"
        delta = int(row["delta_words"])  # type: ignore[call-overload]
        table.add_row(str(row["kind"]), name, words, Text(signed(delta), style=_style(delta)),
                      where)
    if len(change.edits) > top:
        table.add_row(f"+{len(change.edits) - top} more", "", "", "", "")
    console.print(table)


def _style(delta: int) -> str:
    return "red" if delta > 0 else "green" if delta < 0 else ""
