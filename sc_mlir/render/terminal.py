"""Terminal renderers (rich). They format records; they never read MLIR."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sc_mlir.model import Allocation
from sc_mlir.scan import Diagnostic


def short_path(path: str, base: str | None = None) -> str:
    if base:
        try:
            rel = os.path.relpath(path, base if os.path.isdir(base) else os.path.dirname(base))
            if not rel.startswith(".."):
                return rel
        except ValueError:
            pass
    return path


def format_words(words: int | None) -> str:
    return "?" if words is None else f"{words:,}"


def space_label(record: Allocation) -> str:
    if record.space_id is not None:
        return f"{record.space_id} {record.space_name}"
    return record.space_name


def allocation_tables(records: Sequence[Allocation], base: str | None = None) -> list[Table]:
    """One table per (file, func), rows in program order: fits an 80-column terminal."""
    groups: dict[tuple[str, str], list[Allocation]] = defaultdict(list)
    for r in records:
        groups[(r.file, r.func)].append(r)
    tables = []
    for (file, func), rows in groups.items():
        title = f"{short_path(file, base)}  func {func or '(none)'}"
        table = Table(title=title, title_justify="left", header_style="bold")
        table.add_column("line:col", no_wrap=True)
        table.add_column("name", no_wrap=True)
        table.add_column("type", overflow="fold")
        table.add_column("space", no_wrap=True)
        table.add_column("words", justify="right", no_wrap=True)
        table.add_column("source", overflow="fold")
        for r in rows:
            table.add_row(f"{r.line}:{r.col}", r.name or "(none)", r.type, space_label(r),
                          format_words(r.words), r.loc.short())
        tables.append(table)
    return tables


def space_totals(records: Sequence[Allocation]) -> Table:
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in records:
        entry = totals[space_label(r)]
        entry[0] += 1
        if r.words is None:
            entry[2] += 1
        else:
            entry[1] += r.words
    table = Table(title="allocas per memory space (sum of words, not a peak)",
                  header_style="bold")
    table.add_column("space")
    table.add_column("allocas", justify="right")
    table.add_column("words", justify="right")
    table.add_column("of unknown size", justify="right")
    for label, (count, words, unknown) in sorted(totals.items()):
        table.add_row(label, str(count), f"{words:,}", str(unknown) if unknown else "")
    return table


def print_diagnostics(console: Console, diagnostics: Sequence[Diagnostic], limit: int = 20
                      ) -> None:
    if not diagnostics:
        return
    console.print(Text(f"{len(diagnostics)} note(s) on the input:", style="bold yellow"))
    for diag in diagnostics[:limit]:
        where = f"{diag.file}:{diag.line}:{diag.col}" if diag.line else diag.file
        console.print(Text(f"  {where}: {diag.message}"))
        if diag.quote:
            console.print(Text(f"      {diag.quote}", style="dim"))
    if len(diagnostics) > limit:
        console.print(Text(f"  ... and {len(diagnostics) - limit} more "
                           "(--format json lists them all)", style="dim"))
