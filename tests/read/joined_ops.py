"""A differential campaign for ops that share a line: random modules of nested regions
(`scf.for`, `scf.if`, `scf.execute_region`, `tpu.region` and unknown region ops, pretty
and generic), allocas, views, yields and uses, whose lines are then joined at random
(after a region's `}`, `}` after `}`, or anywhere). MLIR accepts such text though it never
prints it; the careful reader must read it as MLIR does.

The oracle is MLIR's own C++ parser (jaxlib's bindings): `mlir_answer` walks the module it
parses and gives the op count and each alloca's (program point, last use) by the rules of
docs/SEMANTICS.md, written here from those rules, not from sc-mlir's reader: uses through
views and yields, a use inside a region that may run again lasting to that op's end.
`python tests/read/joined_ops.py --write-expected` stores MLIR's answers on the first
`SHIPPED_SEEDS` modules in `joined_ops_expected.json`, for runs without jaxlib;
`--campaign COUNT START` reads COUNT modules from seed START with MLIR and both readers
and prints how often they agree.

The fast reader either declines a module or gives the careful reader's answer, except on a
line of its documented limit (README, "Speed"): two ops on one line whose second op comes
after the line's first use of an alloca-derived name, or which names none, is read as one
op (`within_documented_limit`).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

EXPECTED = Path(__file__).resolve().parent / "joined_ops_expected.json"
SHIPPED_SEEDS = 2000

T16 = "memref<16xf32>"
DYNAMIC = "memref<?xf32>"
# Attributes and locations whose strings hold what a reader could take for code.
ATTRIBUTES = ('{s = "}"}',
              '{s = "} %z = \\"x.view\\"(%a0) : (memref<16xf32>) -> memref<16xf32> {"}',
              "{k = 1 : i32}", '{d = {e = "{"}}', '{s = "}) {"}', '{s = "x.op(%q) } else {"}',
              '{s = "// }"}')
LOCATIONS = ('loc("a.py":3:4)', 'loc(fused["a.py":1:2, "b.py":3:4])',
             'loc(callsite("f"("a.py":1:2) at "g"("b.py":3:4)))', 'loc("n{}"("c.py":5:6))',
             "loc(unknown)", 'loc("} %v = x")')


@dataclass
class Line:
    indent: int
    text: str
    comment: bool = False


@dataclass
class Module:
    """A generated module: its lines one op (or `}`, label, comment) each, and the names
    derived from its allocas (results, views, yielded values)."""

    lines: list[Line] = field(default_factory=list)
    derived: set[str] = field(default_factory=set)


class _Generator:
    def __init__(self, rng: random.Random, max_depth: int, region_p: float) -> None:
        self.rng = rng
        self.count = 0
        self.max_depth = max_depth
        self.region_p = region_p
        self.module = Module()

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"%{prefix}{self.count}"

    def emit(self, indent: int, text: str, comment: bool = False) -> None:
        self.module.lines.append(Line(indent, text, comment))

    def in_scope(self, scope: list[tuple[str, str]], name: str, type_: str) -> None:
        scope.append((name, type_))
        self.module.derived.add(name)

    def located(self, text: str) -> str:
        return text + " " + self.rng.choice(LOCATIONS) if self.rng.random() < 0.15 else text

    def attribute(self) -> str:
        return " " + self.rng.choice(ATTRIBUTES) if self.rng.random() < 0.2 else ""

    def pick(self, scope: list[tuple[str, str]], type_: str | None = None) -> tuple[str, str]:
        return self.rng.choice([v for v in scope if type_ is None or v[1] == type_])

    def simple(self, indent: int, scope: list[tuple[str, str]]) -> None:
        rng = self.rng
        kind = rng.randrange(12)
        if kind in (0, 1):
            name = self.fresh("a")
            if rng.random() < 0.6:
                aligned = " {alignment = 64 : i64}" if rng.random() < 0.2 else ""
                self.emit(indent, self.located(f"{name} = memref.alloca(){aligned} : {T16}"))
            else:
                self.emit(indent, self.located(
                    f'{name} = "memref.alloca"() <{{operandSegmentSizes = array<i32: 0, 0>}}>'
                    f" : () -> {T16}"))
            self.in_scope(scope, name, T16)
        elif kind in (2, 3):
            used = [self.pick(scope) for _ in range(rng.randint(1, 2))]
            self.emit(indent, self.located(
                f'"x.use"({", ".join(n for n, _ in used)}){self.attribute()} : '
                f'({", ".join(t for _, t in used)}) -> ()'))
        elif kind == 4:
            source, type_ = self.pick(scope)
            view = self.fresh("v")
            self.emit(indent, self.located(
                f'{view} = "x.view"({source}){self.attribute()} : ({type_}) -> {T16}'))
            self.in_scope(scope, view, T16)
        elif kind == 5:
            source, _ = self.pick(scope, T16)
            view = self.fresh("v")
            self.emit(indent, self.located(f"{view} = memref.cast {source} : {T16} to {DYNAMIC}"))
            self.in_scope(scope, view, DYNAMIC)
        elif kind == 6:
            source, type_ = self.pick(scope)
            self.emit(indent, self.located(
                f"{self.fresh('l')} = memref.load {source}[%c0] : {type_}"))
        elif kind == 7:
            source, type_ = self.pick(scope)
            if rng.random() < 0.5:
                pair = self.fresh("p")
                self.emit(indent, self.located(
                    f'{pair}:2 = "x.pair"({source}) : ({type_}) -> ({T16}, i32)'))
                self.in_scope(scope, pair + "#0", T16)
                self.module.derived.add(pair + "#1")  # MLIR makes both of the op's
            else:
                first, second = self.fresh("p"), self.fresh("q")
                self.emit(indent, self.located(
                    f'{first}, {second} = "x.two"({source}) : ({type_}) -> ({T16}, {T16})'))
                self.in_scope(scope, first, T16)
                self.in_scope(scope, second, T16)
        elif kind == 8:
            self.emit(indent, self.located('"x.op"() : () -> ()'))
        elif kind == 9:
            target, type_ = self.pick(scope)
            self.emit(indent, self.located(f"memref.store %f, {target}[%c0] : {type_}"))
        elif kind == 10:
            source, type_ = self.pick(scope)
            self.emit(indent, self.located(
                f'{self.fresh("i")} = "x.size"({source}) : ({type_}) -> i32'))
        elif rng.random() < 0.3:
            self.emit(indent, '// } %z = "x.view"(%a0) {', comment=True)
        else:
            self.emit(indent, self.located(f'{self.fresh("k")} = "x.val"() : () -> i32'))

    def body(self, indent: int, scope: list[tuple[str, str]], depth: int,
             count: int | None = None) -> list[tuple[str, str]]:
        scope = list(scope)
        for _ in range(count if count is not None else self.rng.randint(1, 5)):
            if depth < self.max_depth and self.rng.random() < self.region_p:
                self.region(indent, scope, depth)
            else:
                self.simple(indent, scope)
        return scope

    def yielded(self, scope: list[tuple[str, str]]) -> str:
        return self.pick(scope, T16)[0]

    def region(self, indent: int, scope: list[tuple[str, str]], depth: int) -> None:
        rng = self.rng
        kind = rng.randrange(5)
        pretty = rng.random() < 0.5
        inner_depth = depth + 1
        result: str | None = None
        if kind == 0:  # a loop
            induction = self.fresh("i")
            if pretty:
                self.emit(indent, f"scf.for {induction} = %c0 to %n step %n {{")
                self.body(indent + 1, scope, inner_depth)
                self.emit(indent + 1, "scf.yield")
                attribute = ' {x.a = "}"}' if rng.random() < 0.2 else ""
                self.emit(indent, self.located("}" + attribute))
            else:
                self.emit(indent, '"scf.for"(%c0, %n, %n) ({')
                self.emit(indent, f"^bb0({induction}: index):")
                self.body(indent + 1, scope, inner_depth)
                self.emit(indent + 1, '"scf.yield"() : () -> ()')
                self.emit(indent, self.located("}) : (index, index, index) -> ()"))
        elif kind == 1:  # scf.if, with a result and an else region or not
            has_result = rng.random() < 0.5
            has_else = has_result or rng.random() < 0.5
            result = self.fresh("r") if has_result else None
            if pretty:
                self.emit(indent, f"{result} = scf.if %c -> ({T16}) {{" if has_result
                          else "scf.if %c {")
                inner = self.body(indent + 1, scope, inner_depth)
                self.emit(indent + 1, f"scf.yield {self.yielded(inner)} : {T16}"
                          if has_result else "scf.yield")
                if has_else:
                    self.emit(indent, "} else {")
                    inner = self.body(indent + 1, scope, inner_depth)
                    self.emit(indent + 1, f"scf.yield {self.yielded(inner)} : {T16}"
                              if has_result else "scf.yield")
                self.emit(indent, self.located("}"))
            else:
                self.emit(indent, (f"{result} = " if has_result else "") + '"scf.if"(%c) ({')
                inner = self.body(indent + 1, scope, inner_depth)
                self.emit(indent + 1, f'"scf.yield"({self.yielded(inner)}) : ({T16}) -> ()'
                          if has_result else '"scf.yield"() : () -> ()')
                self.emit(indent, "}, {")
                if has_else:
                    inner = self.body(indent + 1, scope, inner_depth)
                    self.emit(indent + 1, f'"scf.yield"({self.yielded(inner)}) : ({T16}) -> ()'
                              if has_result else '"scf.yield"() : () -> ()')
                self.emit(indent, self.located("}) : (i1) -> " + (T16 if has_result else "()")))
        elif kind == 2:  # scf.execute_region
            has_result = rng.random() < 0.6
            result = self.fresh("r") if has_result else None
            if pretty:
                self.emit(indent, f"{result} = scf.execute_region -> {T16} {{" if has_result
                          else "scf.execute_region {")
                inner = self.body(indent + 1, scope, inner_depth)
                self.emit(indent + 1, f"scf.yield {self.yielded(inner)} : {T16}"
                          if has_result else "scf.yield")
                self.emit(indent, self.located("}"))
            else:
                self.emit(indent, (f"{result} = " if has_result else "")
                          + '"scf.execute_region"() ({')
                inner = self.body(indent + 1, scope, inner_depth)
                self.emit(indent + 1, f'"scf.yield"({self.yielded(inner)}) : ({T16}) -> ()'
                          if has_result else '"scf.yield"() : () -> ()')
                self.emit(indent, self.located("}) : () -> " + (T16 if has_result else "()")))
        elif kind == 3:  # an op sc-mlir does not know: its regions may run again
            has_result = rng.random() < 0.4
            result = self.fresh("r") if has_result else None
            operand = self.pick(scope) if rng.random() < 0.4 else None
            name = rng.choice(['"x.region"', '"x.loop"', '"y.wrap"'])
            self.emit(indent, (f"{result} = " if has_result else "")
                      + f"{name}({operand[0] if operand else ''}) ({{")
            inner = self.body(indent + 1, scope, inner_depth)
            if has_result:
                self.emit(indent + 1, f'"x.yield"({self.yielded(inner)}) : ({T16}) -> ()')
            if rng.random() < 0.4:
                self.emit(indent, "}, {")
                self.body(indent + 1, scope, inner_depth)
            operand_type = f"({operand[1]})" if operand else "()"
            self.emit(indent, self.located("})" + self.attribute() + f" : {operand_type} -> "
                                           + (T16 if has_result else "()")))
        else:
            self.emit(indent, '"tpu.region"() ({')
            self.body(indent + 1, scope, inner_depth)
            self.emit(indent + 1, '"tpu.yield"() : () -> ()')
            self.emit(indent, self.located("}) : () -> ()"))
        if result is not None:
            self.in_scope(scope, result, T16)

    def funcs(self) -> Module:
        self.emit(0, "module {")
        for number in range(self.rng.randint(1, 2)):
            self.emit(1, f"func.func @f{number}(%c: i1, %n: index) {{")
            self.emit(2, "%c0 = arith.constant 0 : index")
            self.emit(2, "%f = arith.constant 0.0 : f32")
            first = self.fresh("a")
            self.emit(2, f"{first} = memref.alloca() : {T16}")
            self.module.derived.add(first)
            self.body(2, [(first, T16)], 0, count=self.rng.randint(2, 7))
            self.emit(2, "return")
            self.emit(1, "}")
        self.emit(0, "}")
        return self.module


@dataclass
class Case:
    seed: int
    module: Module
    rows: list[list[Line]]  # the text's lines, each the module's lines joined on it

    @property
    def text(self) -> str:
        return "".join("  " * row[0].indent + " ".join(line.text for line in row) + "\n"
                       for row in self.rows)

    @property
    def unjoined(self) -> str:
        return "".join("  " * line.indent + line.text + "\n" for line in self.module.lines)


def generate(seed: int) -> Case:
    """The module of `seed` and its lines joined: after a line starting with `}` often,
    `}` after `}` more often in "chain" and "any" modes, any two lines sometimes in "any"
    mode; never after a comment."""
    rng = random.Random(seed)
    module = _Generator(rng, max_depth=rng.choice([1, 2, 3]),
                        region_p=rng.choice([0.25, 0.4, 0.55])).funcs()
    mode = rng.choice(["close", "close", "chain", "any"])
    rows: list[list[Line]] = []
    for line in module.lines:
        before = rows[-1][-1] if rows else None
        chance = 0.0
        if before is not None and not before.comment:
            if before.text.startswith("}"):
                chance = 0.7 if line.text.startswith("}") and mode in ("chain", "any") else 0.6
            if mode == "any":
                chance = max(chance, 0.25)
            if mode == "chain" and line.text.startswith("}"):
                chance = max(chance, 0.5)
        if before is not None and rng.random() < chance:
            rows[-1].append(line)
        else:
            rows.append([line])
    return Case(seed, module, rows)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _names(text: str, derived: set[str]) -> bool:
    return any(name in derived for name in re.findall(r"%[\w$.\-]+(?:#\d+)?", text))


def within_documented_limit(case: Case) -> bool:
    """Whether a line of the text holds two ops of which the fast reader reads one (README,
    "Speed"): the second op after the line's first use of an alloca-derived name, or no
    such name on the line. (A region's `}`, a label and a comment are no ops here.)"""
    derived = case.module.derived
    for row in case.rows:
        ops = [i for i, line in enumerate(row)
               if not line.comment and not line.text.startswith(("}", "^"))]
        if len(ops) < 2:
            continue
        first_use = next((i for i, line in enumerate(row) if _names(line.text, derived)), None)
        if first_use is None or first_use < ops[1]:
            return True
    return False


# -- answers ---------------------------------------------------------------------------

Answer = tuple[int, list[tuple[int, int]]]

# docs/SEMANTICS.md: the regions of these ops run once per execution of the op (a use
# inside is a use there); any other region-holding op may run its regions again. Of the
# ops the generator writes: scf.for and the unknown `x.`/`y.` ops are not.
RUN_ONCE = frozenset({"builtin.module", "func.func", "scf.if", "scf.execute_region",
                      "tpu.region"})
# Ops with a memref operand whose memref-typed results are not views of it.
NOT_VIEWS = frozenset({"memref.load"})


def mlir_available() -> bool:
    try:
        import jaxlib.mlir.ir  # noqa: F401
        from jax._src.interpreters import mlir  # noqa: F401
    except Exception:
        return False
    return True


_CONTEXT = None


def _context():  # type: ignore[no-untyped-def]
    global _CONTEXT
    if _CONTEXT is None:
        import os

        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        from jax._src.interpreters import mlir as jax_mlir

        _CONTEXT = jax_mlir.make_ir_context()
        _CONTEXT.allow_unregistered_dialects = True
    return _CONTEXT


def mlir_answer(text: str) -> Answer | None:
    """MLIR's op count and each alloca's (program point, last use), by the rules above,
    from the module MLIR's parser builds; None when MLIR rejects the text."""
    from jaxlib.mlir import ir

    with _context():
        try:
            module = ir.Module.parse(text)
        except Exception:
            return None
        nodes: list[tuple[object, list[tuple[object, int]], int]] = []
        end_of: dict[int, int] = {}
        count = 0

        def walk(op, parents):  # type: ignore[no-untyped-def]
            nonlocal count
            count += 1
            point = last = count
            nodes.append((op, parents, point))
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        last = max(last, walk(inner.operation, [*parents, (op, point)]))
            end_of[point] = last
            return last

        walk(module.operation, [])
        derived: dict[object, set[int]] = {}
        parents_of: dict[int, list[tuple[object, int]]] = {}
        uses: dict[int, list[int]] = {}
        for op, parents, point in nodes:
            name = op.name  # type: ignore[attr-defined]
            ids: set[int] = set()
            for value in op.operands:  # type: ignore[attr-defined]
                ids |= derived.get(value, set())
            if name == "memref.alloca":
                parents_of[point] = parents
                uses[point] = []
                for result in op.results:  # type: ignore[attr-defined]
                    derived[result] = {point}
            for alloca in ids:
                used = end_of[point]  # an op holding regions uses its operands to its end
                for parent, parent_point in parents[len(parents_of[alloca]):]:
                    if parent.name not in RUN_ONCE:  # type: ignore[attr-defined]
                        used = end_of[parent_point]  # the outermost one below the alloca's
                        break
                uses[alloca].append(used)
            results = list(op.results)  # type: ignore[attr-defined]
            if ids and name not in NOT_VIEWS and any(
                    isinstance(r.type, ir.MemRefType) for r in results):
                for result in results:
                    derived[result] = derived.get(result, set()) | ids
            if ids and name.endswith("yield") and parents:
                for result in parents[-1][0].results:  # type: ignore[attr-defined]
                    derived[result] = derived.get(result, set()) | ids
    return count, sorted((a, max([a, *u])) for a, u in uses.items())


def careful_answer(text: str) -> Answer:
    from sc_mlir.read.scan import scan_text

    scan = scan_text(text)
    return scan.ops, sorted((a.order, a.live_end) for a in scan.allocas)


def fast_answer(text: str) -> Answer | None:
    """The fast reader's answer, or None where it declines the text."""
    from sc_mlir.read.events import scan_bytes

    scan = scan_bytes(text.encode())
    if scan is None:
        return None
    return scan.ops, sorted((a.order, a.live_end) for a in scan.allocas)


def write_expected(count: int = SHIPPED_SEEDS) -> None:
    """MLIR's answers on seeds 0 to `count` - 1, with each text's digest (a generator
    that changed makes other texts: the test says so rather than compare them)."""
    answers: dict[str, object] = {}
    for seed in range(count):
        case = generate(seed)
        answer = mlir_answer(case.text)
        if answer is None:
            raise SystemExit(f"MLIR rejects the module of seed {seed}:\n{case.text}")
        answers[str(seed)] = {"digest": digest(case.text), "ops": answer[0],
                              "allocas": answer[1]}
    EXPECTED.write_text("{\n" + ",\n".join(  # a line per module: diffs stay readable
        f"{json.dumps(seed)}: {json.dumps(answer)}" for seed, answer in answers.items())
        + "\n}\n")
    print(f"wrote {EXPECTED}: MLIR's answers on {count} modules")


def campaign(count: int, start: int) -> dict[str, int]:
    """Modules `start` to `start + count - 1`, each read by MLIR and both readers."""
    counts = {"modules": 0, "rejected by MLIR": 0, "careful differs from MLIR": 0,
              "fast reader reads": 0, "fast differs, documented limit": 0,
              "fast differs, outside the limit": 0}
    for seed in range(start, start + count):
        case = generate(seed)
        text = case.text
        counts["modules"] += 1
        truth = mlir_answer(text)
        if truth is None:
            counts["rejected by MLIR"] += 1
            continue
        careful = careful_answer(text)
        if careful != truth:
            counts["careful differs from MLIR"] += 1
            print(f"seed {seed}: careful {careful}, MLIR {truth}", file=sys.stderr)
        fast = fast_answer(text)
        if fast is None:
            continue
        counts["fast reader reads"] += 1
        if fast != careful:
            if within_documented_limit(case):
                counts["fast differs, documented limit"] += 1
            else:
                counts["fast differs, outside the limit"] += 1
                print(f"seed {seed}: fast {fast}, careful {careful}", file=sys.stderr)
    return counts


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-expected"]:
        write_expected()
    elif sys.argv[1:2] == ["--campaign"] and len(sys.argv) == 4:
        print(json.dumps(campaign(int(sys.argv[2]), int(sys.argv[3]))))
    else:
        print(__doc__)
        print("usage: joined_ops.py --write-expected | --campaign COUNT START")
