"""Lowered programs among the files of a dump: each embedded Pallas kernel becomes a file
of its own, named `FILE#kernel_name`, held in memory as MLIR text.

A file is a lowered program when its first bytes look like HLO or StableHLO and its text
names `tpu_custom_call`. Finding the calls needs no jax (`sc_mlir.read.embedded`); printing
each kernel's bytecode as MLIR does (`sc_mlir.read.jaxbridge`).
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from typing import BinaryIO

from sc_mlir.read import jaxbridge
from sc_mlir.read.discover import SNIFF_BYTES, Skipped
from sc_mlir.read.embedded import (
    INSTALL_LINE,
    TARGET,
    EmbeddedKernel,
    count_mentions,
    find_kernels,
    looks_like_program,
)
from sc_mlir.read.scan import Diagnostic

# The sniffer's verdict on HLO text, which has no MLIR in it: such files may be programs.
_NOT_MLIR = "no MLIR found"
_SEARCH_BLOCK = 4 << 20
_TARGET_BYTES = TARGET.encode()


@dataclass
class KernelSource:
    """One kernel to analyse: its name as a file (`FILE#kernel`) and its MLIR text."""

    path: str
    text: str


@dataclass
class Program:
    """A lowered program's file, its kernels, and what could not be read in it."""

    path: str
    kernels: list[EmbeddedKernel]
    diagnostics: list[Diagnostic] = field(default_factory=list)


def split_programs(files: list[str], skipped: list[Skipped],
                   no_programs: Container[str] = frozenset()
                   ) -> tuple[list[str], list[Skipped], list[Program]]:
    """Take the lowered programs out of a dump's MLIR files (and out of the files skipped
    as not MLIR, which HLO text is). The files in `no_programs` are known to hold none
    (`may_hold_a_program` said so of their heads, read by discovery): they are not read
    again."""
    programs: list[Program] = []
    kept_files: list[str] = []
    for path in files:
        program = None if path in no_programs else read_program(path)
        if program is None:
            kept_files.append(path)
        else:
            programs.append(program)
    kept_skipped: list[Skipped] = []
    for item in skipped:
        program = (read_program(item.path) if item.reason.startswith(_NOT_MLIR)
                   and item.path not in no_programs else None)
        if program is None:
            kept_skipped.append(item)
        else:
            programs.append(program)
    return kept_files, kept_skipped, programs


def may_hold_a_program(head: bytes) -> bool:
    """Whether `read_program` may find a program in a file whose first `SNIFF_BYTES` are
    `head`: a whole file (a shorter head) that never names the target holds none."""
    return len(head) >= SNIFF_BYTES or _TARGET_BYTES in head


def read_program(path: str) -> Program | None:
    """The program in a file, or None when the file holds no `tpu_custom_call`."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
            if len(head) < SNIFF_BYTES:
                # The whole file: whether it names the target is one search, cheaper than
                # looking for the signals of a program (four), so it goes first.
                found = may_hold_a_program(head) and looks_like_program(head)
            else:  # a large file is searched for the target only if it looks like one
                found = looks_like_program(head) and _names_target(head, handle)
            if not found:
                return None
            handle.seek(0)
            data = handle.read()
    except OSError:
        return None  # the ordinary reader reports it
    return program_of(data.decode("utf-8", errors="replace"), path)


def _names_target(head: bytes, handle: BinaryIO) -> bool:
    """Whether the file names the target anywhere: searched block by block, so that a
    large dump that only looks like a program is never held in memory whole."""
    block = head
    while block:
        if _TARGET_BYTES in block:
            return True
        more = handle.read(_SEARCH_BLOCK)
        if not more:
            return False
        block = block[-len(_TARGET_BYTES):] + more  # a mention may straddle two blocks
    return False


def program_of(text: str, path: str) -> Program | None:
    """The kernels of a program's text; None when it holds no `tpu_custom_call` op (a
    mere mention, in a comment say, leaves the file to the ordinary reader)."""
    kernels = find_kernels(text)
    if not kernels:
        return None
    mentions = count_mentions(text)
    program = Program(path, kernels)
    for kernel in kernels:
        if kernel.problem is not None:
            program.diagnostics.append(Diagnostic(
                path, kernel.line, kernel.col, f"{TARGET} skipped: {kernel.problem}"))
    if mentions > len(kernels):
        program.diagnostics.append(Diagnostic(
            path, 0, 0, f"{TARGET} is named {mentions} time(s) but {len(kernels)} call(s) "
            "with a backend_config were found; the others are not analysed"))
    return program


def missing_jax_message(programs: list[Program]) -> str:
    """What to say when kernels were found but jax is not installed."""
    count = sum(len(p.kernels) for p in programs)
    where = ", ".join(p.path for p in programs[:3]) + (" ..." if len(programs) > 3 else "")
    return (f"{count} Pallas kernel(s) ({TARGET}) embedded in {len(programs)} lowered "
            f"program(s): {where}. Reading them needs jax and jaxlib: {INSTALL_LINE}")


def kernel_sources(program: Program) -> list[KernelSource]:
    """Each readable kernel of a program as MLIR text; problems go to its diagnostics.

    Raises jaxbridge.JaxMissing or JaxApiError when no kernel can be read at all.
    """
    import hashlib  # here: only a lowered program's kernels need it

    sources: list[KernelSource] = []
    seen: dict[bytes, str] = {}
    used: dict[str, int] = {}
    for index, kernel in enumerate(program.kernels):
        if kernel.body is None:
            continue
        digest = hashlib.sha256(kernel.body).digest()
        try:
            text = jaxbridge.kernel_text(kernel.body, kernel.serialized)
        except jaxbridge.KernelUnreadable as exc:
            program.diagnostics.append(Diagnostic(program.path, kernel.line, kernel.col,
                                                  f"{TARGET} skipped: {exc}"))
            continue
        name = kernel.name or _main_symbol(text) or f"kernel{index}"
        if digest in seen:
            # The same kernel called again: its scratch is the same, so it is analysed once.
            program.diagnostics.append(Diagnostic(
                program.path, kernel.line, kernel.col,
                f"{TARGET} {name}: the same kernel body as {seen[digest]}; analysed once"))
            continue
        used[name] = used.get(name, 0) + 1
        label = f"{program.path}#{name}" + (f".{used[name]}" if used[name] > 1 else "")
        seen[digest] = label
        sources.append(KernelSource(label, text))
    return sources


def _main_symbol(text: str) -> str | None:
    """The first func's symbol: the kernel's name when the call does not give one (HLO)."""
    at = text.find("func.func @")
    if at < 0:
        return None
    start = at + len("func.func @")
    end = start
    while end < len(text) and (text[end].isalnum() or text[end] in "_$.-"):
        end += 1
    return text[start:end] or None
