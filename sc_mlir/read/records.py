"""What the careful reader hands on: its settings and plain records (`RawAlloca` per
alloca, `OpFrame` per region-holding op, `Chunk` per `// -----` part, `Diagnostic` for
anything skipped, `FileScan` for a whole file). No reading happens here."""

from __future__ import annotations

from dataclasses import dataclass, field

from sc_mlir.syntax.locations import Location
from sc_mlir.syntax.parse import AllocaBody, AllocaSyntax

# Ops whose regions run once per execution of the op. A use inside such a region is a
# use at that point; inside any other region-holding op (a loop, or an op sc-mlir does not
# know) the value must stay live until the op ends, because the region may run again.
DEFAULT_RUN_ONCE_OPS: frozenset[str] = frozenset({
    "tpu.region", "scf.if", "scf.index_switch", "scf.execute_region", "affine.if",
    "memref.alloca_scope", "func.func", "gpu.func", "llvm.func", "spirv.func", "tt.func",
    "builtin.module", "module", "gpu.module", "spirv.module", "gpu.launch", "func",
})

# Ops whose results are views of (alias) their memref operand.
DEFAULT_VIEW_OPS: frozenset[str] = frozenset({
    "memref.subview", "memref.cast", "memref.reinterpret_cast", "memref.view",
    "memref.expand_shape", "memref.collapse_shape", "memref.transpose",
    "memref.memory_space_cast", "memref.assume_alignment",
    "memref.extract_strided_metadata", "tpu.memref_slice", "tpu.memref_squeeze",
    "tpu.memref_reshape", "tpu.memref_bitcast", "bufferization.to_tensor",
    "arith.select", "builtin.unrealized_conversion_cast",
})

# Ops known to read through a memref without producing a view of it, although their
# pretty form prints a memref type. Everything else with results of memref type is
# treated as a view (conservative: it can only lengthen a live range).
DEFAULT_NON_VIEW_OPS: frozenset[str] = frozenset({
    "memref.load", "affine.load", "vector.load", "vector.maskedload",
    "vector.transfer_read", "vector.gather", "vector.expandload", "affine.vector_load",
    "tpu.vector_load", "tpu.load", "tpu.strided_load", "memref.dim", "memref.rank",
    "memref.atomic_rmw", "memref.extract_aligned_pointer_as_index",
})


@dataclass(frozen=True, slots=True)
class ScanSettings:
    run_once_ops: frozenset[str] = DEFAULT_RUN_ONCE_OPS
    view_ops: frozenset[str] = DEFAULT_VIEW_OPS
    non_view_ops: frozenset[str] = DEFAULT_NON_VIEW_OPS


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something sc-mlir skipped or could not read, and where."""

    file: str
    line: int
    col: int
    message: str
    quote: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.col}"
        quote = f"\n    {self.quote}" if self.quote else ""
        return f"{where}: {self.message}{quote}"


@dataclass(eq=False, slots=True)
class OpFrame:
    """An op that holds regions (func, module, loop, tpu.region...), as met by the scanner."""

    name: str
    order: int
    line: int
    col: int
    header: str
    results: tuple[str, ...]
    parent: OpFrame | None
    sibling_index: int
    loop_like: bool
    chunk: int
    top_index: int = -1  # position among the top-level ops of the file
    end_order: int = -1
    end_line: int = -1  # the line where its last region closes
    first_line_chars: int = 0  # how much of `header` is the op's first line
    # The first block's label of its first region, when printed (`^bb0(%arg0: ...):`, as
    # the generic form names a func's arguments): line, 1-based column, text.
    entry_block: tuple[int, int, str] | None = None
    trailer: list[str] = field(default_factory=list)
    pending: set[int] | None = None  # allocas whose live range reaches this op's end

    def attribute_text(self) -> str:
        """Header and the text after its regions (generic form prints attrs there)."""
        return self.header if not self.trailer else self.header + " " + " ".join(self.trailer)

    def ancestors(self) -> list[OpFrame]:
        chain: list[OpFrame] = []
        frame: OpFrame | None = self
        while frame is not None:
            chain.append(frame)
            frame = frame.parent
        chain.reverse()
        return chain


@dataclass(eq=False, slots=True)
class RawAlloca:
    """A `memref.alloca` found by the scanner, before the model gives it meaning.

    Its `syntax` is either given whole (the careful reader, and the fast reader's rarer
    shapes) or made when first asked for from `body`, the parse of the op's text from its
    name to its type (shared by every alloca written alike), and `location`: a dump has
    tens of thousands of allocas and the model reads the body and location alone."""

    index: int  # ordinal among the file's allocas
    order: int  # program point
    line: int
    col: int  # 1-based column of the op name
    text_col: int  # 1-based column where `text` starts (its first result name)
    text: str
    results: tuple[str, ...]
    frames: tuple[OpFrame, ...]  # region-holding ops around it, outermost first
    chunk: int
    given_syntax: AllocaSyntax | None = None
    size_constants: tuple[int | None, ...] = ()  # values of the dynamic size operands
    live_end: int = -1
    live_end_line: int = -1  # dump line of the op at live_end
    body: AllocaBody | None = None  # with `location`, what `syntax` is made of
    location: Location | None = None

    @property
    def syntax(self) -> AllocaSyntax | None:
        syntax = self.given_syntax
        if syntax is None and self.body is not None:
            body = self.body
            syntax = self.given_syntax = AllocaSyntax(self.results, *body[:5], self.location,
                                                      body[5])
        return syntax

    @syntax.setter
    def syntax(self, syntax: AllocaSyntax | None) -> None:
        self.given_syntax = syntax
        self.body = None
        self.location = syntax.location if syntax is not None else None


@dataclass
class Chunk:
    """One module or `// -----` chunk: its aliases and where its text starts."""

    index: int
    line: int
    header: str | None = None  # pass name from an `IR Dump After ...` line
    aliases: dict[str, str] = field(default_factory=dict)


@dataclass
class FileScan:
    path: str
    allocas: list[RawAlloca]
    chunks: list[Chunk]
    diagnostics: list[Diagnostic]
    lines: int
    ops: int
    funcs: list[OpFrame] = field(default_factory=list)  # func-like ops (`*.func`, `func`)
