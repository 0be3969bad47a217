"""The careful reader's lexical layer: the patterns it matches lines with and the pure
functions over one line's text (strings and comments blanked, bracket balance, whether an
op goes on to the next line). No state: everything here is a function of its arguments."""

from __future__ import annotations

import re

# MLIR's rule (mlir/lib/Support/ToolUtilities.cpp): `// -----` not followed by another
# dash ("doesn't have any dash post"; a longer rule of dashes is a near miss, a comment).
# `// -----// IR Dump After` headers are separators.
_SPLIT_MARKER = re.compile(r"\s*// -----(?!-)")
_DUMP_HEADER = re.compile(r"IR Dump (?:Before|After) ")
# Every pattern here runs in time linear in the line: no two ways to match the same text
# (string bodies are unrolled, alternatives start with different characters), so a
# pathological line costs what a long plain one does (bench/pathological.py).
_STRING_OR_COMMENT = re.compile(r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+("?)|//')
_HEAD = re.compile(
    r"[ \t]*(?:(?P<results>%[\w$.\-]+(?::\d+)?(?:[ \t]*,[ \t]*%[\w$.\-]+(?::\d+)?)*)[ \t]*=[ \t]*)?"
    r"(?P<name>\"[^\"\n]*\"|[A-Za-z_][\w$.]*)"
)
# A whole line that is one plain op: its head (groups 1 and 2 as in _HEAD), then only text
# without strings, comment marks or backslashes, where braces appear only as `<{...}>`
# properties or a one-line `{name = ...}` attribute dict. Unrolled: Python's engine is slow
# at an alternation per character.
_PLAIN = r'[^{}<"/\\\n]*'
_SIMPLE_LINE = re.compile(
    r"[ \t]*(?:(%[\w$.\-]+(?::\d+)?(?:[ \t]*,[ \t]*%[\w$.\-]+(?::\d+)?)*)[ \t]*=[ \t]*)?"
    r'("[\w.$\-]+"|[A-Za-z_][\w$.]*)'
    + _PLAIN
    + r'(?:(?:<\{[^{}"/\\\n]*\}>|\{[ \t]*[A-Za-z_][\w$.\-]*[ \t]*(?:[=,][^{}"/\\\n]*)?\}|<(?!\{))'
    + _PLAIN
    + r")*"
)
_SSA = re.compile(r"%[\w$.\-]+")
_RESULT_NAME = re.compile(r"%[\w$.\-]+")
_BLOCK_ARG = re.compile(r"(%[\w$.\-]+)[ \t]*:")
_BRACE = re.compile(r"[{}]")
# A `{` that does not open an attribute dictionary on the same line.
_MAYBE_REGION_OPEN = re.compile(r'(?<!<)\{(?![ \t]*(?:[\w$.\-]+|"[^"\n]*")[ \t]*[=,}])')
_DICT_ENTRY = re.compile(r'[ \t]*(?:[A-Za-z_][\w$.\-]*|"[^"\n]*")[ \t]*[=,]')
_DICT_AFTER_BRACE = re.compile(r'[ \t]*(?:(?:[A-Za-z_][\w$.\-]*|"[^"\n]*")[ \t]*[=,}]|\})')
REPLACEMENT = "\ufffd"
# Control characters MLIR text never holds (tab, CR and LF aside), and U+FFFD, which is
# what invalid UTF-8 decodes to. A crashed compile can leave NUL blocks in a dump; an ESC
# from a dump must not reach a terminal.
_CONTROL_CHARACTER = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]")
_ODD_CHARACTER = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f\ufffd]")
_MAX_ODD_LINE_NOTES = 20
_MAX_NOTES_PER_KIND = 20
# What varies between notes of one kind: numbers, names, quoted text.
_NOTE_DETAILS = re.compile(r"\d+|[#!@%][\w$.\-]+|'[^']*'|\([^()]*\)")
# An op with results, which never sits inside another op's brackets.
_NEW_OP = re.compile(r'[ \t]*%[\w$.\-]++(?::\d+)?+(?:[ \t]*,[ \t]*%[\w$.\-]++(?::\d+)?+)*+'
                     r'[ \t]*=[ \t]*(?:"[\w$.\-]+"[ \t]*\(|[A-Za-z_][\w$]*\.[\w$.]+)')
_BLANKS_TO_END = re.compile(r"\s*+$")
# A line that starts an op of its own: results and `=`, then an op name (a string followed
# by `(` alone may be a name location going on: `loc(callsite(` then `"f"("a.py":1:2)`).
_OP_LINE_START = re.compile(r'[ \t]*+%[\w$.\-]++(?::\d++)?+(?:[ \t]*+,[ \t]*+%[\w$.\-]++'
                            r'(?::\d++)?+)*+[ \t]*+=[ \t]*+(?:"|[A-Za-z_][\w$]*+\.)')
# A line that is only result names (`%a`, `%a, %b =`): its op goes on on the next line.
_RESULTS_ONLY = re.compile(r"[ \t]*%[\w$.\-]++(?::\d++)?+(?:[ \t]*,[ \t]*%[\w$.\-]++(?::\d++)?+)*+"
                           r"[ \t]*+[,=]?[ \t]*+")
_ALIAS_NAME_ALONE = re.compile(r"[ \t]*([#!][\w$.\-]+)[ \t]*")
# A top-level op after an alias value on the same line.
_OP_AFTER_VALUE = re.compile(r'(?<![\w$.\-#!%@^"])(module\b|"[\w$.\-]++"[ \t]*+\(|'
                             r'[A-Za-z_][\w$]*+\.[\w$.]++)')
_ALIAS_IN_LINE = re.compile(r"(?<![\w$.\-#!%@^\"])[#!][\w$.\-]++[ \t]*+=(?![=>])")
_ALIAS_NAME_AT_END = re.compile(r"(?<=[\s)>\]}\"])[ \t]*+([#!][\w$.\-]++)[ \t]*+$")
_NEXT_ALIAS = re.compile(r"(?<=[\s)>\]}])[ \t]*+([#!][\w$.\-]++)[ \t]*+=")
# Result names after a region's `{` or an op's `)`, their `=` on the next line.
_RESULTS_TAIL = re.compile(r"[{)>\]][ \t]*+%[\w$.\-]++(?::\d++)?+"
                           r"(?:[ \t]*+,[ \t]*+%[\w$.\-]++(?::\d++)?+)*+[ \t]*+[,=]?$")
_OP_AFTER_CLOSE = re.compile(r"[ \t]*+([A-Za-z_][\w$]*+\.[\w$.]++)(?=[ \t(]|$)")
_NEXT_STATEMENT = re.compile(r'(?:[A-Za-z_][\w$]*+(?:\.[\w$.]++)?+|"[\w$.\-]++"|%[\w$.\-]++)'
                             r'(?![\w$.(])|"[\w$.\-]++"[ \t]*+\(')
_PROPERTIES = re.compile(r"<\s*\{[^{}]*\}\s*>")
_BARE_WORD = re.compile(r"[#!]?[A-Za-z_][\w$.]*")
_LOC_KEYWORD_AT_END = re.compile(r"(?<![\w$.#!%@\-])loc$")
_OPEN_DICT_ENTRY = re.compile(r'\{[ \t]*+(?:[A-Za-z_][\w$.\-]*+|"[^"\n]*")[ \t]*+$')
_TRAILING_LOC = re.compile(r"[ \t]*loc[ \t]*\(")
# Last characters of a line whose op cannot end there (`%a = memref.alloca() :`); blanks
# after them send the line to the careful test.
_OPEN_ENDINGS = frozenset(":=, \t")
# Where a second op may start on a line, after a blank: `%x = dialect.op`, `%x = "op"`, a
# generic `"dialect.op"(`, or a statement-form `memref.alloca(`. Taken as an op start
# only where the brackets opened since the previous op are closed (`_op_starts`). One
# result name only: a pattern over a comma list would rescan it from every `%`.
_MID_OP = re.compile(r'(?<=[ \t)\]>}])(?:%[\w$.\-]++(?::\d++)?+[ \t]*+=[ \t]*+'
                     r'(?:"[\w$.\-]++"|[A-Za-z_][\w$]*+\.[\w$.]++)|"[\w$.\-]++"[ \t]*+\(|'
                     r'memref\.alloca[ \t]*+\()')
# Where a second op written without results may start on a line, after a blank or a
# closing bracket: a dialect op's name (`... -> () memref.store %f, %a[%i]`) or `return`,
# not an attribute's name (`=` follows it). (Types and attributes print their dialect's
# names after `!` or `#`, symbols after `@`.) `_op_starts` looks for both patterns.
_MID_BARE_OP = re.compile(r"(?<=[ \t)\]>}])(?:[A-Za-z_][\w$]*+\.[\w$.]++|return)(?![\w$.])"
                          r"(?![ \t]*+=)")
_MID_OP_OR_BARE = re.compile(_MID_OP.pattern + "|" + _MID_BARE_OP.pattern)
# `_MID_BARE_OP` with the blank or bracket before it matched, not looked behind at: a
# pattern that starts with a set of characters is searched for them, not tried at every
# one (the careful reader asks it of every plain line that holds a `.` after its op).
_BARE_OP_AFTER = re.compile(r"[ \t)\]>}](?:[A-Za-z_][\w$]*+\.[\w$.]++|return)(?![\w$.])"
                            r"(?![ \t]*+=)")
# The name of an op written without results where an op's text could not go on (after a
# region's `}`, or after a whole op on its line): a dialect op's, or `return`; not an
# attribute's name (`=` follows it) nor part of a type, an attribute or a string (`!`, `#`,
# `@`, `"`, `/` or a word character before it). Searched with strings blanked (`_QUOTED`).
_BARE_OP = re.compile(r'(?<![\w$.#!@%^<"/])(?:[A-Za-z_][\w$]*+\.[\w$.]++|return)(?![\w$.])'
                      r"(?![ \t]*+=)")
_QUOTED = re.compile(r'"[^"\n]*+"')
_DICT = re.compile(r"\{[^{}\n]*+\}")


def outside_strings_and_dicts(text: str) -> str:
    """`text` with its strings and its `{...}` dicts (nested ones too) emptied: where
    `_BARE_OP` looks for an op's name (a unit attribute, `{llvm.emit_c_interface}`, is
    none).

    >>> outside_strings_and_dicts('x.a() {a = [{b.c}], d.e} : () -> () loc("f.py":1:2) y.b')
    'x.a() {} : () -> () loc("":1:2) y.b'
    """
    text = _QUOTED.sub('""', text)
    while "{" in text:
        emptied = _DICT.sub("{}", text)
        if emptied == text:
            break
        text = emptied.replace("{}", "\x00")
    return text.replace("\x00", "{}")


_ALIAS_DEF = re.compile(r"[ \t]*([#!][\w$.\-]+)[ \t]*=[ \t]*")
# Greedy on purpose (a lazy value followed by optional blanks backtracks at every
# character); batches with trailing blanks are read line by line instead.
_ALIAS_PAIR = re.compile(r"^(#[\w$.\-]+)[ \t]*=[ \t]*([^ \t\n][^\n]*)$", re.MULTILINE)
_ALIAS_BATCH = 512
_CONSTANT = re.compile(
    r"(?:value[ \t]*=[ \t]*|constant\"?[ \t]+)(-?\d+)[ \t]*:[ \t]*(?:index|[su]?i\d+)"
)
_CONTINUATION_WORDS = frozenset({
    "attributes", "to", "step", "iter_args", "else", "do", "ins", "outs", "loc", "at",
    "shared_outs", "reduce", "init", "dimensions", "by", "into", "from",
})


_MISSING = object()
# An op whose text never completes (a lost `>`) is given up after this many lines.
_MAX_OP_LINES = 64
# Enough of a region op's header lines to find its symbol and attributes.
_MAX_HEADER_LINES = 64


def blank_strings(line: str) -> tuple[str, bool]:
    """The code part of a line: string contents replaced by spaces (same length), the
    comment cut off. Also says whether a string was left unterminated.

    >>> blank_strings('"a.b"(%0) {s = "x{%y"} // memref.alloca')
    ('"   "(%0) {s = "    "} ', False)
    """
    pieces: list[str] = []
    pos = 0
    unterminated = False
    for m in _STRING_OR_COMMENT.finditer(line):
        token = m.group()
        if token == "//":
            pieces.append(line[pos : m.start()])
            return "".join(pieces), unterminated
        if not m.group(1):
            unterminated = True
        pieces.append(line[pos : m.start()])
        pieces.append('"' + " " * (len(token) - 2) + token[-1] if len(token) >= 2 else '"')
        pos = m.end()
    pieces.append(line[pos:])
    return "".join(pieces), unterminated


def dump_header_pass(line: str) -> str | None:
    """The pass named by `// -----// IR Dump After Pass (arg) //----- //`, if any.

    >>> dump_header_pass("// -----// IR Dump After Canonicalizer (canonicalize) //----- //")
    'Canonicalizer (canonicalize)'
    """
    m = _DUMP_HEADER.search(line)
    if m is None:
        return None
    rest = line[m.end():]
    cut = rest.find("//-----")
    return (rest if cut < 0 else rest[:cut]).strip()


def code_of(line: str) -> tuple[str, bool]:
    """Fast path of `blank_strings` for lines whose strings cannot hide anything: no
    escapes, and no brace, value name or comment marker inside a string."""
    quotes = line.count('"')
    if quotes == 0 or (quotes % 2 == 0 and "\\" not in line
                       and not any("{" in s or "}" in s or "%" in s or "//" in s
                                   for s in line.split('"')[1::2])):
        cut = line.find("//")
        return (line if cut < 0 else line[:cut]), False
    return blank_strings(line)


def _results_of(results_text: str) -> tuple[str, ...]:
    """`%a` -> ("%a",); `%a, %b:2` -> ("%a", "%b")."""
    if "," not in results_text and ":" not in results_text:
        return (results_text,)
    return tuple(_RESULT_NAME.findall(results_text))


def _constant_value(definition: str | None) -> int | None:
    """The integer an `arith.constant` line defines, if it is one."""
    if definition is None:
        return None
    m = _CONSTANT.search(definition)
    return int(m.group(1)) if m else None


def bracket_balance(code: str) -> int:
    """Open minus closed brackets of all kinds (`->`, `>=` and `<=` are not brackets).

    >>> bracket_balance("#enc = #sparse_tensor.encoding<{ map = (d0) -> (d0)")
    2
    >>> bracket_balance("}>")
    -2
    """
    opens = code.count("<") + code.count("(") + code.count("[") + code.count("{")
    closes = code.count(">") + code.count(")") + code.count("]") + code.count("}")
    not_closing = code.count("->") + code.count(">=")
    not_opening = code.count("<=")
    return (opens - not_opening) - (closes - not_closing)


def _goes_on(code: str) -> bool:
    """Whether an op's text cannot end with this code: a `<` or `[` left open, only result
    names, or a last token after which MLIR needs more (`:`, `->`, `=`, `,`)."""
    if _angle_square_balance(code) > 0 or _RESULTS_ONLY.fullmatch(code):
        return True
    end = code.rstrip()
    if _LOC_KEYWORD_AT_END.search(end) or _OPEN_DICT_ENTRY.search(end) or _dict_open(code):
        return True  # `loc` before its `(`; `{alignment` before its `= 64 : i64}`
    if end.lstrip().startswith("loc") and code.count("(") > code.count(")"):
        return True  # a location alone on its line, going on
    if end.endswith(("memref.alloca", '"memref.alloca"')) or _RESULTS_TAIL.search(end):
        return True  # an op name before its operands; results before their `=`
    if end.endswith("{") and "memref.alloca" in code:
        # An alloca has no region: a `{` before its type opens its attribute dict.
        after = _PROPERTIES.sub("", code[code.rfind("memref.alloca") :])
        return ":" not in after
    if end.endswith(","):
        # A list going on in parentheses or an attribute dict is read as it always was.
        return code.count("(") == code.count(")") and "{" not in code
    return end.endswith((":", "->", "=")) and not end.endswith(("==", "<=", ">="))


def _line_may_go_on(raw: str) -> bool:
    """Cheap test, for every line, before `_goes_on`: may the op on this line go on on the
    next one? Most lines of a dump end with their `loc(...)` and are done in two tests."""
    last = raw[-1:]
    if last == ")":
        # Most lines end with their `loc(...)`: the op is complete. Otherwise a `<` may be
        # left open (`<{function_type = (i32)` before `-> ()}>` on the next line).
        if ("<" in raw or "[" in raw) and raw.rfind("loc(") < 0 and _maybe_open(raw):
            return True
        # A `loc(...)` alone on its line, going on (`loc("n"("f.py":5:6)` then `)`).
        return _TRAILING_LOC.match(raw) is not None and raw.count("(") > raw.count(")")
    if ("<" in raw or "[" in raw) and _maybe_open(raw):
        return True
    if last in _OPEN_ENDINGS or raw.endswith(("->", "loc", "alloca", 'alloca"')):
        return True
    if "%" in raw and ("//" in raw or _RESULTS_ONLY.fullmatch(raw)
                       or ((last.isalnum() or last in "_$.-") and _RESULTS_TAIL.search(raw))):
        return True
    if "{" in raw and ((last == "{" and "memref.alloca" in raw) or (
            raw.count("{") > raw.count("}") and (_OPEN_DICT_ENTRY.search(raw)
                                                 or _dict_open(raw)))):
        return True
    return "loc" in raw and raw.count("(") > raw.count(")")


def _dict_open(code: str) -> bool:
    """Whether the innermost `{` of code still open opens an attribute dict."""
    if code.count("{") <= code.count("}"):
        return False
    still_open: list[int] = []
    for m in _BRACE.finditer(code):
        if code[m.start()] == "{":
            still_open.append(m.start())
        elif still_open:
            still_open.pop()
    return bool(still_open) and _DICT_AFTER_BRACE.match(code, still_open[-1] + 1) is not None


def _maybe_open(raw: str) -> bool:
    """Cheap test before `_angle_square_balance`: a `<` or `[` may be left open."""
    angles = raw.count("<")
    if angles and angles + raw.count("->") > raw.count(">"):
        return True
    return "[" in raw and raw.count("[") > raw.count("]")


def _angle_square_balance(code: str) -> int:
    """Open `<` and `[` not closed in code (`->`, `>=`, `<=` are not brackets); an op
    whose type or location is cut by a line break leaves one open."""
    angles = code.count("<") - code.count("<=") - (code.count(">") - code.count("->")
                                                   - code.count(">="))
    return max(angles, 0) + max(code.count("[") - code.count("]"), 0)


def _passes_values_out(name: str) -> bool:
    """Terminators whose operands become the results of the op that holds the region."""
    return name.endswith("yield") or name == "scf.condition" or (
        name.endswith(".return") and name != "func.return")
