"""A diff, rendered. Every rendering names the direction: BEFORE -> AFTER, and signed
deltas where "+" means the value grew in AFTER."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sc_mlir.compare.diff import DiffResult, SpaceChange
from sc_mlir.formats.diff_rows import edit_object
from sc_mlir.render.terminal import fitted

# Short verdict words for narrow terminal tables (JSON keeps the full ones).
SHORT = {"allocator-limited": "limited", "unknown-bound": "unknown", "overflow": "overflow",
         "fits": "fits"}


def signed(value: int) -> str:
    return f"{value:+,}" if value else "0"


def print_diff(console: Console, result: DiffResult, top: int) -> None:
    console.print(Text.assemble(("before: ", "bold"), result.before, ("  →  after: ", "bold"),
                                result.after))
    console.print(Text("deltas are AFTER minus BEFORE: + grew in after, - shrank", style="dim"))
    console.print(Text("stack peak per (func, memory space), largest change first",
                       style="bold"))
    by_func: dict[str, list[SpaceChange]] = {}
    for c in result.spaces:
        func = c.func if c.func_before in (None, c.func) else f"{c.func_before} → {c.func}"
        by_func.setdefault(func, []).append(c)
    for func, changes in by_func.items():
        table = Table(title=Text(f"func {func}"), title_justify="left", header_style="bold",
                      box=None, padding=(0, 1))
        table.add_column("space", no_wrap=True)
        table.add_column("before → after", justify="right", no_wrap=True)
        table.add_column("Δ", justify="right", no_wrap=True)
        table.add_column("verdict", no_wrap=True)
        table.add_column("after vs bound", justify="right", no_wrap=True)
        for c in changes:
            b, a = c.before, c.after
            versus = ""
            if a is not None and a.bound_words is not None:
                versus = (f"{c.still_over_words:,} over" if a.crossing
                          else f"{c.now_free_words:,} free")
            peaks = (f"{b.stack_peak_words:,}" if b else "—") + " → " + (
                f"{a.stack_peak_words:,}" if a else "—")
            verdicts = (SHORT.get(b.verdict, b.verdict) if b else "—") + " → " + (
                SHORT.get(a.verdict, a.verdict) if a else "—")
            table.add_row(Text(c.space_label), peaks,
                          Text(signed(c.delta_words), style=_style(c.delta_words)),
                          verdicts, versus)
        console.print(fitted(console, table))
    edits = result.changed
    unchanged = len(result.allocations) - len(edits)
    console.print()
    if not edits:
        console.print(Text(f"No alloca changed ({unchanged} unchanged).", style="green"))
        return
    table = Table(title=f"allocas that changed, largest change first ({unchanged} unchanged)",
                  title_justify="left", header_style="bold", box=None, padding=(0, 1))
    table.add_column("kind", no_wrap=True)
    table.add_column("func", no_wrap=True)
    table.add_column("before", no_wrap=True)
    table.add_column("after", no_wrap=True)
    table.add_column("Δ words", justify="right", no_wrap=True)
    table.add_column("source / scope")  # a location, then scope paths: wraps between them
    shown = edits[:top] if top else edits
    for e in shown:
        row = edit_object(e)
        before = f"{row['name_before']} {row['words_before']:,}" if row["name_before"] is not None \
            and row["words_before"] is not None else "—"
        after = f"{row['name_after']} {row['words_after']:,}" if row["name_after"] is not None \
            and row["words_after"] is not None else "—"
        where = str(row["loc"])
        if row["kind"] == "moved":
            where += f"  {row['scope_before']} → {row['scope_after']}"
        table.add_row(str(row["kind"]), Text(e.func), Text(before), Text(after),
                      Text(signed(e.delta_words), style=_style(e.delta_words)), Text(where))
    if len(edits) > len(shown):
        table.add_row(f"+{len(edits) - len(shown)} more", "", "", "", "", "")
    console.print(fitted(console, table))


def _style(delta: int) -> str:
    return "red" if delta > 0 else "green" if delta < 0 else ""
