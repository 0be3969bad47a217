"""`sc-mlir passes`: which pass crossed the bound."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from sc_mlir.cli.app import (
    EXIT_CROSSING,
    EXIT_OK,
    AlignOpt,
    BoundOpt,
    ChipOpt,
    Command,
    ConfigOpt,
    ForceOpt,
    Format,
    FormatOpt,
    FuncOpt,
    HtmlOpt,
    SpaceOpt,
    TopOpt,
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
    load_settings,
    settings_file_of,
    write_html,
)
from sc_mlir.formats.records import to_csv, to_json


@app.command(cls=Command,
             short_help="Which pass crossed the bound: peaks per func and space after "
                        "every pass.",
             epilog="Example: sc-mlir passes print_after_all.mlir --chip 7x --space 201")
def passes(
    path: Annotated[Path, typer.Argument(help="A print-after-all dump: one file of "
                                         "'IR Dump After' chunks, or a directory of one "
                                         "file per pass.")],
    space: SpaceOpt = None,
    func: FuncOpt = None,
    bound: BoundOpt = None,
    chip: ChipOpt = None,
    align: AlignOpt = None,
    format: FormatOpt = Format.table,
    top: TopOpt = 10,
    config: ConfigOpt = None,
    html: HtmlOpt = None,
    force: ForceOpt = False,
) -> None:
    """Which pass crossed the bound: stack, liveness and packed peaks of every func and
    memory space after every pass, the first pass after which the stack crosses the bound,
    and what that pass changed.

    Exit code: 0 nothing crosses (or no bound is known), 1 some (func, space) crosses its
    bound after some pass, 2 unusable input or a usage error.
    """
    check_counts(top=top)
    if html is not None:
        check_output_path(html, [p for p in (path, config) if p is not None], force)
    settings_file = settings_file_of(config)
    bounds = bounds_or_exit(settings_file, chip, bound, align)
    try:
        # Imported here: the other commands do not pay for loading the pass timeline.
        from sc_mlir.compare.passes import read_timelines

        result = read_timelines(path, bounds, load_settings(settings_file), space, func)
    except FileNotFoundError as exc:
        raise usage_error(str(exc)) from None
    if result.passes == 0:
        print_notes(result.diagnostics)
        what = ("only 'IR Dump Before' chunks (print after the passes: "
                "--mlir-print-ir-after-all)" if result.skipped_before else "no MLIR text")
        raise usage_error(f"{what} found in {path}")
    if (space or func) and not result.timelines:
        raise usage_error("no (func, memory space) of the dump matches "
                          + " ".join([*(f"--space {s}" for s in space or []),
                                      *(f"--func {f}" for f in func or [])]))
    from sc_mlir.formats.passes_rows import STEP_COLUMNS, step_rows, timelines_object
    from sc_mlir.render.passes_terminal import print_timelines

    if html is not None:
        from sc_mlir.render.passes_html import timelines_report

        write_html(html, timelines_report(result))
    with stdout_may_close():
        if format is Format.json:
            sys.stdout.write(to_json(timelines_object(result)))
        elif format is Format.csv:
            sys.stdout.write(to_csv(step_rows(result), STEP_COLUMNS))
        else:
            print_timelines(out_console(), result, top)
            print_notes(result.diagnostics)
    raise typer.Exit(EXIT_CROSSING if result.has_crossing else EXIT_OK)
