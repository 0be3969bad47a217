"""`sc-mlir analyze`: whether every func's allocas fit each memory space."""

from __future__ import annotations

import sys
from enum import StrEnum
from functools import partial
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
    facets_of,
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
    reports = reports_of_file(bounds, records)
    return Analysed(reports, [space_object(r, group_by) for r in reports] if as_json else [],
                    facets_of(records))


class Outlined(NamedTuple):
    """One file's analysis as the output needs it, made where the file is read: the
    reports' outlines, each report's output (JSON text, or a CSV row; none for the table,
    whose rows are made from the outlines, crossings kept whole), and what the selection
    checks read of its records. Much less to send back than the records and reports."""

    outlines: list[ReportOutline]
    # JSON as text (it travels faster than the dicts), CSV as rows (a few dozen cells each)
    made: list[str] | list[dict[str, object]]
    facets: set[Facet]


def outline_for_output(bounds: Bounds, group_by: str | None, output: Format,
                       records: list[Allocation]) -> Outlined:
    """What `analyze` outputs of one file, made where the file is read (`output`: json, csv,
    or table; `group_by` only with json)."""
    reports = reports_of_file(bounds, records)
    made: list[str] | list[dict[str, object]] = []
    if output is Format.json:
        made = [json_text(space_object(r, group_by)) for r in reports]
    elif output is Format.csv:
        made = [space_row(r) for r in reports]
    return Outlined([ReportOutline.of(r, keep_crossing=output is Format.table)
                     for r in reports], made, facets_of(records))


def output_from_workers(source: str, jobs: int | None, settings: LoadSettings, quiet: bool,
                        bounds: Bounds, by: str | None, output: Format,
                        space: list[str] | None, func: list[str] | None,
                        bound: list[str] | None, top: int | None, show_all: bool,
                        verbose: bool) -> int:
    """`analyze` without --allocations, --html, or --group-by (but for JSON): the processes
    that read the files make their part of the output, and only that comes back. Gives the
    exit code."""
    outlines: list[ReportOutline] = []
    made: dict[int, str | dict[str, object]] = {}  # by id(outline): as `Outlined.made`
    facets: set[Facet] = set()

    def take(worked: Outlined | None) -> None:
        if worked is not None:  # else the file could not be read (a note says why)
            outlines.extend(worked.outlines)
            made.update(zip(map(id, worked.outlines), worked.made, strict=False))
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
        elif output is Format.csv:
            rows = (cast("dict[str, object]", made[id(o)]) for o in chosen)
            sys.stdout.write(to_csv(rows, SPACE_COLUMNS))
        else:
            from sc_mlir.render.analysis_terminal import print_analysis

            print_analysis(out_console(), chosen, source, top, show_all=show_all)
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
    if not allocations and html is None and (format is Format.json or by is None):
        raise typer.Exit(output_from_workers(source, jobs, settings, quiet, bounds, by, format,
                                             space, func, bound, top, all, verbose))
    # Each file is analysed (and its spaces made into JSON) by the process that read it,
    # so a directory's files are analysed on every core.
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
    # The table and the CSV show no program points: the records then need not be kept
    # apart from the reports, and a large file is read a span of whole funcs at a time
    # (points count from each span's start). Every alloca with its points (--allocations)
    # and the HTML report's timelines read the file whole.
    keep_records = allocations or html is not None
    dump = load_dump(source, jobs, settings, quiet, work=work, on_answer=take,
                     keep_records=keep_records)
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
                print_groups(out_console(), analysis, by, top)
    if format is Format.table:
        print_notes(dump.diagnostics, verbose=verbose)
    raise typer.Exit(EXIT_CROSSING if analysis.has_crossing else EXIT_OK)
