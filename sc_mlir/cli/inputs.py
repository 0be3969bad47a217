"""Command-line inputs turned into what the API takes (paths, settings, dumps, selections),
with every problem reported as a usage error (exit 2)."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from sc_mlir.cli.app import (
    err_console,
    print_notes,
    progress_bar,
    usage_error,
)
from sc_mlir.model.allocation import Allocation
from sc_mlir.model.bounds import (
    Bounds,
    Config,
    build_bounds,
    find_config,
    parse_assignments,
    read_config,
)
from sc_mlir.model.dump import (
    Dump,
    FileWork,
    LoadSettings,
    NoMLIRFound,
    example_path,
    load,
)
from sc_mlir.model.spaces import space_matches
from sc_mlir.read.jaxbridge import JaxApiError, JaxMissing

if TYPE_CHECKING:
    from sc_mlir.compare.diff import SpaceView
    from sc_mlir.failures.logs import Failure


def listing(items: list[str], limit: int = 12) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


class InSpaceAndFunc(Protocol):
    """What the selection checks read of a record: an `Allocation`, or its `Facet`."""

    @property
    def space_id(self) -> int | None: ...
    @property
    def space_name(self) -> str: ...
    @property
    def memory_space(self) -> str | None: ...
    @property
    def func(self) -> str: ...


class Facet(NamedTuple):
    """A record as the selection checks see it (what `analyze` gathers of each file as it
    is read, the records themselves not being kept)."""

    space_id: int | None
    space_name: str
    memory_space: str | None
    func: str


def facets_of(records: list[Allocation]) -> set[Facet]:
    """The distinct facets of some records: what the selection checks need of a file."""
    return {Facet(r.space_id, r.space_name, r.memory_space, r.func) for r in records}


def space_list(records: Iterable[InSpaceAndFunc]) -> list[str]:
    """The memory spaces of some records as `id (name)` or `name`, sorted."""
    labels = {(r.space_id if r.space_id is not None else 1 << 62, r.space_name)
              for r in records}
    return [f"{sid} ({name})" if sid != 1 << 62 else name for sid, name in sorted(labels)]


def check_selection(records: Collection[InSpaceAndFunc], spaces: list[str] | None,
                    funcs: list[str] | None) -> None:
    """Every --space and every --func matches something in the dump, else exit 2 naming
    what the dump has."""
    for wanted in spaces or []:
        if not any(record_in_spaces(r, [wanted]) for r in records):
            raise usage_error(f"no memory space {wanted!r} in the dump; it has: "
                              f"{listing(space_list(records)) or 'no allocas'}")
    names = sorted({r.func for r in records})
    for pattern in funcs or []:
        if not any(fnmatch.fnmatchcase(name, pattern) for name in names):
            raise usage_error(f"no func matches {pattern!r}; the dump has: "
                              f"{listing(names) or 'no allocas'}")


def warn_unused_bounds(records: Collection[InSpaceAndFunc], assigned: list[str] | None) -> None:
    """A --bound for a space the dump lacks: a warning naming the spaces it has (config
    files may list more spaces than one dump uses, so only the command line is checked)."""
    for item in assigned or []:
        space = item.partition("=")[0].strip()
        if records and not any(record_in_spaces(r, [space]) for r in records):
            from rich.text import Text

            err_console().print(Text.assemble(
                ("warning:", "yellow"), f" --bound {item}: the dump has no memory space "
                f"{space!r}; it has: {listing(space_list(records))}"))


def resolve_path(path: Path | None, example: bool) -> str:
    if example:
        return example_path()
    if path is None:
        raise usage_error("give a PATH or --example")
    return str(path)


def settings_file_of(path: Path | None) -> Config:
    try:
        return read_config(path) if path is not None else find_config(Path.cwd())
    except ValueError as exc:
        raise usage_error(f"{exc}") from None


def load_settings(config: Config) -> LoadSettings:
    """What the config file changes in reading; a bad mapping is a usage error."""
    try:
        return LoadSettings.from_config(config)
    except ValueError as exc:
        raise usage_error(f"{exc}") from None


def load_dump(path: str, jobs: int | None, settings: LoadSettings | None = None,
              quiet: bool = False,
              work: FileWork | None = None,
              on_answer: Callable[[object], object] | None = None,
              keep_records: bool = True) -> Dump:
    try:
        with progress_bar(quiet) as hook:
            dump = load(path, jobs=jobs, settings=settings, progress=hook, work=work,
                        on_answer=on_answer, keep_records=keep_records)
    except FileNotFoundError as exc:
        raise usage_error(str(exc)) from None
    except (JaxMissing, JaxApiError) as exc:  # embedded Pallas kernels that cannot be read
        raise usage_error(str(exc)) from None
    except NoMLIRFound as exc:
        print_notes(exc.diagnostics, verbose=True)
        raise usage_error(f"no MLIR text found in {path}") from None
    return dump


def record_in_spaces(record: InSpaceAndFunc, wanted: list[str]) -> bool:
    return any(space_matches(item, record.space_id, record.space_name, record.memory_space)
               for item in wanted)


def select(records: list[Allocation], spaces: list[str] | None, funcs: list[str] | None
           ) -> list[Allocation]:
    if spaces:
        records = [r for r in records if record_in_spaces(r, spaces)]
    if funcs:
        records = [r for r in records if any(fnmatch.fnmatchcase(r.func, f) for f in funcs)]
    return records


def write_html(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise usage_error(f"cannot write {path}: {exc.strerror or exc}") from None
    err_console().print(f"HTML report written to {path}")


def read_log_or_exit(path: Path) -> list[Failure]:
    # Imported here: the other commands (`analyze --format json` above all) do not pay for
    # loading this layer at start-up.
    from sc_mlir.failures.logs import read_log

    try:
        return read_log(str(path))
    except OSError as exc:
        raise usage_error(f"cannot read {path}: {exc.strerror or exc}") from None


def views_of(path: Path, bounds: Bounds, settings: LoadSettings, jobs: int | None,
           quiet: bool) -> list[SpaceView]:
    # Imported here: the other commands (`analyze --format json` above all) do not pay for
    # loading this layer at start-up.
    from sc_mlir.compare.diff import side_views

    try:
        views, _ = side_views(path, bounds,
                              lambda source: load_dump(source, jobs, settings, quiet))
    except (ValueError, KeyError, OSError) as exc:  # a saved analysis that does not read
        raise usage_error(f"{exc}") from None
    return views


def bounds_or_exit(settings_file: Config, chip: str | None, bound: list[str] | None,
                   align: list[str] | None) -> Bounds:
    """The bounds table of a command's options (`--chip`, `--bound`, `--align`) over its
    config file; a bad value is a usage error."""
    try:
        return build_bounds(settings_file, chip, parse_assignments(bound, "--bound"),
                            parse_assignments(align, "--align"))
    except ValueError as exc:
        raise usage_error(str(exc)) from None
