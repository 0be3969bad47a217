"""The `sc-mlir` Typer app and what every subcommand shares: the help layout, exit codes,
the common options, the progress bar, the consoles and usage errors."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

from sc_mlir import __version__
from sc_mlir.model.dump import (
    ProgressHook,
)

if TYPE_CHECKING:
    from rich.console import Console

    from sc_mlir.read.scan import Diagnostic

# The terminal renderers (and rich under them) are imported by the functions that draw: a
# run that writes JSON or CSV into a pipe never loads them.

# Flags take no value: no type is shown for them in --help.
NO_METAVAR = ""


class _HelpWithoutType:
    """`--help` is a flag: shown without the `<bool>` type typer gives every flag."""

    def get_help_option(self, ctx: typer.Context) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.metavar = NO_METAVAR
        return option


class Group(_HelpWithoutType, TyperGroup):
    pass


class Command(_HelpWithoutType, TyperCommand):
    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:
        """The usage line as man pages write it: `LOG`, `[PATH]` (typer: `{log}`)."""
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = param.metavar or (param.name or "").upper()
                pieces.append(name if param.required else f"[{name}]")
        return pieces


app = typer.Typer(
    cls=Group,
    add_completion=False,
    no_args_is_help=True,
    help="Explain XLA SparseCore scratch-memory allocation failures (E3000) from MLIR dumps.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Example: sc-mlir analyze --example (the sample dump shipped with sc-mlir).",
)

EXIT_OK, EXIT_CROSSING, EXIT_UNUSABLE = 0, 1, 2


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


PathArg = Annotated[
    Path | None,
    typer.Argument(metavar="PATH", show_default=False,
                   help="A dump directory (from --xla_sc_dump_mlir_to) or one MLIR file."),
]
ExampleOpt = Annotated[bool, typer.Option("--example", metavar=NO_METAVAR, help="Use the "
                                          "sample dump shipped with sc-mlir instead of PATH.")]
SpaceOpt = Annotated[list[str] | None, typer.Option("--space", metavar="SPACE", help="Only "
                     "this memory space: an id (201) or a name (tile_spmem, vmem, ...). "
                     "Repeatable.")]
FuncOpt = Annotated[list[str] | None, typer.Option("--func", metavar="NAME", help="Only funcs "
                    "with this name (shell-style wildcards allowed). Repeatable.")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
JobsOpt = Annotated[int | None, typer.Option("--jobs", "-j", metavar="N", help="Worker "
                    "processes for reading (1 or more; default: all cores, one for a dump "
                    "under about 2 MB).")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", metavar=NO_METAVAR,
                                        help="No progress bar.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", metavar=NO_METAVAR, help="List "
                       "every note on the input, including the files that are not MLIR.")]
HtmlOpt = Annotated[Path | None, typer.Option("--html", metavar="FILE", help="Also write a "
                    "self-contained HTML report (plots embedded) to this file.")]
ForceOpt = Annotated[bool, typer.Option("--force", metavar=NO_METAVAR, help="Replace an "
                     "existing output file that is not an earlier sc-mlir report.")]


@contextmanager
def progress_bar(quiet: bool) -> Iterator[ProgressHook | None]:
    """A progress bar on stderr in bytes, with the rate and the time left; off with
    `quiet` or when stderr is not a terminal."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    # Imported here: most runs (redirected, --quiet, JSON into a pipe) draw no bar.
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    with Progress(TextColumn("reading"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  TimeRemainingColumn(), TextColumn("{task.description}"),
                  console=err_console(), transient=True) as progress:
        task = progress.add_task("", total=None)

        def hook(done: int, total: int, path: str) -> None:
            progress.update(task, completed=done, total=total,
                            description=Path(path).name[-40:])

        yield hook


def _show_version(value: bool) -> None:
    if value:
        from rich.text import Text

        out_console().print(Text(f"sc-mlir {__version__}"))
        raise typer.Exit(EXIT_OK)


@app.callback()
def _commands(
    version: Annotated[bool, typer.Option("--version", metavar=NO_METAVAR, is_eager=True,
                                          callback=_show_version,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Explain XLA SparseCore scratch-memory allocation failures (E3000) from MLIR dumps."""


@cache
def _piped_console() -> type[Console]:
    from rich.console import Console

    class _PipedConsole(Console):
        """rich's console exits with status 1 when its reader goes away; let
        `stdout_may_close` decide instead."""

        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    return _PipedConsole


def out_console() -> Console:
    from sc_mlir.render.terminal import output_console

    return output_console(console_class=_piped_console())


def err_console() -> Console:
    from sc_mlir.render.terminal import output_console

    return output_console(stderr=True)


def print_notes(diagnostics: Sequence[Diagnostic], verbose: bool = False) -> None:
    """The notes of a run on stderr (`render.terminal.print_diagnostics`)."""
    from sc_mlir.render.terminal import print_diagnostics

    print_diagnostics(err_console(), diagnostics, verbose=verbose)


def usage_error(message: str) -> typer.Exit:
    """Print `error: message` on one line of stderr; raise the returned exit (code 2)."""
    from rich.text import Text

    err_console().print(Text.assemble(("error:", "red"), " ", message))
    return typer.Exit(EXIT_UNUSABLE)


@contextmanager
def stdout_may_close() -> Iterator[None]:
    """Output piped to a reader that stops early (`| head`): the rest is dropped, and the
    exit code keeps its meaning (1 is "a crossing was found", not "the pipe closed")."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        # Python's final flush would fail again and print a traceback: point the
        # descriptor at /dev/null instead.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def check_output_path(output: Path, inputs: Sequence[str | Path], force: bool) -> None:
    """Refuse (exit 2, saying why) to write where the user's data is: an input file, any
    file inside an input directory, or an existing file that is not an earlier report of
    ours (unless `force`)."""
    target = output.resolve()
    for given in inputs:
        source = Path(given).resolve()
        if target == source or (source.is_dir() and target.is_relative_to(source)):
            where = "is the input" if target == source else f"lies inside the input {given}"
            raise usage_error(f"will not write {output}: it {where}")
    if force or not target.exists():
        return
    if target.is_dir():
        raise usage_error(f"will not write {output}: it is a directory")
    try:
        with open(target, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        head = b""
    from sc_mlir.render.html import GENERATOR_MARK

    if GENERATOR_MARK.encode() not in head:
        raise usage_error(f"will not replace {output}: it exists and is not an sc-mlir "
                          "report (--force replaces it)")


def check_counts(top: int | None = None, jobs: int | None = None) -> None:
    """--top is 0 (all) or more; --jobs is 1 or more."""
    if top is not None and top < 0:
        raise usage_error(f"--top must be 0 (all) or a positive count, not {top}")
    if jobs is not None and jobs < 1:
        raise usage_error(f"--jobs must be 1 or more, not {jobs}")



BoundOpt = Annotated[list[str] | None, typer.Option("--bound", metavar="SPACE=WORDS", help=""
                    "The bound of a memory space (id or name), e.g. 201=65535. Repeatable.")]
ChipOpt = Annotated[str | None, typer.Option("--chip", metavar="CHIP", help="Take the bounds "
                    "of TileSpmem and TensorCore VMEM from this chip: v4, v5e, v5p, v6e, 7x "
                    "or 8i.")]
AlignOpt = Annotated[list[str] | None, typer.Option("--align", metavar="SPACE=BYTES", help=""
                     "Default alignment of allocas in a space (the op's own alignment wins). "
                     "Repeatable.")]
TopOpt = Annotated[int | None, typer.Option("--top", metavar="N", show_default=False, help=""
                   "Allocas listed per crossing and rows of the summary (0: all; default: 10 "
                   "allocas and what fits the screen).")]
ConfigOpt = Annotated[Path | None, typer.Option("--config", metavar="FILE", help="Read "
                      "settings from this file (default: ./sc-mlir.toml, else "
                      "\\[tool.sc-mlir] in ./pyproject.toml).")]
LogOpt = Annotated[Path | None, typer.Option("--log", metavar="LOG", help="A compile log: "
                   "take the bounds from the allocation failures it reports.")]

class FailOn(StrEnum):
    overflow = "overflow"
    regression = "regression"


FailOnOpt = Annotated[FailOn | None, typer.Option("--fail-on", help="overflow: exit 1 if AFTER "
                      "(the dump after, or the edited table) still crosses a bound; "
                      "regression: exit 1 if any (func, space) stack peak grew.")]
