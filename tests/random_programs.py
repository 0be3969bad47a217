"""Random MLIR programs (hypothesis) with nested scopes, location aliases and alignments:
shared by the roll-up property (tests/analysis) and the what-if property (tests/compare)."""

from __future__ import annotations

import os

from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("SC_MLIR_PROPERTY_EXAMPLES", "60"))

SPACES = ["201", "202", "#tpu.memory_space<vmem>"]
SCOPES = ["memref.alloca_scope", "scf.for", "tpu.region", "scf.if", "my.region"]


@st.composite
def bodies(draw, depth: int, counter: list[int], lines: list[str], aliases: list[str]) -> None:
    indent = "  " * (depth + 2)
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["alloca", "alloca", "region"] if depth < 3 else ["alloca"]))
        if kind == "alloca":
            counter[0] += 1
            words = draw(st.integers(0, 300))
            element = draw(st.sampled_from(["f32", "bf16", "i8"]))
            alignment = draw(st.sampled_from(["", "", " {alignment = 64 : i64}",
                                              " {alignment = 12}", " {alignment = 1024}"]))
            line = draw(st.integers(1, 6))
            name = draw(st.sampled_from(["", "gather", "scatter"]))
            where = f'"src/{draw(st.sampled_from(["a", "b"]))}.py":{line}:3'
            aliases.append(f'loc("{name}"({where}))' if name else f"loc({where})")
            lines.append(f"{indent}%a{counter[0]} = memref.alloca(){alignment} : "
                         f"memref<{words}x{element}, {draw(st.sampled_from(SPACES))}> "
                         f"loc(#loc{len(aliases)})")
        else:
            op = draw(st.sampled_from(SCOPES))
            if op == "scf.for":
                lines.append(f"{indent}scf.for %i{counter[0]} = %c0 to %c4 step %c1 {{")
                tail = "}"
            elif op == "scf.if":
                lines.append(f"{indent}scf.if %cond {{")
                tail = "}"
            elif op == "memref.alloca_scope":
                lines.append(f"{indent}memref.alloca_scope {{")
                tail = "}"
            else:
                lines.append(f'{indent}"{op}"() ({{')
                tail = "}) : () -> ()"
            draw(bodies(depth + 1, counter, lines, aliases))
            lines.append(indent + tail)


@st.composite
def programs(draw) -> tuple[str, dict[str, int]]:
    lines = ["module {"]
    aliases: list[str] = []
    counter = [0]
    for number in range(draw(st.integers(1, 2))):
        core = draw(st.sampled_from(["", " attributes {tpu.core_type = "
                                         "#tpu.core_type<sc_vector_subcore>}"]))
        lines.append(f"  func.func @k{number}(%c0: index, %c4: index, %c1: index, "
                     f"%cond: i1){core} {{")
        draw(bodies(0, counter, lines, aliases))
        lines.append("    return")
        lines.append("  }")
    lines.append("}")
    lines.extend(f"#loc{i} = {text}" for i, text in enumerate(aliases, 1))
    # Powers of two, as MLIR's alignments are (2 bytes: less than a word, one word).
    align = draw(st.dictionaries(st.sampled_from(["201", "202", "vmem"]),
                                 st.sampled_from([2, 4, 8, 32, 64, 128]), max_size=3))
    return "\n".join(lines) + "\n", align
