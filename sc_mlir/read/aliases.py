"""Alias tables: `#name = ...` / `!name = ...` definitions, kept as text per chunk, on one
line, spread over several, or taken a batch at a time from the `#loc` tables that close a
dump."""

from __future__ import annotations

import re

from sc_mlir.read.allocas import may_allocate
from sc_mlir.read.lexicon import (
    _ALIAS_BATCH,
    _ALIAS_DEF,
    _ALIAS_IN_LINE,
    _ALIAS_NAME_ALONE,
    _ALIAS_NAME_AT_END,
    _ALIAS_PAIR,
    _BARE_WORD,
    _MAX_OP_LINES,
    _NEXT_ALIAS,
    _OP_AFTER_VALUE,
    bracket_balance,
)


class AliasTables:
    """`Scanner`'s alias tables (state: each chunk's `aliases`, `pending_alias`,
    `alias_state`). Methods of `Scanner`; see `sc_mlir.read.scan`."""

    def _alias_run(self, lines: list[str], start: int) -> int:
        """Take the plain one-line alias definitions from lines[start:] (the `#loc` tables
        that close a dump are tens of thousands of them), a batch at a time: a batch is
        taken whole when every line is `#name = value` and nothing in it needs the line-
        by-line reading (brackets other than parentheses, comments, escapes, strings or
        parentheses left open). Returns how many lines were taken."""
        aliases = self.chunks[-1].aliases
        count = len(lines)
        index = start
        while index < count:
            end = index
            limit = min(index + _ALIAS_BATCH, count)
            while end < limit and lines[end][:1] == "#":
                end += 1
            if end < count and end > index and (
                    lines[end].lstrip()[:1] in "(<[{=/"
                    or _BARE_WORD.fullmatch(lines[end - 1].partition("=")[2].strip())):
                end -= 1  # the last value may go on on the next line: read it line by line
            if end <= index:
                break
            text = "\n".join(lines[index:end])
            if ("<" in text or "[" in text or "{" in text or "\\" in text or "//" in text
                    or text.count("=") != end - index  # two definitions on a line
                    or may_allocate(text)
                    or "\t" in text or " \n" in text or text.endswith(" ")
                    or text.count("(") != text.count(")") or text.count('"') % 2):
                break
            pairs = _ALIAS_PAIR.findall(text)
            if len(pairs) != end - index:
                break
            new = dict(pairs)
            if len(new) != len(pairs) or not aliases.keys().isdisjoint(new.keys()):
                break  # a name defined twice: read line by line, which reports it
            aliases.update(new)
            index = end
        return index - start

    def _alias_line(self, raw: str) -> None:
        """`#name = value` at the top level, on one line or opening a multi-line value."""
        self.raw = raw
        m = _ALIAS_DEF.match(raw)
        if (m is None or raw.count('"') % 2 or may_allocate(raw)
                or _OP_AFTER_VALUE.search(raw, m.end())):
            self.feed_line(raw)
            return
        value = raw[m.end():].strip()
        if "<" in value or "[" in value or "{" in value:
            still_open = bracket_balance(value)
        else:
            still_open = value.count("(") - value.count(")")
        self._start_alias(m.group(1), value, still_open)

    def _alias_definition(self, raw: str, code: str) -> None:
        m = _ALIAS_DEF.match(raw)
        if m is None:
            alone = _ALIAS_NAME_ALONE.fullmatch(code)
            if alone is not None:  # `#loc1` and its `= ...` on the next line
                self.pending_alias = (alone.group(1), [], 0)
                self.alias_state = "="
                return
            self.diagnose(self.line_no, 1, "top-level '#' or '!' line is not an alias "
                          "definition; skipped", raw)
            return
        end = self._value_end(code, m.end(), 0)
        self._start_alias(m.group(1), raw[m.end() : end].strip(),
                          bracket_balance(code[m.end() : end]))
        if end < len(code):
            self._rest_of_line(raw, end)

    def _start_alias(self, name: str, value: str, still_open: int) -> None:
        # Definitions that share a line (`#a = loc(...) #b = ...`) are taken one after the
        # other by a loop that walks the line once: a call per definition would reach
        # Python's recursion limit on a line of a thousand, and copying the rest of the line
        # for each would take time quadratic in it (a `#loc` table written on one line, or
        # a dump whose lines end in a lone CR, which MLIR reads as a blank). The rest is
        # value[start:]; the text before its first `#b =` outside brackets is one
        # definition, which nothing splits again.
        start = 0
        if still_open <= 0 and "=" in value:
            total = bracket_balance(value)
            before = 0  # the balance of value[:start]
            while still_open <= 0 and value.find("=", start) >= 0:
                split = _split_at_next_alias(value, start)
                if split is None:
                    break
                at, balance = split
                self._start_alias(name, value[start : at.start()].strip(), 0)
                name = at.group(1)
                rest = _NOT_BLANK.search(value, at.end())
                rest_start = rest.start() if rest is not None else len(value)
                before += balance + bracket_balance(value[at.start() : rest_start])
                start = rest_start
                still_open = total - before
            if start:
                value = value[start:].rstrip()
        if still_open <= 0 and (last := _ALIAS_NAME_AT_END.search(value)) is not None and (
                bracket_balance(value[: last.start(1)]) == 0):
            # `#loc1 = loc(...) #loc2` and `= loc(...)` on the next line
            self._start_alias(name, value[: last.start(1)].strip(), 0)
            self.pending_alias = (last.group(1), [], 0)
            self.alias_state = "="
            return
        if still_open > 0 or not value:  # no value yet: it is on the next line
            self.pending_alias = (name, [value] if value else [], still_open)
            self.alias_state = ""
        elif _BARE_WORD.fullmatch(value):  # `loc`: its `(...)` may be on the next line
            self.pending_alias = (name, [value], 0)
            self.alias_state = "more"
        else:
            self._define_alias(name, value)

    def _continue_alias(self, raw: str, code: str) -> bool:
        """An alias definition spans lines until its brackets close (MLIR allows a line
        break between any two tokens). False: this line is not part of it (the alias is
        defined as read, or noted) and is read as usual."""
        assert self.pending_alias is not None
        name, parts, still_open = self.pending_alias
        end = self._value_end(code, 0, still_open)
        rest_at = end if end < len(code) else -1
        piece = raw[:end].strip()
        piece_code = code[:end].strip()
        state = self.alias_state
        self.alias_state = ""
        if state == "=":
            if not piece.startswith("="):
                self.pending_alias = None
                self.diagnose(self.line_no, 1, f"alias {name} has no '=' and no value; "
                              "skipped", raw)
                return False
            piece, piece_code = piece[1:].strip(), piece_code[1:]
            if not piece:
                return True  # the value is on the next line
        elif state == "more" and piece[:1] not in "(<[{":
            self.pending_alias = None
            self._define_alias(name, parts[0])
            return False
        parts.append(piece)
        still_open += bracket_balance(piece_code)
        if still_open > 0 and len(parts) < _MAX_OP_LINES * 16 and rest_at < 0:
            self.pending_alias = (name, parts, still_open)
            return True
        self.pending_alias = None
        self._start_alias(name, " ".join(parts), still_open)
        if rest_at >= 0:
            if self.pending_alias is not None:  # `!T = i32 module {`: complete after all
                self.pending_alias = None
                self.alias_state = ""
                self._define_alias(name, " ".join(parts))
            self._rest_of_line(raw, rest_at)
        return True

    @staticmethod
    def _value_end(code: str, start: int, open_before: int) -> int:
        """Where an alias value ends on this line: at the first top-level op after it
        (`!S = memref<8xf32, 201> module {`: MLIR needs no line break there), else at
        the end of the line. (The brackets before each candidate are counted from the one
        before: a line may hold thousands, as a dump whose lines end in a lone CR does.)"""
        balance = open_before
        counted = start
        for m in _OP_AFTER_VALUE.finditer(code, start):
            balance += bracket_balance(code[counted : m.start()])
            counted = m.start()
            if balance <= 0:
                return m.start(1)
        return len(code)

    def _alias_after_close(self, code: str) -> int | None:
        """Where an alias definition starts after the `}` that closes the last open
        region on this line (MLIR needs no line break there), if it does."""
        for m in _ALIAS_IN_LINE.finditer(code):
            before = code[: m.start()]
            if (before.count("}") - before.count("{") >= len(self.regions) - 1 >= 0
                    and "}" in before and before.count("(") == before.count(")")):
                return m.start()
        return None

    def _define_alias(self, name: str, value: str) -> None:
        aliases = self.chunks[-1].aliases
        if name in aliases:
            # MLIR rejects a redefinition; the first one is the one kept.
            self.diagnose(self.line_no, 1, f"alias {name} is defined again; this definition "
                          "is ignored (the first one is used)", self.raw)
            return
        aliases[name] = value


# Where the rest of a line starts after a definition's `=` (what `str.lstrip` removes is
# what `\s` matches).
_NOT_BLANK = re.compile(r"\S")


def _split_at_next_alias(value: str, start: int) -> tuple[re.Match[str], int] | None:
    """The first `#name =` in value[start:] outside brackets (as a search of that slice
    would find it: not at its first character), and the balance of the brackets before it.
    Each candidate's brackets are counted from the one before: a line may hold thousands."""
    balance = 0
    counted = start
    for m in _NEXT_ALIAS.finditer(value, start):
        if m.start() == start:
            continue  # the slice's search would see no character before it
        balance += bracket_balance(value[counted : m.start()])
        counted = m.start()
        if balance == 0:
            return m, balance
    return None
