"""`sc-mlir explain`: match the allocation failures of a compile log to the dump."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from sc_mlir.cli.app import (
    EXIT_CROSSING,
    EXIT_OK,
    Command,
    ConfigOpt,
    JobsOpt,
    QuietOpt,
    app,
    check_counts,
    out_console,
    stdout_may_close,
)
from sc_mlir.cli.inputs import (
    bounds_or_exit,
    load_dump,
    load_settings,
    read_log_or_exit,
    settings_file_of,
)
from sc_mlir.formats.records import to_json

LogArg = Annotated[Path, typer.Argument(metavar="LOG", show_default=False, help="A compile "
                   "log: plain text, with ANSI colours, a Python traceback, JSON lines, or "
                   "wrapped by a log collector.")]
DumpOpt = Annotated[Path | None, typer.Option("--dump", metavar="DIR", help="The dump "
                    "directory of the same compile (--xla_sc_dump_mlir_to=DIR).")]


class ExplainFormat(StrEnum):
    table = "table"
    json = "json"


@app.command(cls=Command, short_help="Match the allocation failures of a compile log to the dump.",
             help="Find every SparseCore allocation failure in a compile log, match it to the "
             "allocas of the dump, check the numbers with the stack simulation, and say what "
             "to do.\n\nExit code: 0 no failure in the log, 1 failures found, 2 unusable "
             "input.",
             epilog="Example: sc-mlir explain compile.log --dump DUMP_DIR")
def explain(
    log: LogArg,
    dump: DumpOpt = None,
    format: Annotated[ExplainFormat, typer.Option("--format", "-f", help="Output format."
                                                  )] = ExplainFormat.table,
    config: ConfigOpt = None,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
) -> None:
    check_counts(jobs=jobs)
    failures = read_log_or_exit(log)
    settings_file = settings_file_of(config)
    base = bounds_or_exit(settings_file, None, None, None)
    loaded = (load_dump(str(dump), jobs, load_settings(settings_file), quiet)
              if dump and failures else None)
    # Imported here: the other commands do not pay for loading the failures layer.
    from sc_mlir.failures.explain import explain_all
    from sc_mlir.formats.explain_rows import explanation_object
    from sc_mlir.render.explain_terminal import print_explanations

    explanations = explain_all(failures, loaded, base, log_name=log.name)
    with stdout_may_close():
        if format is ExplainFormat.json:
            sys.stdout.write(to_json([explanation_object(e) for e in explanations]))
        else:
            print_explanations(out_console(), explanations, str(log), str(dump or log))
    raise typer.Exit(EXIT_CROSSING if explanations else EXIT_OK)
