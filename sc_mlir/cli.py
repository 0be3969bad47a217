"""The `sc-mlir` command line: a thin layer that wires arguments to load, analyses and
renderers. Exit codes: 0 success, 1 a crossing was found (analyze), 2 unusable input or a
usage error."""

from __future__ import annotations

import fnmatch
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.text import Text
from typer.core import TyperArgument, TyperCommand, TyperGroup

from sc_mlir import __version__
from sc_mlir.analysis import SPACE_COLUMNS, Analysis, analyze_records, space_row
from sc_mlir.compare.diff import (
    SpaceView,
    diff_views,
    is_saved_analysis,
    views_from_analysis,
    views_from_json,
)
from sc_mlir.compare.passes import read_timelines
from sc_mlir.compare.whatif import EditError, edits_from_options, what_if
from sc_mlir.failures.explain import bounds_from_failures, explain_all
from sc_mlir.failures.logs import Failure, read_log
from sc_mlir.formats.analysis_json import GROUP_COLUMNS, analysis_object, group_rows
from sc_mlir.formats.records import to_csv, to_json
from sc_mlir.model.allocation import DEFAULT_SCOPE_OPS, Allocation, ModelSettings
from sc_mlir.model.bounds import (
    Bounds,
    Config,
    build_bounds,
    find_config,
    parse_assignments,
    read_config,
)
from sc_mlir.model.dump import (
    ALLOCATION_COLUMNS,
    Dump,
    LoadSettings,
    NoMLIRFound,
    ProgressHook,
    allocation_row,
    example_path,
    load,
)
from sc_mlir.model.spaces import NAME_ALIASES, SpaceMap
from sc_mlir.read.jaxbridge import JaxApiError, JaxMissing
from sc_mlir.read.scan import DEFAULT_RUN_ONCE_OPS, ScanSettings
from sc_mlir.render.analysis_terminal import print_analysis, print_groups
from sc_mlir.render.diff_render import EDIT_COLUMNS, diff_object, edit_object, print_diff
from sc_mlir.render.explain_render import explanation_object, print_explanations
from sc_mlir.render.terminal import (
    allocation_tables,
    fitted,
    output_console,
    print_diagnostics,
    space_totals,
)
from sc_mlir.render.timeline_render import (
    STEP_COLUMNS,
    print_timelines,
    step_rows,
    timelines_object,
)
from sc_mlir.support.gcpause import paused_gc

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
                    "processes for reading (1 or more; default: all cores).")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", metavar=NO_METAVAR,
                                        help="No progress bar.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", metavar=NO_METAVAR, help="List "
                       "every note on the input, including the files that are not MLIR.")]
HtmlOpt = Annotated[Path | None, typer.Option("--html", metavar="FILE", help="Also write a "
                    "self-contained HTML report (plots embedded) to this file.")]


@contextmanager
def progress_bar(quiet: bool) -> Iterator[ProgressHook | None]:
    """A progress bar on stderr in bytes, with the rate and the time left; off with
    `quiet` or when stderr is not a terminal."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    with Progress(TextColumn("reading"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  TimeRemainingColumn(), TextColumn("{task.description}"),
                  console=_stderr(), transient=True) as progress:
        task = progress.add_task("", total=None)

        def hook(done: int, total: int, path: str) -> None:
            progress.update(task, completed=done, total=total,
                            description=Path(path).name[-40:])

        yield hook


def _show_version(value: bool) -> None:
    if value:
        _stdout().print(Text(f"sc-mlir {__version__}"))
        raise typer.Exit(EXIT_OK)


@app.callback()
def _commands(
    version: Annotated[bool, typer.Option("--version", metavar=NO_METAVAR, is_eager=True,
                                          callback=_show_version,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Explain XLA SparseCore scratch-memory allocation failures (E3000) from MLIR dumps."""


def _stdout() -> Console:
    return output_console()


def _stderr() -> Console:
    return output_console(stderr=True)


def usage_error(message: str) -> typer.Exit:
    """Print `error: message` on one line of stderr; raise the returned exit (code 2)."""
    _stderr().print(Text.assemble(("error:", "red"), " ", message))
    return typer.Exit(EXIT_UNUSABLE)


def check_counts(top: int | None = None, jobs: int | None = None) -> None:
    """--top is 0 (all) or more; --jobs is 1 or more."""
    if top is not None and top < 0:
        raise usage_error(f"--top must be 0 (all) or a positive count, not {top}")
    if jobs is not None and jobs < 1:
        raise usage_error(f"--jobs must be 1 or more, not {jobs}")


def _listing(items: list[str], limit: int = 12) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def space_list(records: list[Allocation]) -> list[str]:
    """The memory spaces of some records as `id (name)` or `name`, sorted."""
    labels = {(r.space_id if r.space_id is not None else 1 << 62, r.space_name)
              for r in records}
    return [f"{sid} ({name})" if sid != 1 << 62 else name for sid, name in sorted(labels)]


def check_selection(records: list[Allocation], spaces: list[str] | None,
                    funcs: list[str] | None) -> None:
    """Every --space and every --func matches something in the dump, else exit 2 naming
    what the dump has."""
    for wanted in spaces or []:
        if not any(space_matches(r, [wanted]) for r in records):
            raise usage_error(f"no memory space {wanted!r} in the dump; it has: "
                              f"{_listing(space_list(records)) or 'no allocas'}")
    names = sorted({r.func for r in records})
    for pattern in funcs or []:
        if not any(fnmatch.fnmatchcase(name, pattern) for name in names):
            raise usage_error(f"no func matches {pattern!r}; the dump has: "
                              f"{_listing(names) or 'no allocas'}")


def warn_unused_bounds(records: list[Allocation], assigned: list[str] | None) -> None:
    """A --bound for a space the dump lacks: a warning naming the spaces it has (config
    files may list more spaces than one dump uses, so only the command line is checked)."""
    for item in assigned or []:
        space = item.partition("=")[0].strip()
        if records and not any(space_matches(r, [space]) for r in records):
            _stderr().print(Text.assemble(
                ("warning:", "yellow"), f" --bound {item}: the dump has no memory space "
                f"{space!r}; it has: {_listing(space_list(records))}"))


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
        raise usage_error(str(exc)) from None
    except (JaxMissing, JaxApiError) as exc:  # embedded Pallas kernels that cannot be read
        raise usage_error(str(exc)) from None
    except NoMLIRFound as exc:
        print_diagnostics(_stderr(), exc.diagnostics, verbose=True)
        raise usage_error(f"no MLIR text found in {path}") from None
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
    source = _resolve_path(path, example)
    dump = _load(source, jobs, quiet=quiet)
    check_selection(dump.records, space, func)
    records = select(dump.records, space, func)
    if format is Format.json:
        sys.stdout.write(to_json([allocation_row(r) for r in records]))
    elif format is Format.csv:
        sys.stdout.write(to_csv((allocation_row(r) for r in records), ALLOCATION_COLUMNS))
    else:
        console = _stdout()
        kinds = Counter(r.kind for r in records)
        console.print(Text(f"{len(records)} entr{'y' if len(records) == 1 else 'ies'} in "
                           f"{source}: " + (", ".join(f"{count} {kind}" for kind, count
                                                      in sorted(kinds.items())) or "none"),
                           style="bold"))
        for table in allocation_tables(records, base=source):
            console.print(fitted(console, table))
        if records:
            console.print(fitted(console, space_totals(records)))
    print_diagnostics(_stderr(), dump.diagnostics, verbose=verbose)


BoundOpt = Annotated[list[str] | None, typer.Option("--bound", metavar="SPACE=WORDS", help=""
                    "The bound of a memory space (id or name), e.g. 201=65535. Repeatable.")]
ChipOpt = Annotated[str | None, typer.Option("--chip", metavar="CHIP", help="Take TileSpmem's "
                    "bound from this chip: v5p, v6e, 7x or 8i.")]
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
AllocationsOpt = Annotated[bool, typer.Option("--allocations", metavar=NO_METAVAR, help="JSON: "
                           "also list every alloca (what 'sc-mlir diff' needs to read a saved "
                           "analysis).")]
AllOpt = Annotated[bool, typer.Option("--all", metavar=NO_METAVAR, help="List the "
                   "unknown-bound (func, space) rows too (default: one line about them).")]


class GroupBy(StrEnum):
    source = "source"
    file = "file"
    name = "name"


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
    allocations: AllocationsOpt = False,
    group_by: GroupByOpt = None,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    all: AllOpt = False,
) -> None:
    check_counts(top, jobs)
    source = _resolve_path(path, example)
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
    check_selection(dump.records, space, func)
    warn_unused_bounds(dump.records, bound)
    analysis = Analysis(analyze_records(dump.records, bounds), list(dump.diagnostics), bounds)
    analysis = analysis.select(space, func)
    by = group_by.value if group_by is not None else None
    if html is not None:
        _write_html(html, analysis.to_html(source, group_by=by))
    if format is Format.json:
        sys.stdout.write(to_json(analysis_object(analysis, source, allocations, by)))
    elif format is Format.csv and by is not None:
        sys.stdout.write(to_csv(group_rows(analysis, by), GROUP_COLUMNS))
    elif format is Format.csv:
        sys.stdout.write(to_csv((space_row(r) for r in analysis.reports), SPACE_COLUMNS))
    else:
        print_analysis(_stdout(), analysis, source, top, show_all=all)
        if by is not None:
            print_groups(_stdout(), analysis, by, top)
    if format is Format.table:
        print_diagnostics(_stderr(), dump.diagnostics, verbose=verbose)
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
    fail_on: Annotated[FailOn | None, typer.Option("--fail-on", help="overflow: exit 1 if "
                       "AFTER still crosses a bound; regression: exit 1 if any (func, space) "
                       "stack peak grew.")] = None,
    top: Annotated[int, typer.Option("--top", metavar="N", help="Changed allocas listed "
                   "(0: all).")] = 20,
    bound: BoundOpt = None,
    chip: ChipOpt = None,
    align: AlignOpt = None,
    config: ConfigOpt = None,
    html: HtmlOpt = None,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
) -> None:
    check_counts(top, jobs)
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
    for wanted in space or []:
        if not result.select([wanted]).spaces:
            labels = sorted({c.space_label for c in result.spaces})
            raise usage_error(f"no memory space {wanted!r} in either dump; they have: "
                              f"{_listing(labels) or 'no allocas'}")
    result = result.select(space)
    if html is not None:
        _write_html(html, result.to_html())
    if format is Format.json:
        sys.stdout.write(to_json(diff_object(result, top=None)))
    elif format is Format.csv:
        sys.stdout.write(to_csv((edit_object(e) for e in result.allocations), EDIT_COLUMNS))
    else:
        print_diff(_stdout(), result, top)
    failed = (fail_on is FailOn.overflow and result.after_crosses) or (
        fail_on is FailOn.regression and result.regressed)
    raise typer.Exit(EXIT_CROSSING if failed else EXIT_OK)


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
) -> None:
    """Which pass crossed the bound: stack, liveness and packed peaks of every func and
    memory space after every pass, the first pass after which the stack crosses the bound,
    and what that pass changed.

    Exit code: 0 nothing crosses (or no bound is known), 1 some (func, space) crosses its
    bound after some pass, 2 unusable input or a usage error.
    """
    check_counts(top=top)
    settings_file = _config(config)
    try:
        bounds = build_bounds(settings_file, chip, parse_assignments(bound, "--bound"),
                              parse_assignments(align, "--align"))
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    try:
        result = read_timelines(path, bounds, load_settings(settings_file), space, func)
    except FileNotFoundError as exc:
        raise usage_error(str(exc)) from None
    if result.passes == 0:
        print_diagnostics(_stderr(), result.diagnostics)
        what = ("only 'IR Dump Before' chunks (print after the passes: "
                "--mlir-print-ir-after-all)" if result.skipped_before else "no MLIR text")
        raise usage_error(f"{what} found in {path}")
    if (space or func) and not result.timelines:
        raise usage_error("no (func, memory space) of the dump matches "
                          + " ".join([*(f"--space {s}" for s in space or []),
                                      *(f"--func {f}" for f in func or [])]))
    if html is not None:
        _write_html(html, result.to_html())
    if format is Format.json:
        sys.stdout.write(to_json(timelines_object(result)))
    elif format is Format.csv:
        sys.stdout.write(to_csv(step_rows(result), STEP_COLUMNS))
    else:
        print_timelines(_stdout(), result, top)
        print_diagnostics(_stderr(), result.diagnostics)
    raise typer.Exit(EXIT_CROSSING if result.has_crossing else EXIT_OK)


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
    fail_on: Annotated[FailOn | None, typer.Option("--fail-on", help="overflow: exit 1 if "
                       "the edited table still crosses a bound; regression: exit 1 if any "
                       "(func, space) stack peak grew.")] = None,
    top: TopOpt = 20,
    config: ConfigOpt = None,
    html: HtmlOpt = None,
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
    source = _resolve_path(path, example)
    settings_file = _config(config)
    try:
        bounds = build_bounds(settings_file, chip, parse_assignments(bound, "--bound"), {})
        edits = edits_from_options(resize or (), drop or (), scale or (),
                                   parse_assignments(align, "--align"))
        if edits.align:  # checked here, so that a bad value is a usage error
            bounds.with_alignments(dict(edits.align), "--align")
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    if not (edits.resize or edits.drop or edits.scale or edits.align):
        raise usage_error("give at least one edit: --resize, --drop, --scale or --align")
    dump = _load(source, jobs, load_settings(settings_file), quiet)
    check_selection(dump.records, space, func)
    warn_unused_bounds(dump.records, bound)
    records = select(dump.records, space, func)
    try:
        result = what_if(records, bounds, edits, root=source, before_name=source)
    except EditError as exc:
        raise usage_error(str(exc)) from None
    result = result.select(space)
    if html is not None:
        _write_html(html, result.to_html())
    if format is Format.json:
        sys.stdout.write(to_json(diff_object(result, top=None)))
    elif format is Format.csv:
        sys.stdout.write(to_csv((edit_object(e) for e in result.allocations), EDIT_COLUMNS))
    else:
        print_diff(_stdout(), result, top)
    if format is Format.table:
        print_diagnostics(_stderr(), dump.diagnostics)
    failed = (fail_on is FailOn.overflow and result.after_crosses) or (
        fail_on is FailOn.regression and result.regressed)
    raise typer.Exit(EXIT_CROSSING if failed else EXIT_OK)


def main() -> None:
    with paused_gc():  # the whole run holds its objects to the end (see gcpause)
        app()


if __name__ == "__main__":
    main()
