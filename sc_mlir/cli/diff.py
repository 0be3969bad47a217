"""`sc-mlir diff`: compare two dumps (or saved analyses)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from sc_mlir.cli.app import (
    EXIT_CROSSING,
    EXIT_OK,
    AlignOpt,
    BoundOpt,
    ChipOpt,
    Command,
    ConfigOpt,
    FailOn,
    FailOnOpt,
    ForceOpt,
    Format,
    FormatOpt,
    HtmlOpt,
    JobsOpt,
    QuietOpt,
    SpaceOpt,
    app,
    check_counts,
    check_output_path,
    out_console,
    print_notes,
    stdout_may_close,
    usage_error,
)
from sc_mlir.cli.inputs import (
    bounds_or_exit,
    listing,
    load_settings,
    settings_file_of,
    views_of,
    write_html,
)
from sc_mlir.formats.records import to_csv, to_json
from sc_mlir.read.scan import Diagnostic

if TYPE_CHECKING:
    from sc_mlir.compare.diff import DiffResult


@app.command(cls=Command,
             short_help="Compare two dumps: which buffers changed, and whether it now fits.",
             help="Compare two dumps after a config change: which buffers changed and by how "
             "much, and whether it now fits. Deltas are AFTER minus BEFORE (\"+\" grew in "
             "AFTER).",
             epilog="Example: sc-mlir diff before_dump/ after_dump/ --fail-on regression")
def diff(
    before: Annotated[Path, typer.Argument(metavar="BEFORE", show_default=False, help="The "
                                           "dump (or file, or saved analysis JSON) before the "
                                           "change.")],
    after: Annotated[Path, typer.Argument(metavar="AFTER", show_default=False,
                                          help="The same after the change.")],
    space: SpaceOpt = None,
    format: FormatOpt = Format.table,
    fail_on: FailOnOpt = None,
    top: Annotated[int, typer.Option("--top", metavar="N", help="Changed allocas listed "
                   "(0: all).")] = 20,
    bound: BoundOpt = None,
    chip: ChipOpt = None,
    align: AlignOpt = None,
    config: ConfigOpt = None,
    html: HtmlOpt = None,
    force: ForceOpt = False,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
) -> None:
    check_counts(top, jobs)
    if html is not None:
        check_output_path(html, [p for p in (before, after, config) if p is not None], force)
    settings_file = settings_file_of(config)
    bounds = bounds_or_exit(settings_file, chip, bound, align)
    settings = load_settings(settings_file)
    # Imported here: the other commands do not pay for loading the diff.
    from sc_mlir.compare.diff import diff_views

    result = diff_views(views_of(before, bounds, settings, jobs, quiet),
                        views_of(after, bounds, settings, jobs, quiet), str(before), str(after))
    for wanted in space or []:
        if not result.select([wanted]).spaces:
            labels = sorted({c.space_label for c in result.spaces})
            raise usage_error(f"no memory space {wanted!r} in either dump; they have: "
                              f"{listing(labels) or 'no allocas'}")
    answer_with_diff(result.select(space), format, top, html, fail_on)


def answer_with_diff(result: DiffResult, format: Format, top: int | None, html: Path | None,
                     fail_on: FailOn | None, notes: Sequence[Diagnostic] = ()) -> NoReturn:
    """What `diff` and `whatif` answer: the HTML file, the table, JSON or CSV, the notes
    (table only), and the exit code `--fail-on` asks for."""
    # Imported here, as the diff itself: the other commands do not pay for loading them.
    from sc_mlir.formats.diff_rows import EDIT_COLUMNS, diff_object, edit_object
    from sc_mlir.render.diff_terminal import print_diff

    if html is not None:
        from sc_mlir.render.html import diff_report

        write_html(html, diff_report(result))
    with stdout_may_close():
        if format is Format.json:
            sys.stdout.write(to_json(diff_object(result, top=None)))
        elif format is Format.csv:
            sys.stdout.write(to_csv((edit_object(e) for e in result.allocations), EDIT_COLUMNS))
        else:
            print_diff(out_console(), result, top)
    if format is Format.table and notes:
        print_notes(notes)
    failed = (fail_on is FailOn.overflow and result.after_crosses) or (
        fail_on is FailOn.regression and result.regressed)
    raise typer.Exit(EXIT_CROSSING if failed else EXIT_OK)
