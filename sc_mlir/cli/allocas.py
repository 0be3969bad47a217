"""`sc-mlir allocas`: list every memref.alloca with its size, space and source line."""

from __future__ import annotations

import sys
from collections import Counter

from sc_mlir.cli.app import (
    Command,
    ExampleOpt,
    Format,
    FormatOpt,
    FuncOpt,
    JobsOpt,
    PathArg,
    QuietOpt,
    SpaceOpt,
    VerboseOpt,
    app,
    check_counts,
    out_console,
    print_notes,
    stdout_may_close,
)
from sc_mlir.cli.inputs import (
    check_selection,
    load_dump,
    resolve_path,
    select,
)
from sc_mlir.formats.records import to_csv, to_json
from sc_mlir.model.dump import (
    ALLOCATION_COLUMNS,
    allocation_row,
)


@app.command(cls=Command,
             short_help="List every memref.alloca with its size, space and source line.",
             epilog="Example: sc-mlir allocas DUMP_DIR --space 201 --func 'sc_*' -f csv")
def allocas(
    path: PathArg = None,
    example: ExampleOpt = False,
    space: SpaceOpt = None,
    func: FuncOpt = None,
    format: FormatOpt = Format.table,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """List every memref.alloca in a dump, with its size, memory space and source line."""
    check_counts(jobs=jobs)
    source = resolve_path(path, example)
    dump = load_dump(source, jobs, quiet=quiet)
    check_selection(dump.records, space, func)
    records = select(dump.records, space, func)
    with stdout_may_close():
        if format is Format.json:
            sys.stdout.write(to_json([allocation_row(r) for r in records]))
        elif format is Format.csv:
            sys.stdout.write(to_csv((allocation_row(r) for r in records), ALLOCATION_COLUMNS))
        else:
            from rich.text import Text

            from sc_mlir.render.terminal import allocation_tables, fitted, space_totals

            console = out_console()
            kinds = Counter(r.kind for r in records)
            console.print(Text(f"{len(records)} entr{'y' if len(records) == 1 else 'ies'} in "
                               f"{source}: " + (", ".join(f"{count} {kind}" for kind, count
                                                          in sorted(kinds.items())) or "none"),
                               style="bold"))
            for table in allocation_tables(records, base=source):
                console.print(fitted(console, table))
            if records:
                console.print(fitted(console, space_totals(records)))
    print_notes(dump.diagnostics, verbose=verbose)
