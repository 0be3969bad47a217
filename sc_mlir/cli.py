"""The `sc-mlir` command line: a thin layer that wires arguments to load, analyses and
renderers. Exit codes: 0 success, 1 a crossing was found (analyze), 2 unusable input or a
usage error."""

from __future__ import annotations

import fnmatch
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from sc_mlir.dump import ALLOCATION_COLUMNS, Dump, allocation_row, example_path, load
from sc_mlir.model import Allocation
from sc_mlir.render.records import to_csv, to_json
from sc_mlir.render.terminal import allocation_tables, print_diagnostics, space_totals
from sc_mlir.spaces import NAME_ALIASES

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Explain XLA SparseCore scratch-memory allocation failures (E3000) from MLIR dumps.",
)

EXIT_OK, EXIT_CROSSING, EXIT_UNUSABLE = 0, 1, 2


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


PathArg = Annotated[
    Path | None,
    typer.Argument(help="A dump directory (from --xla_sc_dump_mlir_to) or one MLIR file."),
]
ExampleOpt = Annotated[bool, typer.Option("--example", help="Use the sample dump shipped "
                                          "with sc-mlir instead of PATH.")]
SpaceOpt = Annotated[list[str] | None, typer.Option("--space", help="Only this memory space: "
                     "an id (201) or a name (tile_spmem, vmem, ...). Repeatable.")]
FuncOpt = Annotated[list[str] | None, typer.Option("--func", help="Only funcs with this "
                    "name (shell-style wildcards allowed). Repeatable.")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
JobsOpt = Annotated[int | None, typer.Option("--jobs", "-j", help="Worker processes for "
                    "reading a directory (default: all cores).")]


@app.callback()
def _commands() -> None:
    """Explain XLA SparseCore scratch-memory allocation failures (E3000) from MLIR dumps."""


def _stdout() -> Console:
    return Console(soft_wrap=False)


def _stderr() -> Console:
    return Console(stderr=True)


def _resolve_path(path: Path | None, example: bool) -> str:
    if example:
        return example_path()
    if path is None:
        _stderr().print("[red]error:[/red] give a PATH or --example")
        raise typer.Exit(EXIT_UNUSABLE)
    return str(path)


def _load(path: str, jobs: int | None) -> Dump:
    try:
        dump = load(path, jobs=jobs)
    except FileNotFoundError as exc:
        _stderr().print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_UNUSABLE) from None
    if not dump.usable:
        print_diagnostics(_stderr(), dump.diagnostics)
        _stderr().print(f"[red]error:[/red] no MLIR text found in {path}")
        raise typer.Exit(EXIT_UNUSABLE)
    return dump


def space_matches(record: Allocation, wanted: list[str]) -> bool:
    for item in wanted:
        text = item.strip()
        if text.lstrip("-").isdigit():
            if record.space_id == int(text):
                return True
            continue
        lowered = text.lower()
        if lowered in NAME_ALIASES and record.space_id == NAME_ALIASES[lowered]:
            return True
        if lowered in (record.space_name.lower(), (record.memory_space or "").lower()):
            return True
    return False


def select(records: list[Allocation], spaces: list[str] | None, funcs: list[str] | None
           ) -> list[Allocation]:
    if spaces:
        records = [r for r in records if space_matches(r, spaces)]
    if funcs:
        records = [r for r in records if any(fnmatch.fnmatchcase(r.func, f) for f in funcs)]
    return records


@app.command()
def allocas(
    path: PathArg = None,
    example: ExampleOpt = False,
    space: SpaceOpt = None,
    func: FuncOpt = None,
    format: FormatOpt = Format.table,
    jobs: JobsOpt = None,
) -> None:
    """List every memref.alloca in a dump, with its size, memory space and source line."""
    source = _resolve_path(path, example)
    dump = _load(source, jobs)
    records = select(dump.records, space, func)
    if format is Format.json:
        sys.stdout.write(to_json([allocation_row(r) for r in records]))
    elif format is Format.csv:
        sys.stdout.write(to_csv((allocation_row(r) for r in records), ALLOCATION_COLUMNS))
    else:
        console = _stdout()
        console.print(f"[bold]{len(records)} memref.alloca op(s)[/bold] in {source}")
        for table in allocation_tables(records, base=source):
            console.print(table)
        if records:
            console.print(space_totals(records))
    print_diagnostics(_stderr(), dump.diagnostics)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
