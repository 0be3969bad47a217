"""The `sc-mlir` command line: a thin layer that wires arguments to load, analyses and
renderers. Exit codes: 0 success, 1 a crossing was found (analyze), 2 unusable input or a
usage error."""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sc_mlir.analysis import SPACE_COLUMNS, Analysis, analyze_records, space_row
from sc_mlir.bounds import (
    Bounds,
    Config,
    build_bounds,
    find_config,
    parse_assignments,
    read_config,
)
from sc_mlir.dump import (
    ALLOCATION_COLUMNS,
    Dump,
    LoadSettings,
    ProgressHook,
    allocation_row,
    example_path,
    load,
)
from sc_mlir.dumpdiff import (
    SpaceView,
    diff_views,
    is_saved_analysis,
    views_from_analysis,
    views_from_json,
)
from sc_mlir.explanation import bounds_from_failures, explain_all
from sc_mlir.gcpause import paused_gc
from sc_mlir.logs import Failure, read_log
from sc_mlir.model import DEFAULT_SCOPE_OPS, Allocation, ModelSettings
from sc_mlir.render.analysis_json import analysis_object
from sc_mlir.render.analysis_terminal import print_analysis
from sc_mlir.render.diff_render import EDIT_COLUMNS, diff_object, edit_object, print_diff
from sc_mlir.render.explain_render import explanation_object, print_explanations
from sc_mlir.render.html import GENERATOR_MARK
from sc_mlir.render.records import to_csv, to_json
from sc_mlir.render.terminal import allocation_tables, print_diagnostics, space_totals
from sc_mlir.scan import DEFAULT_RUN_ONCE_OPS, ScanSettings
from sc_mlir.spaces import NAME_ALIASES, SpaceMap

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
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
HtmlOpt = Annotated[Path | None, typer.Option("--html", help="Also write a self-contained HTML "
                    "report (plots embedded) to this file.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing output file that "
                     "is not an earlier sc-mlir report.")]


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
            _stderr().print(f"[red]error:[/red] will not write {output}: it {where}")
            raise typer.Exit(EXIT_UNUSABLE)
    if force or not target.exists():
        return
    if target.is_dir():
        _stderr().print(f"[red]error:[/red] will not write {output}: it is a directory")
        raise typer.Exit(EXIT_UNUSABLE)
    try:
        with open(target, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        head = b""
    if GENERATOR_MARK.encode() not in head:
        _stderr().print(f"[red]error:[/red] will not replace {output}: it exists and is not "
                        "an sc-mlir report (--force replaces it)")
        raise typer.Exit(EXIT_UNUSABLE)


@contextmanager
def progress_bar(quiet: bool) -> Iterator[ProgressHook | None]:
    """A progress bar on stderr for long reads; off when stderr is not a terminal."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    with Progress(TextColumn("reading"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("", total=None)

        def hook(done: int, total: int, path: str) -> None:
            progress.update(task, completed=done, total=total,
                            description=Path(path).name[-40:])

        yield hook


@app.callback()
def _commands() -> None:
    """Explain XLA SparseCore scratch-memory allocation failures (E3000) from MLIR dumps."""


class _PipedConsole(Console):
    """rich's console exits with status 1 when its reader goes away; let
    `stdout_may_close` decide instead."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def _stdout() -> Console:
    return _PipedConsole(soft_wrap=False)


def _stderr() -> Console:
    return Console(stderr=True)


def _resolve_path(path: Path | None, example: bool) -> str:
    if example:
        return example_path()
    if path is None:
        _stderr().print("[red]error:[/red] give a PATH or --example")
        raise typer.Exit(EXIT_UNUSABLE)
    return str(path)


def _config(path: Path | None) -> Config:
    try:
        return read_config(path) if path is not None else find_config(Path.cwd())
    except ValueError as exc:
        _stderr().print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_UNUSABLE) from None


def load_settings(config: Config) -> LoadSettings:
    """What the config file changes in reading: space names, scope and run-once ops."""
    try:
        space_map = SpaceMap.default().with_overrides(config.spaces)
    except ValueError as exc:
        _stderr().print(f"[red]error:[/red] {config.path}: {exc}")
        raise typer.Exit(EXIT_UNUSABLE) from None
    scope_ops = DEFAULT_SCOPE_OPS if config.scope_ops is None else config.scope_ops
    run_once = DEFAULT_RUN_ONCE_OPS if config.run_once_ops is None else config.run_once_ops
    model = ModelSettings(space_map, frozenset(scope_ops))
    scan = ScanSettings(run_once_ops=frozenset(run_once))
    return LoadSettings(scan, model)


def _load(path: str, jobs: int | None, settings: LoadSettings | None = None,
          quiet: bool = False) -> Dump:
    try:
        with progress_bar(quiet) as hook:
            dump = load(path, jobs=jobs, settings=settings, progress=hook)
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
    quiet: QuietOpt = False,
) -> None:
    """List every memref.alloca in a dump, with its size, memory space and source line."""
    source = _resolve_path(path, example)
    dump = _load(source, jobs, quiet=quiet)
    records = select(dump.records, space, func)
    with stdout_may_close():
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


BoundOpt = Annotated[list[str] | None, typer.Option("--bound", help="SPACE=WORDS: the "
                    "bound of a memory space (id or name), e.g. 201=65535. Repeatable.")]
ChipOpt = Annotated[str | None, typer.Option("--chip", help="Take TileSpmem's bound from this "
                    "chip: v5p, v6e, 7x or 8i.")]
AlignOpt = Annotated[list[str] | None, typer.Option("--align", help="SPACE=BYTES: default "
                     "alignment of allocas in a space (the op's own alignment wins). "
                     "Repeatable.")]
TopOpt = Annotated[int, typer.Option("--top", help="How many allocas to list per crossing.")]
ConfigOpt = Annotated[Path | None, typer.Option("--config", help="Read settings from this "
                      "file (default: ./sc-mlir.toml, else \\[tool.sc-mlir] in ./pyproject.toml).")]
LogOpt = Annotated[Path | None, typer.Option("--log", help="A compile log: take the bounds "
                   "from the allocation failures it reports.")]
AllocationsOpt = Annotated[bool, typer.Option("--allocations", help="JSON: also list every "
                           "alloca (what 'sc-mlir diff' needs to read a saved analysis).")]


@app.command()
def analyze(
    path: PathArg = None,
    example: ExampleOpt = False,
    bound: BoundOpt = None,
    chip: ChipOpt = None,
    align: AlignOpt = None,
    space: SpaceOpt = None,
    func: FuncOpt = None,
    top: TopOpt = 10,
    format: FormatOpt = Format.table,
    config: ConfigOpt = None,
    log: LogOpt = None,
    html: HtmlOpt = None,
    allocations: AllocationsOpt = False,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Say for every func and memory space whether the scratch allocations fit, and if not,
    which allocas push the offset past the bound and whether reuse could fit them.

    Exit code: 0 everything fits (or no bound is known), 1 an allocation crosses its
    bound, 2 unusable input or a usage error.
    """
    source = _resolve_path(path, example)
    if html is not None:
        check_output_path(html, [p for p in (source, log, config) if p is not None], force)
    settings_file = _config(config)
    try:
        bounds = build_bounds(settings_file, chip, parse_assignments(bound, "--bound"),
                              parse_assignments(align, "--align"))
    except ValueError as exc:
        _stderr().print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_UNUSABLE) from None
    if log is not None:
        bounds = bounds_from_failures(_read_log(log), bounds, f"log {log}")
    dump = _load(source, jobs, load_settings(settings_file), quiet)
    analysis = Analysis(analyze_records(dump.records, bounds), list(dump.diagnostics), bounds)
    analysis = analysis.select(space, func)
    if html is not None:
        _write_html(html, analysis.to_html(source))
    with stdout_may_close():
        if format is Format.json:
            sys.stdout.write(to_json(analysis_object(analysis, source, allocations)))
        elif format is Format.csv:
            sys.stdout.write(to_csv((space_row(r) for r in analysis.reports), SPACE_COLUMNS))
        else:
            print_analysis(_stdout(), analysis, source, top)
    if format is Format.table:
        print_diagnostics(_stderr(), dump.diagnostics)
    raise typer.Exit(EXIT_CROSSING if analysis.has_crossing else EXIT_OK)


def _write_html(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        _stderr().print(f"[red]error:[/red] cannot write {path}: {exc.strerror or exc}")
        raise typer.Exit(EXIT_UNUSABLE) from None
    _stderr().print(f"HTML report written to {path}")


def _read_log(path: Path) -> list[Failure]:
    try:
        return read_log(str(path))
    except OSError as exc:
        _stderr().print(f"[red]error:[/red] cannot read {path}: {exc.strerror or exc}")
        raise typer.Exit(EXIT_UNUSABLE) from None


LogArg = Annotated[Path, typer.Argument(help="A compile log: plain text, with ANSI colours, "
                   "a Python traceback, JSON lines, or wrapped by a log collector.")]
DumpOpt = Annotated[Path | None, typer.Option("--dump", help="The dump directory of the same "
                    "compile (--xla_sc_dump_mlir_to=DIR).")]


class ExplainFormat(StrEnum):
    table = "table"
    json = "json"


@app.command()
def explain(
    log: LogArg,
    dump: DumpOpt = None,
    format: Annotated[ExplainFormat, typer.Option("--format", "-f")] = ExplainFormat.table,
    config: ConfigOpt = None,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Find every SparseCore allocation failure in a compile log, match it to the allocas
    of the dump, check the numbers with the stack simulation, and say what to do.

    Exit code: 0 no failure in the log, 1 failures found, 2 unusable input.
    """
    failures = _read_log(log)
    settings_file = _config(config)
    try:
        base = build_bounds(settings_file, None, {}, {})
    except ValueError as exc:
        _stderr().print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_UNUSABLE) from None
    loaded = (_load(str(dump), jobs, load_settings(settings_file), quiet)
              if dump and failures else None)
    explanations = explain_all(failures, loaded, base, log_name=log.name)
    with stdout_may_close():
        if format is ExplainFormat.json:
            sys.stdout.write(to_json([explanation_object(e) for e in explanations]))
        else:
            print_explanations(_stdout(), explanations, str(log), str(dump or log))
    raise typer.Exit(EXIT_CROSSING if explanations else EXIT_OK)


class FailOn(StrEnum):
    overflow = "overflow"
    regression = "regression"


def _views(path: Path, bounds: Bounds, settings: LoadSettings, jobs: int | None,
           quiet: bool) -> list[SpaceView]:
    if is_saved_analysis(str(path)):
        try:
            return views_from_json(str(path))
        except (ValueError, KeyError, OSError) as exc:
            _stderr().print(f"[red]error:[/red] {exc}")
            raise typer.Exit(EXIT_UNUSABLE) from None
    dump = _load(str(path), jobs, settings, quiet)
    analysis = Analysis(analyze_records(dump.records, bounds), list(dump.diagnostics), bounds)
    return views_from_analysis(analysis, str(path))


@app.command()
def diff(
    before: Annotated[Path, typer.Argument(help="The dump (or file, or saved analysis "
                                           "JSON) before the change.")],
    after: Annotated[Path, typer.Argument(help="The same after the change.")],
    space: SpaceOpt = None,
    format: FormatOpt = Format.table,
    fail_on: Annotated[FailOn | None, typer.Option("--fail-on", help="overflow: exit 1 if "
                       "AFTER still crosses a bound; regression: exit 1 if any (func, space) "
                       "stack peak grew.")] = None,
    top: TopOpt = 20,
    bound: BoundOpt = None,
    chip: ChipOpt = None,
    align: AlignOpt = None,
    config: ConfigOpt = None,
    html: HtmlOpt = None,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
) -> None:
    """Compare two dumps after a config change: which buffers changed and by how much,
    and whether it now fits. Deltas are AFTER minus BEFORE ("+" grew in AFTER)."""
    if html is not None:
        check_output_path(html, [p for p in (before, after, config) if p is not None], force)
    settings_file = _config(config)
    try:
        bounds = build_bounds(settings_file, chip, parse_assignments(bound, "--bound"),
                              parse_assignments(align, "--align"))
    except ValueError as exc:
        _stderr().print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_UNUSABLE) from None
    settings = load_settings(settings_file)
    result = diff_views(_views(before, bounds, settings, jobs, quiet),
                        _views(after, bounds, settings, jobs, quiet), str(before), str(after))
    result = result.select(space)
    if html is not None:
        _write_html(html, result.to_html())
    with stdout_may_close():
        if format is Format.json:
            sys.stdout.write(to_json(diff_object(result, top=None)))
        elif format is Format.csv:
            sys.stdout.write(to_csv((edit_object(e) for e in result.allocations),
                                    EDIT_COLUMNS))
        else:
            print_diff(_stdout(), result, top)
    failed = (fail_on is FailOn.overflow and result.after_crosses) or (
        fail_on is FailOn.regression and result.regressed)
    raise typer.Exit(EXIT_CROSSING if failed else EXIT_OK)


def main() -> None:
    with paused_gc():  # the whole run holds its objects to the end (see gcpause)
        app()


if __name__ == "__main__":
    main()
