"""A reader written apart from sc-mlir's: counts `memref.alloca` ops in text by walking
each line's characters, to hold the scanner's accounting to (tests/analysis and
tests/read use it on random damage and on the upstream corpus)."""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]")
_OP_POSITION = re.compile(r"[ \t]*(?:%[\w$.\-]+(?::\d+)?(?:[ \t]*,[ \t]*%[\w$.\-]+(?::\d+)?)*"
                          r"[ \t]*=[ \t]*)?")
_PRETTY = re.compile(r'(?<![\w$.])memref\.alloca(?![\w$.])')


def alloca_ops_in(text: str) -> int:
    """memref.alloca op names outside comments and string literals, by a reader written
    apart from the scanner: a plain walk over each line's characters. The generic name is
    the string "memref.alloca" where an op name stands (first on its line, or after the
    op's results `%a, %b =`) or wherever a `(` follows it."""
    count = 0
    for line in text.split("\n"):
        line = _CONTROL.sub(" ", line.rstrip("\r"))
        code: list[str] = []
        i = 0
        while i < len(line):
            char = line[i]
            if char == '"':
                j = i + 1
                while j < len(line) and line[j] != '"':
                    j += 2 if line[j] == "\\" else 1
                content = line[i + 1 : min(j, len(line))]
                before = "".join(code)
                if j < len(line) and content == "memref.alloca" and (
                        line[j + 1 :].lstrip(" \t").startswith("(")
                        or _OP_POSITION.fullmatch(before)):
                    count += 1
                code.append('"' + " " * (min(j, len(line)) - i - 1) + '"')
                i = j + 1
                continue
            if line.startswith("//", i):
                break
            code.append(char)
            i += 1
        count += len(_PRETTY.findall("".join(code)))
    return count


def stack_allocas(records) -> list:
    """The `memref.alloca` entries of a table (it lists other allocating ops too)."""
    return [r for r in records if r.kind == "alloca"]


def accounted(diagnostics) -> int:
    return sum(1 for d in diagnostics
               if d.message.startswith(("memref.alloca skipped",
                                        "memref.alloca appears where no op starts")))
