"""`sc-mlir whatif`: re-simulate with buffers resized, dropped or scaled."""

from __future__ import annotations

from typing import Annotated

import typer

from sc_mlir.cli.app import (
    BoundOpt,
    ChipOpt,
    Command,
    ConfigOpt,
    ExampleOpt,
    FailOnOpt,
    ForceOpt,
    Format,
    FormatOpt,
    FuncOpt,
    HtmlOpt,
    JobsOpt,
    PathArg,
    QuietOpt,
    SpaceOpt,
    TopOpt,
    app,
    check_counts,
    check_output_path,
    usage_error,
)
from sc_mlir.cli.diff import answer_with_diff
from sc_mlir.cli.inputs import (
    bounds_or_exit,
    check_selection,
    load_dump,
    load_settings,
    resolve_path,
    select,
    settings_file_of,
    warn_unused_bounds,
)
from sc_mlir.model.bounds import (
    parse_assignments,
)

ResizeOpt = Annotated[list[str] | None, typer.Option("--resize", help="SEL=WORDS: give the "
                      "entries SEL selects this many words. Repeatable.")]
DropOpt = Annotated[list[str] | None, typer.Option("--drop", help="SEL: remove the entries "
                    "SEL selects. Repeatable.")]
ScaleOpt = Annotated[list[str] | None, typer.Option("--scale", help="SEL=FACTOR: scale the "
                     "elements of the entries SEL selects (0.5, 1/2), rounded up to whole "
                     "elements. Repeatable.")]
WhatIfAlignOpt = Annotated[list[str] | None, typer.Option("--align", help="SPACE=BYTES: "
                           "what if the default alignment of a space were this (AFTER only; "
                           "the op's own alignment wins). Repeatable.")]


@app.command(cls=Command,
             short_help="Re-simulate with buffers resized, dropped or scaled, without "
                        "recompiling.",
             epilog="Example: sc-mlir whatif --example --resize %231=11720 "
                    "--resize %232=11720")
def whatif(
    path: PathArg = None,
    example: ExampleOpt = False,
    resize: ResizeOpt = None,
    drop: DropOpt = None,
    scale: ScaleOpt = None,
    align: WhatIfAlignOpt = None,
    bound: BoundOpt = None,
    chip: ChipOpt = None,
    space: SpaceOpt = None,
    func: FuncOpt = None,
    format: FormatOpt = Format.table,
    fail_on: FailOnOpt = None,
    top: TopOpt = 20,
    config: ConfigOpt = None,
    html: HtmlOpt = None,
    force: ForceOpt = False,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Re-simulate the stack with buffers resized, dropped or scaled, without recompiling,
    and answer as 'diff' does: the dump as read is BEFORE, the edited table AFTER.

    SEL is an SSA name (%232, in every func; FUNC:%232), a source location as reports
    print it (model/embedding.py:89, FILE:LINE:COL, or a dump position result.1:279), or a
    name location (@gather_rows). A selector that matches nothing is an error (exit 2).
    """
    check_counts(top=top, jobs=jobs)
    source = resolve_path(path, example)
    if html is not None:
        check_output_path(html, [p for p in (source, config) if p is not None], force)
    settings_file = settings_file_of(config)
    # Imported here: the other commands do not pay for loading the what-if layer.
    from sc_mlir.compare.whatif import EditError, edits_from_options, what_if

    try:
        bounds = bounds_or_exit(settings_file, chip, bound, None)
        edits = edits_from_options(resize or (), drop or (), scale or (),
                                   parse_assignments(align, "--align"))
        if edits.align:  # checked here, so that a bad value is a usage error
            bounds.with_alignments(dict(edits.align), "--align")
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    if not (edits.resize or edits.drop or edits.scale or edits.align):
        raise usage_error("give at least one edit: --resize, --drop, --scale or --align")
    dump = load_dump(source, jobs, load_settings(settings_file), quiet)
    check_selection(dump.records, space, func)
    warn_unused_bounds(dump.records, bound)
    records = select(dump.records, space, func)
    try:
        result = what_if(records, bounds, edits, root=source, before_name=source)
    except EditError as exc:
        raise usage_error(str(exc)) from None
    answer_with_diff(result.select(space), format, top, html, fail_on, dump.diagnostics)
