"""Deterministic generator of SparseCore-like MLIR dumps for benchmarks.

Each file is one module of many funcs, shaped like what the SparseCore compiler dumps:
integer memory spaces (201 TileSpmem, 202 Spmem, 203 HBM, 204 sync flags, none = Smem),
allocas at func level and inside nested `scf.for`, `scf.if` and `"tpu.region"`, DMA-like
unregistered `tpu.*` ops, `loc(#locN)` on every op and the location alias table at the end.
Two location styles: `simple` (file, name and call-site aliases) and `xla` (shaped like
XLA's tables: plain file locations mixed with `loc(fused[#loc2, #loc1])`,
`loc("jit(f)/fusion.92"(#loc1))` and `callsite(...)` aliases, and some ops carrying an
inline `loc("file":l:c)` instead of an alias).
Upstream ops are printed in the pretty or the generic form; `tpu.*` ops are always generic
(no parser knows their custom syntax). The output is valid MLIR that MLIR's own parser
accepts (with unregistered dialects allowed), so both tools read the same bytes.

    python bench/generate.py OUT_DIR [--sizes 1,10,50,200] [--forms generic,pretty]
                                     [--locs simple,xla]

writes OUT_DIR/<form>_<N>mb.mlir (OUT_DIR/<form>_xla_<N>mb.mlir for the xla style),
OUT_DIR/dir300/ (300 small files) and OUT_DIR/ground_truth.json (alloca counts per file,
the benchmark's correctness check).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterator
from pathlib import Path

SPACES = ("201", "201", "201", "202", "", "204")  # weights: TileSpmem most common
ELEMENTS = (("f32", 32), ("i32", 32), ("bf16", 16), ("i8", 8))
SIZES = (16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 23440)


class Writer:
    """Builds one module's text; counts allocas; keeps the location alias table."""

    def __init__(self, seed: int, form: str, locs: str = "simple") -> None:
        self.rng = random.Random(seed)
        self.form = form
        self.locs_style = locs
        self.lines: list[str] = []
        self.locs: list[str] = []
        self.value = 0
        self.allocas = 0
        self.alias_table_bytes = 0

    # -- helpers ---------------------------------------------------------------------

    def loc(self) -> str:
        if self.locs_style == "xla":
            return self.xla_loc()
        index = len(self.locs) + 1
        kind = self.rng.random()
        line = self.rng.randint(1, 2000)
        col = self.rng.randint(1, 80)
        if kind < 0.5 or index < 3:
            text = f'loc("model/sparse_core_{index % 7}.py":{line}:{col})'
        elif kind < 0.8:
            text = f'loc("op_{index % 13}"(#loc{self.rng.randint(1, index - 1)}))'
        else:
            a, b = self.rng.randint(1, index - 1), self.rng.randint(1, index - 1)
            text = f"loc(callsite(#loc{a} at #loc{b}))"
        self.locs.append(text)
        self.alias_table_bytes += len(f"#loc{index} = {text}\n")
        return f"loc(#loc{index})"

    def xla_loc(self) -> str:
        """XLA's mix: most ops point at an alias, some carry their file location inline."""
        index = len(self.locs) + 1
        kind = self.rng.random()
        line = self.rng.randint(1, 2000)
        col = self.rng.randint(1, 80)
        source = f'"third_party/py/model/sparse_core_{index % 7}.py":{line}:{col}'
        if kind < 0.1:
            return f"loc({source})"
        if kind < 0.45 or index < 3:
            text = f"loc({source})"
        elif kind < 0.7:
            text = (f'loc("jit(sc_step)/while/body/fusion.{index % 97}"'
                    f"(#loc{self.rng.randint(1, index - 1)}))")
        elif kind < 0.88:
            a, b = self.rng.randint(1, index - 1), self.rng.randint(1, index - 1)
            text = f"loc(fused[#loc{a}, #loc{b}])"
        else:
            a, b = self.rng.randint(1, index - 1), self.rng.randint(1, index - 1)
            text = f"loc(callsite(#loc{a} at #loc{b}))"
        self.locs.append(text)
        self.alias_table_bytes += len(f"#loc{index} = {text}\n")
        return f"loc(#loc{index})"

    def fresh(self) -> str:
        self.value += 1
        return f"%{self.value}"

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("  " * indent + text + " " + self.loc())

    def memref(self) -> tuple[str, int]:
        """A random scratch type and its element count."""
        element, _ = self.rng.choice(ELEMENTS)
        size = self.rng.choice(SIZES)
        space = self.rng.choice(SPACES)
        text = f"memref<{size}x{element}, {space}>" if space else f"memref<{size}x{element}>"
        return text, size

    # -- ops -------------------------------------------------------------------------

    def constant(self, indent: int, value: int, type_: str = "index") -> str:
        name = self.fresh()
        if self.form == "pretty":
            self.emit(indent, f"{name} = arith.constant {value} : {type_}")
        else:
            self.emit(indent, f'{name} = "arith.constant"() <{{value = {value} : {type_}}}> '
                              f": () -> {type_}")
        return name

    def alloca(self, indent: int, type_: str | None = None) -> tuple[str, str]:
        name = self.fresh()
        type_ = type_ or self.memref()[0]
        self.allocas += 1
        align = self.rng.random() < 0.2
        if self.form == "pretty":
            attrs = " {alignment = 64 : i64}" if align else ""
            self.emit(indent, f"{name} = memref.alloca(){attrs} : {type_}")
        else:
            props = "alignment = 64 : i64, " if align else ""
            self.emit(indent, f'{name} = "memref.alloca"() <{{{props}operandSegmentSizes = '
                              f"array<i32: 0, 0>}}> : () -> {type_}")
        return name, type_

    def use(self, indent: int, buffer: tuple[str, str], index: str, hbm: tuple[str, str]) -> None:
        name, type_ = buffer
        kind = self.rng.random()
        if kind < 0.45:
            sem = self.sem
            self.emit(indent, f'"tpu.enqueue_dma"({hbm[0]}, {name}, {sem}) '
                              "<{operandSegmentSizes = "
                              f"array<i32: 1, 0, 1, 1, 0, 0, 0>, priority = 0 : i32}}> : "
                              f"({hbm[1]}, {type_}, memref<4xi32, 204>) -> ()")
            self.emit(indent, f'"tpu.wait_dma2"({sem}, {hbm[0]}, {name}) <{{operandSegmentSizes = '
                              f"array<i32: 1, 1, 1, 0, 0>}}> : (memref<4xi32, 204>, {hbm[1]}, "
                              f"{type_}) -> ()")
            return
        element = type_.split("x", 1)[1].split(",")[0].rstrip(">")
        loaded = self.fresh()
        if self.form == "pretty":
            self.emit(indent, f"{loaded} = memref.load {name}[{index}] : {type_}")
            self.emit(indent, f"memref.store {loaded}, {name}[{index}] : {type_}")
        else:
            self.emit(indent, f'{loaded} = "memref.load"({name}, {index}) : ({type_}, index) -> '
                              f"{element}")
            self.emit(indent, f'"memref.store"({loaded}, {name}, {index}) : ({element}, {type_}, '
                              "index) -> ()")

    def arith(self, indent: int, a: str, b: str) -> str:
        name = self.fresh()
        if self.form == "pretty":
            self.emit(indent, f"{name} = arith.addi {a}, {b} : index")
        else:
            self.emit(indent, f'{name} = "arith.addi"({a}, {b}) <{{overflowFlags = '
                              f"#arith.overflow<none>}}> : (index, index) -> index")
        return name

    def body(self, indent: int, depth: int, visible: list[tuple[str, str]], index: str,
             hbm: tuple[str, str], c0: str, c1: str, c8: str) -> None:
        """A block of ops; regions nest up to depth 3."""
        local = list(visible)
        for _ in range(self.rng.randint(4, 9)):
            roll = self.rng.random()
            if roll < 0.22:
                local.append(self.alloca(indent))
            elif roll < 0.55 and local:
                self.use(indent, self.rng.choice(local), index, hbm)
            elif roll < 0.7:
                index = self.arith(indent, index, c1)
            elif depth < 3:
                self.region(indent, depth, local, index, hbm, c0, c1, c8)

    def region(self, indent: int, depth: int, visible: list[tuple[str, str]], index: str,
               hbm: tuple[str, str], c0: str, c1: str, c8: str) -> None:
        kind = self.rng.choice(("for", "if", "tpu"))
        pretty = self.form == "pretty"
        if kind == "for":
            iv = self.fresh()
            if pretty:
                self.lines.append("  " * indent + f"scf.for {iv} = {c0} to {c8} step {c1} {{")
                self.body(indent + 1, depth + 1, visible, iv, hbm, c0, c1, c8)
                self.lines.append("  " * indent + "} " + self.loc())
            else:
                self.lines.append("  " * indent + f'"scf.for"({c0}, {c8}, {c1}) ({{')
                self.lines.append("  " * indent + f"^bb0({iv}: index):")
                self.body(indent + 1, depth + 1, visible, iv, hbm, c0, c1, c8)
                self.emit(indent + 1, '"scf.yield"() : () -> ()')
                self.lines.append("  " * indent + "}) : (index, index, index) -> () " + self.loc())
        elif kind == "if":
            cond = self.fresh()
            if pretty:
                self.emit(indent, f"{cond} = arith.cmpi slt, {index}, {c8} : index")
                self.lines.append("  " * indent + f"scf.if {cond} {{")
                self.body(indent + 1, depth + 1, visible, index, hbm, c0, c1, c8)
                self.lines.append("  " * indent + "} else {")
                self.body(indent + 1, depth + 1, visible, index, hbm, c0, c1, c8)
                self.lines.append("  " * indent + "} " + self.loc())
            else:
                self.emit(indent, f'{cond} = "arith.cmpi"({index}, {c8}) <{{predicate = 2 : i64}}> '
                                  ": (index, index) -> i1")
                self.lines.append("  " * indent + f'"scf.if"({cond}) ({{')
                self.body(indent + 1, depth + 1, visible, index, hbm, c0, c1, c8)
                self.emit(indent + 1, '"scf.yield"() : () -> ()')
                self.lines.append("  " * indent + "}, {")
                self.body(indent + 1, depth + 1, visible, index, hbm, c0, c1, c8)
                self.emit(indent + 1, '"scf.yield"() : () -> ()')
                self.lines.append("  " * indent + "}) : (i1) -> () " + self.loc())
        else:
            self.lines.append("  " * indent + '"tpu.region"() ({')
            self.body(indent + 1, depth + 1, visible, index, hbm, c0, c1, c8)
            self.emit(indent + 1, '"tpu.yield"() : () -> ()')
            self.lines.append("  " * indent + "}) : () -> () " + self.loc())

    def func(self, number: int) -> None:
        self.value = 0
        hbm_type = "memref<1048576xf32, 203>"
        name = f"sc_kernel_{number}"
        attrs = "tpu.core_type = #tpu.core_type<sc_vector_subcore>, scratch_operands = 0 : i64"
        if self.form == "pretty":
            self.lines.append(f"  func.func @{name}(%arg0: {hbm_type}) attributes {{{attrs}}} {{")
        else:
            self.lines.append(f'  "func.func"() <{{function_type = ({hbm_type}) -> (), sym_name = '
                              f'"{name}"}}> ({{')
            self.lines.append(f"  ^bb0(%arg0: {hbm_type}):")
        c0 = self.constant(2, 0)
        c1 = self.constant(2, 1)
        c8 = self.constant(2, 8)
        self.sem, _ = self.alloca(2, "memref<4xi32, 204>")
        self.body(2, 0, [], c0, ("%arg0", hbm_type), c0, c1, c8)
        if self.form == "pretty":
            self.emit(2, "return")
            self.lines.append("  } " + self.loc())
        else:
            self.emit(2, '"func.return"() : () -> ()')
            self.lines.append(f"  }}) {{{attrs}}} : () -> () " + self.loc())

    def module(self, target_bytes: int, first_func: int = 0) -> Iterator[str]:
        """The module's text in pieces: funcs until they and the alias table that closes the
        module reach `target_bytes`."""
        opening = "module {" if self.form == "pretty" else '"builtin.module"() ({'
        closing = "} " if self.form == "pretty" else "}) : () -> () "
        yield opening + "\n"
        written = len(opening)
        number = first_func
        while written + self.alias_table_bytes < target_bytes:
            self.lines = []
            self.func(number)
            number += 1
            chunk = "\n".join(self.lines) + "\n"
            written += len(chunk)
            yield chunk
        final = self.loc()
        yield closing + final + "\n"
        for index, text in enumerate(self.locs, 1):
            yield f"#loc{index} = {text}\n"


def write_module(path: Path, form: str, target_bytes: int, seed: int, locs: str = "simple"
                 ) -> int:
    writer = Writer(seed, form, locs)
    with open(path, "w") as out:
        for piece in writer.module(target_bytes):
            out.write(piece)
    return writer.allocas


def bench_file_name(form: str, size: str, style: str) -> str:
    """`generic_50mb.mlir` (simple locations), `generic_xla_50mb.mlir` (XLA-like)."""
    return f"{form}_{size}mb.mlir" if style == "simple" else f"{form}_{style}_{size}mb.mlir"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sizes", default="1,10,50,200", help="MB, comma separated")
    parser.add_argument("--forms", default="generic,pretty")
    parser.add_argument("--locs", default="simple", help="location styles: simple,xla")
    parser.add_argument("--files", type=int, default=300, help="small files in dir300/")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    truth: dict[str, int] = {}
    truth_path = args.out / "ground_truth.json"
    if truth_path.exists():  # other styles and sizes generated earlier stay listed
        truth = json.loads(truth_path.read_text())
    for style in args.locs.split(","):
        for form in args.forms.split(","):
            for size in args.sizes.split(","):
                path = args.out / bench_file_name(form, size, style)
                truth[path.name] = write_module(path, form, int(float(size) * 1_000_000),
                                                seed=int(float(size) * 1000) + len(form),
                                                locs=style)
                print(f"{path}: {path.stat().st_size / 1e6:.1f} MB, {truth[path.name]} allocas")
    if args.files:
        directory = args.out / "dir300"
        directory.mkdir(exist_ok=True)
        count = 0
        for i in range(args.files):
            form = "generic" if i % 2 else "pretty"
            count += write_module(directory / f"module_{i:04d}.{form}.mlir", form, 100_000,
                                  seed=10_000 + i)
        truth["dir300"] = count
        print(f"{directory}: {args.files} files, {count} allocas")
    truth_path.write_text(json.dumps(truth, indent=2) + "\n")


if __name__ == "__main__":
    main()
