"""`sc-mlir analyze`: whether every func's allocas fit each memory space."""

from __future__ import annotations

import sys
from enum import StrEnum
from functools import partial
from operator import attrgetter
from typing import Annotated, NamedTuple, cast

import typer

from sc_mlir.analysis import (
    SPACE_COLUMNS,
    FileByFileAnalysis,
    ReportOutline,
    SpaceReport,
    any_crossing,
    order_reports,
    reports_of_file,
    select_reports,
    space_row,
)
from sc_mlir.analysis.rollup import RollupOutline, shown_roll_up
from sc_mlir.cli.app import (
    EXIT_CROSSING,
    EXIT_OK,
    NO_METAVAR,
    AlignOpt,
    BoundOpt,
    ChipOpt,
    Command,
    ConfigOpt,
    ExampleOpt,
    ForceOpt,
    Format,
    FormatOpt,
    FuncOpt,
    HtmlOpt,
    JobsOpt,
    LogOpt,
    PathArg,
    QuietOpt,
    SpaceOpt,
    TopOpt,
    VerboseOpt,
    app,
    check_counts,
    check_output_path,
    out_console,
    print_notes,
    stdout_may_close,
)
from sc_mlir.cli.inputs import (
    Facet,
    bounds_or_exit,
    check_selection,
    load_dump,
    load_settings,
    read_log_or_exit,
    resolve_path,
    settings_file_of,
    warn_unused_bounds,
    write_html,
)
from sc_mlir.formats.analysis_json import (
    GROUP_COLUMNS,
    analysis_object,
    group_rows,
    report_group_rows,
    space_object,
    write_document,
)
from sc_mlir.formats.records import json_text, to_csv, to_json
from sc_mlir.model.allocation import Allocation
from sc_mlir.model.bounds import Bounds
from sc_mlir.model.dump import LoadSettings

AllocationsOpt = Annotated[bool, typer.Option("--allocations", metavar=NO_METAVAR, help="JSON: "
                           "also list every alloca (what 'sc-mlir diff' needs to read a saved "
                           "analysis).")]
AllOpt = Annotated[bool, typer.Option("--all", metavar=NO_METAVAR, help="List the "
                   "unknown-bound (func, space) rows too (default: one line about them).")]


class GroupBy(StrEnum):
    source = "source"
    file = "file"
    name = "name"


class Analysed(NamedTuple):
    """One file's reports, their spaces as JSON objects when the output is JSON, and what
    the selection checks read of its records."""

    reports: list[SpaceReport]
    spaces: list[dict[str, object]]
    facets: set[Facet]


def analyze_for_output(bounds: Bounds, group_by: str | None, as_json: bool,
                       records: list[Allocation]) -> Analysed:
    """What `analyze` needs of one file, made where the file is read."""
    representatives: list[Allocation] = []
    reports = reports_of_file(bounds, records, representatives)
    return Analysed(reports, [space_object(r, group_by) for r in reports] if as_json else [],
                    distinct_facets(representatives))


# What the output is made of for one report, where its file is read: its JSON text (text
# travels faster than the dicts), its CSV row or rows (with --group-by, one per group), or
# with --group-by for the table, what its roll-up shows.
Made = str | dict[str, object] | list[dict[str, object]] | RollupOutline | None


class Outlined(NamedTuple):
    """One file's analysis as the output needs it, made where the file is read: the
    reports' outlines, what each report's output is made of (none for the table alone,
    whose rows are made from the outlines, crossings kept whole), and what the selection
    checks read of its records. Much less to send back than the records and reports."""

    outlines: list[ReportOutline]
    made: list[Made]
    facets: set[Facet]


def outline_for_output(bounds: Bounds, group_by: str | None, output: Format,
                       records: list[Allocation]) -> Outlined:
    """What `analyze` outputs of one file, made where the file is read (`output`: json, csv,
    or table)."""
    representatives: list[Allocation] = []
    reports = reports_of_file(bounds, records, representatives)
    made: list[Made] = []
    if output is Format.json:
        made = [json_text(space_object(r, group_by)) for r in reports]
    elif output is Format.csv:
        made = [report_group_rows(r, group_by) if group_by is not None else space_row(r)
                for r in reports]
    elif group_by is not None:
        made = [shown_roll_up(r, group_by) for r in reports]
    return Outlined([ReportOutline.of(r, keep_crossing=output is Format.table)
                     for r in reports], made, distinct_facets(representatives))


def distinct_facets(records: list[Allocation]) -> set[Facet]:
    """`facets_of(records)`, each record's read in C; given a file's representatives
    (`reports_of_file`), the file's facets."""
    return {Facet(*facts) for facts in set(map(_facts_of, records))}


# A record's `Facet`, field by field, from the objects its properties read.
_facts_of = attrgetter("space.space_id", "space.space_name", "space.memory_space",
                       "placement.func")


def output_from_workers(source: str, jobs: int | None, settings: LoadSettings, quiet: bool,
                        bounds: Bounds, by: str | None, output: Format,
                        space: list[str] | None, func: list[str] | None,
                        bound: list[str] | None, top: int | None, show_all: bool,
                        verbose: bool) -> int:
    """`analyze` without --allocations or --html: the processes that read the files make
    their part of the output, and only that comes back; the output shows no program points,
    so a large file is read a span of whole funcs at a time (points count from each span's
    start). Gives the exit code."""
    outlines: list[ReportOutline] = []
    made: dict[int, Made] = {}  # by id(outline)
    facets: set[Facet] = set()

    def take(worked: Outlined | None) -> None:
        if output is Format.table and not outlines:
            # The table's renderer and rich, imported at the first answer: while the
            # workers read on, not after the last answer (25 ms, half of what printing
            # a directory's table takes after it).
            import sc_mlir.render.analysis_terminal  # noqa: F401
        if worked is not None:  # else the file could not be read (a note says why)
            outlines.extend(worked.outlines)
            # Nothing is made for the table alone: its rows are the outlines.
            made.update(zip(map(id, worked.outlines), worked.made,
                            strict=output is not Format.table or by is not None))
            facets.update(worked.facets)

    dump = load_dump(source, jobs, settings, quiet,
                     work=partial(outline_for_output, bounds, by, output), on_answer=take,
                     keep_records=False)
    check_selection(facets, space, func)
    warn_unused_bounds(facets, bound)
    chosen = select_reports(order_reports(outlines), space, func)
    with stdout_may_close():
        if output is Format.json:
            write_document(sys.stdout, source, (cast(str, made[id(o)]) for o in chosen),
                           dump.diagnostics)
        elif output is Format.csv and by is not None:
            rows = (row for o in chosen
                    for row in cast("list[dict[str, object]]", made[id(o)]))
            sys.stdout.write(to_csv(rows, GROUP_COLUMNS))
        elif output is Format.csv:
            rows = (cast("dict[str, object]", made[id(o)]) for o in chosen)
            sys.stdout.write(to_csv(rows, SPACE_COLUMNS))
        else:
            from sc_mlir.render.analysis_terminal import print_analysis, print_groups

            print_analysis(out_console(), chosen, source, top, show_all=show_all)
            if by is not None:
                print_groups(out_console(),
                             [(o, cast("RollupOutline | None", made[id(o)])) for o in chosen],
                             by, top)
    if output is Format.table:
        print_notes(dump.diagnostics, verbose=verbose)
    return EXIT_CROSSING if any_crossing(chosen) else EXIT_OK


GroupByOpt = Annotated[GroupBy | None, typer.Option("--group-by", help="Also roll up the "
                       "entries on the stack at each peak by resolved source line (source), "
                       "source file (file) or outermost name location (name).")]


@app.command(cls=Command, short_help="Say for every func and memory space whether its allocas fit.",
             help="Say for every func and memory space whether the scratch allocations fit, "
             "and if not, which allocas push the offset past the bound and whether reuse "
             "could fit them.\n\nExit code: 0 everything fits (or no bound is known), 1 an "
             "allocation crosses its bound, 2 unusable input or a usage error.",
             epilog="Example: sc-mlir analyze DUMP_DIR --bound 202=131071 --chip v6e --top 5")
def analyze(
    path: PathArg = None,
    example: ExampleOpt = False,
    bound: BoundOpt = None,
    chip: ChipOpt = None,
    align: AlignOpt = None,
    space: SpaceOpt = None,
    func: FuncOpt = None,
    top: TopOpt = None,
    format: FormatOpt = Format.table,
    config: ConfigOpt = None,
    log: LogOpt = None,
    html: HtmlOpt = None,
    force: ForceOpt = False,
    allocations: AllocationsOpt = False,
    group_by: GroupByOpt = None,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    all: AllOpt = False,
) -> None:
    check_counts(top, jobs)
    source = resolve_path(path, example)
    if html is not None:
        check_output_path(html, [p for p in (source, log, config) if p is not None], force)
    settings_file = settings_file_of(config)
    bounds = bounds_or_exit(settings_file, chip, bound, align)
    if log is not None:
        # Imported here: most runs read no log, and the failures layer costs start-up time.
        from sc_mlir.failures.explain import bounds_from_failures

        bounds = bounds_from_failures(read_log_or_exit(log), bounds, f"log {log}")
    by = group_by.value if group_by is not None else None
    settings = load_settings(settings_file)
    if not allocations and html is None:
        raise typer.Exit(output_from_workers(source, jobs, settings, quiet, bounds, by, format,
                                             space, func, bound, top, all, verbose))
    # Every alloca with its program points (--allocations) and the HTML report's timelines:
    # the records come back with the reports, and a large file is read whole (points count
    # over the file). Each file is still analysed (and its spaces made into JSON) by the
    # process that read it, so a directory's files are analysed on every core.
    file_by_file = FileByFileAnalysis(bounds)
    made: dict[int, dict[str, object]] = {}
    facets: set[Facet] = set()

    def take(worked: Analysed | None) -> None:
        if worked is None:  # the file could not be read: it has no records
            return
        file_by_file.add_reports(worked.reports)
        # `spaces` is empty unless the output is JSON (the table and CSV are made here).
        made.update(zip(map(id, worked.reports), worked.spaces, strict=False))
        facets.update(worked.facets)

    work = partial(analyze_for_output, bounds, by, format is Format.json)
    dump = load_dump(source, jobs, settings, quiet, work=work, on_answer=take,
                     keep_records=True)
    check_selection(facets, space, func)
    warn_unused_bounds(facets, bound)
    analysis = file_by_file.finish(dump).select(space, func)
    if html is not None:
        from sc_mlir.render.html import analysis_report

        write_html(html, analysis_report(analysis, source, group_by=by))
    with stdout_may_close():
        if format is Format.json:
            sys.stdout.write(to_json(analysis_object(analysis, source, allocations, by, made)))
        elif format is Format.csv and by is not None:
            sys.stdout.write(to_csv(group_rows(analysis, by), GROUP_COLUMNS))
        elif format is Format.csv:
            sys.stdout.write(to_csv((space_row(r) for r in analysis.reports), SPACE_COLUMNS))
        else:
            from sc_mlir.render.analysis_terminal import print_analysis, print_groups

            print_analysis(out_console(), analysis.reports, source, top, show_all=all)
            if by is not None:
                print_groups(out_console(), [(r, shown_roll_up(r, by)) for r in analysis.reports],
                             by, top)
    if format is Format.table:
        print_notes(dump.diagnostics, verbose=verbose)
    raise typer.Exit(EXIT_CROSSING if analysis.has_crossing else EXIT_OK)
