"""A crossing is printed the way rich prints it plainly (a Padding around each sentence, a
table that rich measures and lays out cell by cell), byte for byte, on a pipe and on
terminals of any width, with their colours: `indented_lines` and `fitted` only give rich
less to do."""

from __future__ import annotations

import io
from collections.abc import Iterable

import pytest
from conftest import FIXTURES
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from sc_mlir.analysis import ReportOutline, analyze
from sc_mlir.model.dump import load
from sc_mlir.render import analysis_terminal
from sc_mlir.render.terminal import (
    WrappedRows,
    allocation_tables,
    fitted,
    indented,
    indented_lines,
    narrowest_width,
    output_console,
)

# A pipe (never wrapped), and terminals from too narrow for any table to wide enough for all.
WIDTHS = [None, 40, 60, 90, 200]


def console_for(width: int | None) -> Console:
    """A console writing to memory: a pipe's (None) or a colour terminal `width` wide."""
    if width is None:
        return output_console(file=io.StringIO())
    return Console(file=io.StringIO(), force_terminal=True, color_system="256", width=width,
                   height=40, soft_wrap=False, emoji=False)


def printed(width: int | None, *renderables: RenderableType) -> str:
    console = console_for(width)
    for renderable in renderables:
        console.print(renderable)
    file = console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def plainly_fitted(console: Console, table: Table, indent: int = 0) -> RenderableType:
    """`fitted` without its shortcuts: the table itself, left to rich, when it fits."""
    room = console.width - indent
    renderable: RenderableType = table
    if narrowest_width(console, table) > room:
        renderable = WrappedRows(table)
    return indented(renderable, indent) if indent else renderable


def plainly_indented(_console: Console, lines: Iterable[tuple[Text, int]]
                     ) -> list[RenderableType]:
    """`indented_lines` without its shortcut: each line in a Padding of its own."""
    return [indented(text, spaces) if spaces else text for text, spaces in lines]


@pytest.fixture(scope="module")
def crossings() -> list[ReportOutline]:
    """Every func of the fixtures against small bounds: dozens of crossings explained."""
    reports = analyze(load(FIXTURES), bounds={"201": 2000, "202": 1000}).reports
    outlines = [ReportOutline.of(r, keep_crossing=True) for r in reports]
    assert sum(o.crossing_report is not None for o in outlines) >= 30
    return outlines


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("top", [None, 0, 2])
def test_the_crossings_print_as_rich_prints_them_plainly(
        crossings: list[ReportOutline], width: int | None, top: int | None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    def analysis() -> str:
        console = console_for(width)
        analysis_terminal.print_analysis(console, crossings, str(FIXTURES), top)
        file = console.file
        assert isinstance(file, io.StringIO)
        return file.getvalue()

    shown = analysis()
    monkeypatch.setattr(analysis_terminal, "fitted", plainly_fitted)
    monkeypatch.setattr(analysis_terminal, "indented_lines", plainly_indented)
    assert shown == analysis()
    assert shown.count("entries on the stack at the crossing") >= 30 or width == 40


def tables() -> list[Table]:
    """Tables that take each way through `fitted`, and some that must not take a shortcut."""
    numbers = Table(title="plain cells, empty ones last, wide characters", title_justify="left",
                    header_style="bold", box=None, padding=(0, 1))
    numbers.add_column("name", no_wrap=True)
    numbers.add_column("words", justify="right", no_wrap=True)
    numbers.add_column("where", justify="center")
    numbers.add_column("source")
    for row in (("%1", "1,024", "名前", "model/a.py:1:2  (op_1 > op_2)"),
                ("%22", "8", "", "model/bb.py:10:20"),
                ("+3 more", "12", "", "")):
        numbers.add_row(*map(Text, row))
    marked = Table(box=None, padding=(0, 1), pad_edge=False, header_style="bold")
    marked.add_column("verdict", no_wrap=True)
    marked.add_column("n", justify="right")
    marked.add_row(Text("overflow", style="bold red"), "12")
    marked.add_row(Text("fits", style="green"), "[b]3[/b]")
    # A cell's own style colours the spaces that justify it, in its cell only.
    styled = Table(box=None)
    styled.add_column("verdict", justify="right")
    styled.add_row(Text("overflow", style="bold red"))
    styled.add_row(Text("fits", style="green"))
    boxed = Table(title="a box", show_footer=True)
    boxed.add_column("name", footer="2 names")
    boxed.add_row(Text("%1"))
    boxed.add_row(Text("%22"))
    headless = Table(show_header=False, box=None)
    headless.add_column("a header wider than its cells, not shown")
    headless.add_row(Text("a"))
    headless.add_row(Text("b"))
    lines = Table(box=None, show_lines=True)
    lines.add_column("two lines")
    lines.add_row(Text("a\nbb"))
    lines.add_row(Text("ccc"))
    return [numbers, marked, styled, boxed, headless, lines, *allocation_tables(load(FIXTURES / "sample").records)[:3]]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("indent", [0, 2])
def test_a_table_fitted_prints_as_rich_prints_it(width: int | None, indent: int) -> None:
    for table in tables():
        before = printed(width, plainly_fitted(console_for(width), table, indent))
        assert printed(width, fitted(console_for(width), table, indent)) == before
        # and the table itself is left as it was
        assert printed(width, plainly_fitted(console_for(width), table, indent)) == before


@pytest.mark.parametrize("width", WIDTHS)
def test_sentences_print_as_each_in_its_padding(width: int | None) -> None:
    lines = [(Text("✗ overflow", style="bold red") + Text("  func f", style="bold"), 0),
             (Text("a sentence that is long enough to wrap on a narrow terminal, twice " * 2),
              2),
             (Text("short, dim", style="dim"), 2),
             (Text("two\nlines", style="yellow"), 2),
             (Text(""), 2),
             (Text("a\ttab"), 4),
             (Text("  - indented further"), 2)]
    assert (printed(width, *indented_lines(console_for(width), lines))
            == printed(width, *plainly_indented(console_for(width), lines)))
