"""Terminal renderers (rich). They format records; they never read MLIR.

Output to a pipe or a file is never wrapped: every row and sentence is one line, so that
`grep` finds whole names, types and paths. On a terminal narrower than a table, each row
is printed as its cells in a line that wraps between cells (and between the words of a
cell), never inside a name.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import IO, TYPE_CHECKING, cast

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from sc_mlir.model.allocation import HEAP, Allocation
from sc_mlir.support.numbers import num
from sc_mlir.support.paths import short_path

if TYPE_CHECKING:
    from sc_mlir.read.scan import Diagnostic

# A pipe or a file has no width: wide enough that rich never wraps, folds or crops. Nothing
# rendered for it may pad to this width (no expanding Padding, no centred titles).
UNWRAPPED_WIDTH = 1_000_000
# Continuation lines of a wrapped row are indented by this much under the row's first cell.
HANGING_INDENT = 4


def output_console(stderr: bool = False, file: IO[str] | None = None,
                   console_class: type[Console] = Console) -> Console:
    """A console for the report: a terminal's own width, else one that never wraps."""
    probe = Console(stderr=stderr, file=file)
    if probe.is_terminal:
        return console_class(stderr=stderr, file=file, soft_wrap=False, emoji=False)
    return console_class(stderr=stderr, file=file, soft_wrap=False, width=UNWRAPPED_WIDTH,
                         emoji=False)


def indented(renderable: RenderableType, spaces: int = 2) -> Padding:
    """`renderable` indented on the left, and as wide as it is (never padded to the width
    of the console, which for a pipe is `UNWRAPPED_WIDTH`)."""
    return Padding(renderable, (0, 0, 0, spaces), expand=False)


def indented_lines(console: Console, lines: Iterable[tuple[Text, int]]) -> list[RenderableType]:
    """Each of `lines` indented by its number of spaces, printed as `indented` prints it but
    in fewer renderables: the lines the console is wide enough for, one Text (rich measures
    and lays out each Padding and each Text apart, which costs far more than the line); a
    line too wide is `indented`, to wrap under its indent. For printing at the console's
    width."""
    parts: list[RenderableType] = []
    run: Text | None = None  # the Text the lines that fit are added to
    width = console.width  # not a field: rich asks the terminal each time
    for text, spaces in lines:
        plain = text.plain
        # An empty line, one rich measures apart from its text (a tab, a line break) or
        # one too wide (in cells, or in characters, which rich also trims by): as
        # `indented` prints it (nothing, for an empty one).
        if ("\n" in plain or "\t" in plain or not 0 < text.cell_len <= width - spaces
                or len(plain) > width - spaces):
            run = None
            parts.append(indented(text, spaces) if spaces else text)
            continue
        if run is None:
            # Not wrapped: no line needs it, and rich would look for breaks in each.
            run = Text(no_wrap=True)
            parts.append(run)
        else:
            run.append("\n")
        # The indent is not styled, as `indented` leaves it: styled spaces would print
        # their colour codes on a terminal.
        run.append(" " * spaces)
        run.append_text(text)
    return parts


class WrappedRows:
    """A table whose rows are too wide for the terminal, as one paragraph per row: its cells
    separated by two spaces, a new line (indented) only between cells. A cell wider than
    the terminal on its own wraps between its words, and a word wider than that folds."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def _rows(self) -> Iterable[tuple[list[Text], str]]:
        columns = self.table.columns
        yield [Text(str(c.header)) for c in columns], "bold"
        cells = [list(c.cells) for c in columns]
        for row in zip(*cells, strict=True):
            yield [cell if isinstance(cell, Text) else Text(str(cell)) for cell in row], ""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.table.title:
            yield Text(str(self.table.title), style="bold")
        width = max(options.max_width, HANGING_INDENT + 8)
        for cells, style in self._rows():
            yield from pack_cells(console, [c for c in cells if c.plain], width, style)


def pack_cells(console: Console, cells: list[Text], width: int, style: str = ""
               ) -> list[Text]:
    """`cells` on as few lines of `width` as fit them whole; continuation lines indented."""
    lines: list[Text] = []
    line = Text(style=style)
    for cell in cells:
        indent = HANGING_INDENT if lines else 0
        if line.plain.strip() and line.cell_len + 2 + cell.cell_len > width:
            lines.append(line)
            line, indent = Text(" " * HANGING_INDENT, style=style), HANGING_INDENT
        if line.plain.strip():
            line.append("  ")
        if indent + cell.cell_len <= width or line.plain.strip():
            line.append_text(cell)
            continue
        pieces = cell.wrap(console, width - HANGING_INDENT, overflow="fold")
        for piece in pieces[:-1]:
            line.append_text(piece)
            lines.append(line)
            line = Text(" " * HANGING_INDENT, style=style)
        line.append_text(pieces[-1])
    lines.append(line)
    return lines


def cell_measurements(console: Console, table: Table) -> list[Measurement]:
    """Per column of `table`, the narrowest (its longest word) and widest (its longest
    line) of its header and cells, measured once, without the table's padding."""
    options = console.options.update_width(UNWRAPPED_WIDTH)
    measured = []
    for column in table.columns:
        cells = [column.header, *column.cells]
        if table.show_footer:
            cells.append(column.footer)
        sizes = [Measurement.get(console, options, cell) for cell in cells]
        measured.append(Measurement(max(m.minimum for m in sizes),
                                    max(m.maximum for m in sizes)))
    return measured


def table_width(table: Table, content_widths: Sequence[int]) -> int:
    """How wide `table` is with its columns' contents this wide: with its padding and
    borders."""
    _top, right, _bottom, left = table.padding
    columns = table.columns
    width = 0
    for index, content in enumerate(content_widths):
        first, last = index == 0, index == len(columns) - 1
        width += content + (left if table.pad_edge or not first else 0) + (
            right if table.pad_edge or not last else 0)
    if table.box is not None:
        width += max(len(columns) - 1, 0) + (2 if table.show_edge else 0)
    return width


def narrowest_width(console: Console, table: Table,
                    measured: Sequence[Measurement] | None = None) -> int:
    """The fewest columns `table` takes without cutting a cell of a `no_wrap` column or a
    word of another (rich's own measure lets `no_wrap` cells shrink). `measured`: its
    `cell_measurements`, if already made."""
    if measured is None:
        measured = cell_measurements(console, table)
    return table_width(table, [m.maximum if column.no_wrap else m.minimum
                               for column, m in zip(table.columns, measured, strict=True)])


def with_widths(table: Table, measured: Sequence[Measurement]) -> Table | None:
    """A copy of `table` whose columns are given the widths rich would measure for them
    (`measured`: its `cell_measurements`), so that it does not measure every cell again
    (it does three times: for the Padding that indents the table, and twice for the table
    itself). Only for a table printed whole at its widest: None if a column's width could
    depend on the width offered (a cell that is not a str or a Text) or is set by the
    caller."""
    if (table.width is not None or table.min_width is not None or table.expand
            or table.collapse_padding or not table.show_header):
        return None  # (`cell_measurements` counts the header, shown or not)
    for column in table.columns:
        if (column.width is not None or column.min_width is not None
                or column.max_width is not None or column.ratio is not None):
            return None
        cells = [column.header, *column.cells, *([column.footer] if table.show_footer else [])]
        if not all(isinstance(cell, str | Text) for cell in cells):
            return None
    sized = copy.copy(table)
    sized.columns = [dataclasses.replace(column, width=m.maximum)
                     for column, m in zip(table.columns, measured, strict=True)]
    return sized


def rows_as_one(table: Table) -> Table | None:
    """A copy of `table` with one row, whose cell in each column holds the column's cells
    as its lines; None unless that prints the same lines at the table's widest (where no
    cell wraps). Rich lays out each cell on its own (a Padding around a Text, wrapped, cut
    and padded, then its lines shaped): for a table of a few short columns that is most of
    the time it takes, and it does it once for a column as one cell."""
    if (table.box is not None or table.leading or table.show_lines or table.row_styles
            or table.padding[0] or table.padding[2] or len(table.rows) < 2
            or any(row.style is not None or row.end_section for row in table.rows)):
        return None  # a line or a style between rows, or around them
    joined: list[Text] = []
    for column in table.columns:
        cells = list(column.cells)
        if not all(isinstance(cell, Text) and plain_cell(cell) for cell in cells):
            return None
        joined.append(Text("\n").join(cast("list[Text]", cells)))
    one_row = copy.copy(table)
    one_row.columns = [column.copy() for column in table.columns]  # without their cells
    one_row.rows = []
    one_row.add_row(*joined)
    return one_row


def plain_cell(text: Text) -> bool:
    """A cell whose line rich lays out the same among the lines of one Text: one line, no
    style of its own (a cell's own style also colours the spaces that justify it), no
    settings of its own."""
    plain = text.plain
    return (not text.style and text.justify is None and text.overflow is None
            and text.no_wrap is None and "\n" not in plain and "\t" not in plain)


def fitted(console: Console, table: Table, indent: int = 0) -> RenderableType:
    """`table` as it is when it fits the console (always, for a pipe), else as wrapped
    rows. Columns of names, types and paths must be `no_wrap=True`; a column of prose may
    wrap, between its words: the table is kept when it fits with that prose wrapped."""
    room = console.width - indent
    # Its rows as one, if they print the same: measured as one too, a column's lines
    # measure as its cells do (the longest line, and the longest word).
    one_row = rows_as_one(table)
    measured = cell_measurements(console, one_row or table)
    renderable: RenderableType = table
    if table_width(table, [m.maximum for m in measured]) <= room:
        renderable = with_widths(one_row or table, measured) or table
    elif narrowest_width(console, table, measured) > room:
        renderable = WrappedRows(table)
    return indented(renderable, indent) if indent else renderable


def space_label(record: Allocation) -> str:
    if record.space_id is not None:
        return f"{record.space_id} {record.space_name}"
    return record.space_name


def allocation_tables(records: Sequence[Allocation], base: str | None = None) -> list[Table]:
    """One table per (file, func), rows in program order; print each through `fitted`."""
    groups: dict[tuple[str, str], list[Allocation]] = defaultdict(list)
    for r in records:
        groups[(r.file, r.func)].append(r)
    tables = []
    for (file, func), rows in groups.items():
        title = Text(f"{short_path(file, base)}  func {func or '(none)'}")
        table = Table(title=title, title_justify="left", header_style="bold")
        table.add_column("line:col", no_wrap=True)
        table.add_column("kind", no_wrap=True)
        table.add_column("name", no_wrap=True)
        table.add_column("type", no_wrap=True)
        table.add_column("space", no_wrap=True)
        table.add_column("words", justify="right", no_wrap=True)
        table.add_column("source", no_wrap=True)
        for r in rows:
            table.add_row(f"{r.line}:{r.col}", r.kind, Text(r.name or "(none)"), Text(r.type),
                          Text(space_label(r)), num(r.words), Text(r.loc.short()))
        tables.append(table)
    return tables


def space_totals(records: Sequence[Allocation]) -> Table:
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in records:
        if r.kind == HEAP:
            continue  # not on the stack: listed above, not added up here
        entry = totals[space_label(r)]
        entry[0] += 1
        if r.words is None:
            entry[2] += 1
        else:
            entry[1] += r.words
    table = Table(title="entries per memory space (sum of words, not a peak; heap allocs "
                  "not added)", header_style="bold")
    table.add_column("space")
    table.add_column("entries", justify="right")
    table.add_column("words", justify="right")
    table.add_column("of unknown size", justify="right")
    for label, (count, words, unknown) in sorted(totals.items()):
        table.add_row(label, str(count), f"{words:,}", str(unknown) if unknown else "")
    return table


# Notes on files that were not read because they are not MLIR text (a dump directory also
# holds flags, logs and protos): counted in one line unless --verbose asks for them.
NOT_MLIR_REASONS = ("empty file", "binary file", "MLIR bytecode", "no MLIR found",
                    "not a regular file")


def is_not_mlir_note(diag: Diagnostic) -> bool:
    """A note that a file was skipped because it holds no MLIR text (not a read error)."""
    prefix = "file skipped: "
    return (diag.line == 0 and diag.message.startswith(prefix)
            and diag.message[len(prefix):].startswith(NOT_MLIR_REASONS))


def print_diagnostics(console: Console, diagnostics: Sequence[Diagnostic], limit: int = 20,
                      verbose: bool = False) -> None:
    """The notes on the input; files skipped as not MLIR are one footer line unless
    `verbose` (then every note is listed, without a limit)."""
    not_mlir = [] if verbose else [d for d in diagnostics if is_not_mlir_note(d)]
    notes = [d for d in diagnostics if verbose or not is_not_mlir_note(d)]
    shown = notes if verbose else notes[:limit]
    if notes:
        console.print(Text(f"{len(notes)} note(s) on the input:", style="bold yellow"))
    for diag in shown:
        where = f"{diag.file}:{diag.line}:{diag.col}" if diag.line else diag.file
        console.print(Text(f"  {where}: {diag.message}"))
        if diag.quote:
            console.print(Text(f"      {diag.quote}", style="dim"))
    if len(notes) > len(shown):
        console.print(Text(f"  ... and {len(notes) - len(shown)} more "
                           "(--verbose or --format json lists them all)", style="dim"))
    if not_mlir:
        console.print(Text(f"{len(not_mlir)} file(s) without MLIR text were skipped "
                           "(--verbose lists them)", style="dim"))
