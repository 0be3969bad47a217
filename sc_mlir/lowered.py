"""Check Pallas kernels before they reach a TPU: from a lowered JAX program, or from a
function and its arguments, lowered here for a chip under an abstract device.

    analysis = sc_mlir.check(my_kernel_fn, x, table, chip="7x")
    sc_mlir.assert_fits(my_kernel_fn, x, table, chip="7x")   # in a project's CPU tests

Each kernel is analysed as a file named `PROGRAM#kernel_name`, where PROGRAM is the
lowered module's name (`jit_f` for `jax.jit(f)`).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Mapping
from typing import Any

from sc_mlir.model.bounds import CHIP_ALIASES, Bounds
from sc_mlir.model.dump import LoadSettings, read_program_kernels
from sc_mlir.notebook import Analysis, Dump
from sc_mlir.read import jaxbridge
from sc_mlir.read.programs import program_of

_MODULE_NAME = re.compile(r"^\s*(?:module|HloModule)\s+@?([\w$.\-]+)", re.M)


class KernelDoesNotFit(AssertionError):
    """A Pallas kernel's scratch crosses a memory space's bound; the message is the
    report that says which entries and what to shrink."""

    def __init__(self, report: str, analysis: Analysis) -> None:
        super().__init__(report)
        self.analysis = analysis


def from_lowered(lowered: Any, *, name: str | None = None,
                 settings: LoadSettings | None = None) -> Dump:
    """The Pallas kernels of a lowered program: a `jax.stages.Lowered`, or its text
    (`lowered.as_text()`, StableHLO, or XLA's HLO text). Needs jax to read the kernels.

    A program without any `tpu_custom_call` gives an empty dump with a note saying so.
    """
    text = lowered if isinstance(lowered, str) else jaxbridge.lowered_text(lowered)
    program_name = name or _program_name(text)
    settings = settings or LoadSettings()
    dump = Dump(program_name, [], [], [], settings)
    program = program_of(text, program_name)
    if program is None:
        from sc_mlir.read.scan import Diagnostic

        dump.diagnostics.append(Diagnostic(program_name, 0, 0, "no tpu_custom_call in the "
                                           "lowered program: it holds no Pallas kernel"))
        return dump
    if program.kernels and not jaxbridge.available():
        from sc_mlir.read.programs import missing_jax_message

        raise jaxbridge.JaxMissing(missing_jax_message([program]))
    for result in read_program_kernels(program, settings):
        dump.records.extend(result.records)
        dump.files.append(result.summary)
        dump.diagnostics.extend(result.diagnostics)
    dump.diagnostics[:0] = program.diagnostics
    return dump


def _program_name(text: str) -> str:
    match = _MODULE_NAME.search(text)
    return match.group(1) if match else "<lowered>"


def check(fn: Callable[..., Any], *args: Any, chip: str = "7x",
          bounds: Bounds | Mapping[str, int] | None = None,
          align: Mapping[str, int] | None = None) -> Analysis:
    """Lower `fn(*args)` for TPU `chip` on this host (no TPU needed: an abstract device of
    that chip stands in) and analyse every Pallas kernel in it with that chip's bounds.

    `args` are arrays or `jax.ShapeDtypeStruct`s, as `jax.jit(fn).trace` takes them.
    """
    lowered = jaxbridge.lower(fn, args, chip, CHIP_ALIASES)
    dump = from_lowered(lowered)
    return dump.analyze(bounds, chip=chip, align=align)


def assert_fits(fn: Callable[..., Any], *args: Any, chip: str = "7x",
                bounds: Bounds | Mapping[str, int] | None = None,
                align: Mapping[str, int] | None = None) -> Analysis:
    """`check`, then raise `KernelDoesNotFit` (an AssertionError) with the report's text
    when any kernel's scratch crosses a bound. Raises ValueError when `fn` holds no
    Pallas kernel at all, so that a test of the wrong function cannot pass unnoticed."""
    analysis = check(fn, *args, chip=chip, bounds=bounds, align=align)
    if not analysis.reports:
        notes = "; ".join(str(d) for d in analysis.diagnostics) or "no allocation found"
        raise ValueError(f"nothing to check: no Pallas kernel scratch in the lowering of "
                         f"{getattr(fn, '__name__', fn)!r} ({notes})")
    if analysis.has_crossing:
        raise KernelDoesNotFit(report_text(analysis), analysis)
    return analysis


def report_text(analysis: Analysis, top: int = 10, width: int = 100) -> str:
    """The terminal report as plain text (no colours), as `sc-mlir analyze` prints it."""
    from rich.console import Console

    from sc_mlir.render.analysis_terminal import print_analysis

    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, emoji=False,
                      soft_wrap=False, force_terminal=False, force_jupyter=False)
    base = analysis.reports[0].file.split("#")[0] if analysis.reports else ""
    print_analysis(console, analysis.reports, base, top)
    # Leading newline: pytest prints the message after "KernelDoesNotFit: ".
    return "\n" + "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())
