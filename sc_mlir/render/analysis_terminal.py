"""The analysis for a terminal: the worst (func, space) first, explained; then a summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from sc_mlir.analysis import (
    ALLOCATOR_LIMITED,
    FITS,
    OVERFLOW,
    UNKNOWN_BOUND,
    Crossing,
    ReportOutline,
    SpaceReport,
)
from sc_mlir.analysis.rollup import RollupOutline
from sc_mlir.model.allocation import ALLOCA, SCRATCH_OPERAND, SEMAPHORE, Allocation
from sc_mlir.render.terminal import fitted, indented_lines
from sc_mlir.support.numbers import num
from sc_mlir.support.paths import short_path

STYLE = {OVERFLOW: "bold red", ALLOCATOR_LIMITED: "bold yellow", UNKNOWN_BOUND: "cyan",
         FITS: "green"}
MARK = {OVERFLOW: "✗", ALLOCATOR_LIMITED: "✗", UNKNOWN_BOUND: "?", FITS: "✓"}


KIND_LABEL = {SCRATCH_OPERAND: "scratch", SEMAPHORE: "semaphore", ALLOCA: "alloca"}


def percent(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}%"


def fix_lines(c: Crossing) -> list[str]:
    """The cheapest fix at the crossing, one line per step, and whether it is enough."""
    if not c.fix:
        return []
    lines = ["Cheapest fix for the func (fewest entries; dead-but-reserved first, then the "
             f"smallest that suffice), {num(sum(s.free_words for s in c.fix))} words:"]
    lines.extend(f"  - {step.advice()}" for step in c.fix)
    if c.fix_still_crosses is not None:
        lines.append(f"  With that, the stack still crosses the bound at "
                     f"{c.fix_still_crosses.name} (line {c.fix_still_crosses.record.line}): "
                     "more must go.")
    return lines


def source_of(record: Allocation) -> str:
    loc = record.loc
    text = loc.short()
    if loc.names:
        text += "  (" + " > ".join(loc.names[-2:]) + ")"
    return text


# What the summary reads of a (func, space): its report, or the outline of a report made
# where its file was read (whose crossing, if any, travels whole).
Summarised = SpaceReport | ReportOutline


def headline(report: SpaceReport, base: str) -> Text:
    where = short_path(report.file, base)
    if report.dump_header:
        where += f" [after {report.dump_header}]"
    text = Text()
    text.append(f"{MARK[report.verdict]} {report.verdict}", style=STYLE[report.verdict])
    text.append(f"  func {report.func or '(none)'}", style="bold")
    text.append(f"  space {report.space_label}  ")
    text.append(where, style="dim")
    return text


def _para(text: str, style: str = "") -> tuple[Text, int]:
    """A sentence of an explanation, indented under its headline (by `indented_lines`)."""
    return Text(text, style=style), 2


def explain(report: SpaceReport, base: str, top: int, console: Console) -> RenderableType:
    """Why a (func, space) crosses its bound, in numbers a user can check in the dump
    (`top` contributors listed, 0 for all)."""
    lines: list[tuple[Text, int]] = [(headline(report, base), 0)]
    c = report.crossing
    bound = report.bound_words
    if c is None or bound is None:
        return Group(*indented_lines(console, lines))
    r = c.alloca.record
    lines.append(_para(
        f"The scoped stack reaches {num(c.offset_upper_bound_words)} words when {c.alloca.name} "
        f"({num(r.words)} words, {r.type}) is allocated at {short_path(r.file, base)}:{r.line}:"
        f"{r.col}, from {source_of(r) or 'an unknown location'}."))
    lines.append(_para(
        f"Bound: {num(bound)} words ({report.bound_source}); alignment {report.align_bytes} "
        f"bytes unless the op says otherwise ({report.align_source})."))
    lines.append(_para(
        f"As the compiler prints it: offset upper bound ({c.offset_upper_bound_words} words) "
        f"exceeds the legitimate user allocatable offset upper bound ({c.bound_words} words) in "
        f"memory space {report.space_id if report.space_id is not None else report.space_name}"
        f" when allocating {c.allocating_words} words.", style="dim"))
    if report.verdict == ALLOCATOR_LIMITED:
        lines.append(_para(
            f"True liveness peak: {num(report.liveness_peak_words)} words (a packed assignment "
            f"needs {num(report.packed_peak_words)}): reuse would fit. The scopes keep "
            f"{num(c.dead_reserved_words)} words reserved for {len(c.dead_reserved)} alloca(s) "
            f"already past their last use.", style="yellow"))
    else:
        lines.append(_para(
            f"Even with perfect reuse the liveness peak is {num(report.liveness_peak_words)} "
            f"words: at least {num(report.must_free_words)} words must go.", style="red"))
    lines.extend(_para(line) for line in fix_lines(c))
    table = Table(title="entries on the stack at the crossing, largest first",
                  title_justify="left", header_style="bold", box=None, padding=(0, 1))
    table.add_column("name", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("words", justify="right", no_wrap=True)
    table.add_column("cum %", justify="right", no_wrap=True)
    table.add_column("live?", no_wrap=True)
    table.add_column("line", justify="right", no_wrap=True)
    table.add_column("last use", justify="right", no_wrap=True)
    table.add_column("source")  # a location, then names: wraps between them
    shown = c.contributors[:top] if top else c.contributors
    # Cells as Text, not str: a str is parsed as markup each time rich measures or renders
    # it (and none of these holds markup).
    for x in shown:
        rec = x.alloca.record
        table.add_row(*map(Text, (
            x.alloca.name, KIND_LABEL.get(rec.kind, rec.kind), num(x.alloca.words),
            f"{x.cumulative_percent:.1f}", "live" if x.live else "dead", str(rec.line),
            str(rec.last_use_line), source_of(rec))))
    if len(c.contributors) > len(shown):
        rest = c.contributors[len(shown):]
        table.add_row(*map(Text, (f"+{len(rest)} more", "", num(sum(x.alloca.words for x in rest)),
                                  "", "", "", "", "")))
    return Group(*indented_lines(console, lines), fitted(console, table, indent=2))


# The summary's order: what fails first, then what fits from the fullest down, and last
# what cannot be judged without a bound.
SUMMARY_RANK = {OVERFLOW: 0, ALLOCATOR_LIMITED: 1, FITS: 2, UNKNOWN_BOUND: 3}
# Without a terminal there is no screen to fill: this many rows unless --top says otherwise.
ROWS_WITHOUT_TERMINAL = 40
# Lines of a screen taken by the headings and footers around the summary table.
SUMMARY_CHROME_LINES = 8


def summary_order(reports: Sequence[Summarised]) -> list[Summarised]:
    """Overflow, allocator-limited, fits by percent of bound (fullest first), unknown-bound
    (largest first)."""
    return sorted(reports, key=lambda r: (SUMMARY_RANK[r.verdict], -(r.percent_of_bound or 0.0),
                                          -r.stack_peak_words, r.file, r.chunk, r.func,
                                          r.space_label))


def default_summary_rows(console: Console) -> int:
    """What fits a screen: the terminal's height less the lines around the table."""
    if not console.is_terminal:
        return ROWS_WITHOUT_TERMINAL
    return max(5, console.height - SUMMARY_CHROME_LINES)


def summary_table(reports: Sequence[Summarised], base: str) -> Table:
    """One row per (func, space) in the given order; a file column when there are several
    files. Print it through `fitted`."""
    several_files = len({r.file for r in reports}) > 1
    table = Table(box=None, padding=(0, 1), pad_edge=False, header_style="bold")
    table.add_column("verdict", no_wrap=True)
    table.add_column("func", no_wrap=True)
    table.add_column("space", no_wrap=True)
    table.add_column("bound", justify="right", no_wrap=True)
    table.add_column("stack", justify="right", no_wrap=True)
    table.add_column("% bound", justify="right", no_wrap=True)
    table.add_column("live", justify="right", no_wrap=True)
    table.add_column("packed", justify="right", no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True)
    if several_files:
        table.add_column("file", no_wrap=True)
    for r in reports:
        func = (r.func or "(none)") + (f" [chunk {r.chunk}]" if r.chunk else "")
        space = str(r.space_id) if r.space_id is not None else r.space_name
        cells: list[Text | str] = [
            Text(r.verdict, style=STYLE[r.verdict]), Text(func), Text(space),
            num(r.bound_words), num(r.stack_peak_words), percent(r.percent_of_bound),
            num(r.liveness_peak_words),
            num(r.packed_peak_words), str(r.n_allocas) + ("*" if r.n_unsized else "")]
        if several_files:
            header = f" [after {r.dump_header}]" if r.dump_header else ""
            cells.append(Text(short_path(r.file, base) + header))
        table.add_row(*cells)
    return table


def unknown_bound_line(unknown: Sequence[Summarised]) -> Text:
    """The unknown-bound rows as one line: each space with how many funcs have one."""
    counts = Counter(r.space_label for r in unknown)
    spaces = ", ".join(f"{label} in {count} func{'s' if count > 1 else ''}"
                       for label, count in sorted(counts.items()))
    return Text(f"{len(unknown)} unknown-bound: {spaces}. Give a bound with --bound "
                "SPACE=WORDS (--chip gives TileSpmem and TensorCore VMEM); --all lists them.",
                style="cyan")


def groups_table(console: Console, report: Summarised, rollup: RollupOutline,
                 top: int | None) -> Group:
    """Who holds the stack peak of one (func, space), grouped `rollup.by`, largest first;
    the rows (with the padding and the rest) add up to the stack peak. `top`: groups shown
    (None or 0: all)."""
    by = rollup.by
    where = ""
    if rollup.peak_name is not None:
        where = f" (reached at {rollup.peak_name}, line {rollup.peak_line})"
    heading = Text(f"func {report.func or '(none)'}, space {report.space_label}: stack peak "
                   f"{num(rollup.total_words)} words{where}")
    table = Table(header_style="bold", box=None, padding=(0, 1))
    table.add_column(by, no_wrap=True)
    table.add_column("entries", justify="right", no_wrap=True)
    table.add_column("words", justify="right", no_wrap=True)
    table.add_column("%", justify="right", no_wrap=True)
    shown = rollup.groups[:top] if top else rollup.groups
    # Cells as Text, as in `explain`: no markup to parse, and `fitted` prints them fast.
    for g in shown:
        table.add_row(*map(Text, (g.key, str(g.n_allocas), num(g.words), f"{g.percent:.1f}")))
    rest = rollup.groups[len(shown):]
    if rest:
        words = sum(g.words for g in rest)
        share = 100.0 * words / rollup.total_words if rollup.total_words else 0.0
        table.add_row(*map(Text, (f"+{len(rest)} more groups",
                                  str(sum(g.n_allocas for g in rest)), num(words),
                                  f"{share:.1f}")))
    if rollup.padding_words:
        table.add_row(*map(Text, ("(alignment padding)", "", num(rollup.padding_words),
                                  f"{rollup.padding_percent:.1f}")))
    return Group(heading, fitted(console, table, indent=2))


def print_groups(console: Console, rolled_up: Sequence[tuple[Summarised, RollupOutline | None]],
                 by: str, top: int | None) -> None:
    """The roll-up of every (func, space) that holds anything, in the order given (worst
    first), each with its `shown_roll_up` (made where its file was read, or here)."""
    console.print()
    console.print(Text(f"who holds the scratch: the entries on the stack at each peak, by {by}",
                       style="bold"))
    for report, rollup in rolled_up:
        if rollup is not None:
            console.print(groups_table(console, report, rollup, top))


def print_analysis(console: Console, reports: Sequence[Summarised], base: str,
                   top: int | None = None, show_all: bool = False) -> None:
    """The crossings explained, then the summary worst first, of an analysis's reports (or
    their outlines). `top`: contributors per crossing and summary rows (None: 10
    contributors and a screen of rows; 0: all); `show_all`: list the unknown-bound rows
    instead of one line about them."""
    counts = Counter(r.verdict for r in reports)
    tally = ", ".join(f"{counts[v]} {v}" for v in (OVERFLOW, ALLOCATOR_LIMITED, FITS,
                                                    UNKNOWN_BOUND) if counts[v])
    console.print(Text(f"{len(reports)} (func, memory space) pair(s) in {base}: {tally or 'none'}",
                       style="bold"))
    ordered = summary_order(reports)
    for report in ordered:
        whole = report.crossing_report
        if whole is None and report.verdict in (OVERFLOW, ALLOCATOR_LIMITED):
            # An outline made for JSON or CSV: its crossing would go unexplained.
            raise ValueError(f"the crossing of func {report.func}, space "
                             f"{report.space_label} is not kept: outline it with "
                             "ReportOutline.of(report, keep_crossing=True)")
        if whole is not None:
            console.print()
            console.print(explain(whole, base, 10 if top is None else top, console))
    listed = ordered if show_all else [r for r in ordered if r.verdict != UNKNOWN_BOUND]
    rows = default_summary_rows(console) if top is None else top
    shown = listed[:rows] if rows else listed
    console.print()
    console.print(Text("every (func, memory space), worst first; words; stack = scoped-stack "
                       "peak, live = liveness peak (the least any allocator needs), packed = "
                       "greedy reuse", style="bold"))
    if shown:
        console.print(fitted(console, summary_table(shown, base)))
    if len(listed) > len(shown):
        console.print(Text(f"+{len(listed) - len(shown)} more (use --top 0 for all)",
                           style="dim"))
    if any(r.n_unsized for r in shown):
        console.print(Text("* some allocas have no static size and are not counted",
                           style="dim"))
    unknown = [r for r in reports if r.verdict == UNKNOWN_BOUND]
    if unknown and not show_all:
        console.print(unknown_bound_line(unknown))
