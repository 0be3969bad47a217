"""Lines as MLIR reads them: control characters and invalid UTF-8 reported and blanked,
and lines whose op goes on (a `<` or `[` left open) held and read as one, with a map back to
the line and column of every piece."""

from __future__ import annotations

import bisect
import re

from sc_mlir.read.lexicon import (
    _CONTROL_CHARACTER,
    _MAX_ODD_LINE_NOTES,
    _MAX_OP_LINES,
    _NEW_OP,
    _ODD_CHARACTER,
    _OP_LINE_START,
    REPLACEMENT,
    _dict_open,
    _goes_on,
    code_of,
)

# NULs in a row, as many as no printer writes but a zeroed page (or more) holds.
_NUL_BLOCK = re.compile("\0{64,}")


class HeldLines:
    """`Scanner`'s line holding (state: `held`, `join_map`, `odd_lines`). Methods of
    `Scanner`; see `sc_mlir.read.scan`."""

    def feed_checked(self, lines: list[str], suspect: bool | None = None) -> None:
        """`feed_block`, after replacing control characters (NUL, ESC...) with spaces (the
        columns stay, and an op after a run of NULs is still read) and reporting them and
        invalid UTF-8 (already U+FFFD), line by line. `suspect` says
        whether the block may hold any (None: look)."""
        if suspect is None:
            suspect = any(_ODD_CHARACTER.search(line) for line in lines)
        if suspect:
            first = self.line_no + 1
            for offset, line in enumerate(lines):
                m = _ODD_CHARACTER.search(line)
                if m is not None:
                    lines[offset] = self._odd_line(line, m, first + offset)
        self.feed_block(lines)

    def _odd_line(self, line: str, m: re.Match[str], line_no: int) -> str:
        self.odd_lines += 1
        char = m.group()
        if self.odd_lines <= _MAX_ODD_LINE_NOTES:
            what = ("invalid UTF-8 in the text; its bytes read as U+FFFD" if char == REPLACEMENT
                    else f"control byte 0x{ord(char):02x}" + (" (NUL)" if char == "\0" else "")
                    + " in the text; read as a space")
            block = _NUL_BLOCK.search(line)
            if block is not None:
                # A block a crash zeroed took the text it replaced with it: what that held
                # (allocas, region ends) is missing from the report, which may then fit.
                what = (f"{block.end() - block.start():,} NUL bytes in a row (a block a "
                        "crash may have zeroed): the text that was there is lost, and the "
                        "report lacks what it held")
                m = block
            cleaned = _CONTROL_CHARACTER.sub(" ", line)
            self.diagnose(line_no, m.start() + 1, what, cleaned)
            return cleaned
        return _CONTROL_CHARACTER.sub(" ", line)

    def _hold(self, raw: str) -> bool:
        """Hold a line whose op goes on (MLIR allows a line break wherever it allows a
        blank): a `<` or `[` left open, or only result names. False: read it now."""
        code, unterminated = code_of(raw)
        first = code.lstrip()[:1]
        if not first or first == "^" or (len(self.regions) == 1 and first in "#!"):
            return False  # comments, block labels, alias definitions (their own rule)
        if unterminated:
            return False  # a string cannot span lines: joined, the quotes would pair up anew
        if not _goes_on(code):
            return False
        if self.nesting > 0 and code.rstrip().endswith(":"):
            return False  # `unknown)):` ends a block label whose arguments span lines
        self.held = [(self.line_no, raw[: len(code)])]
        return True

    def _add_to_held(self, raw: str) -> bool:
        """The line after held ones: add it (True), or, when it cannot go on the held op
        (a new op, a block label, a region's end, too many lines), read the held lines as
        they are and then this one as usual (False)."""
        held = self.held
        assert held is not None
        code, unterminated = code_of(raw)
        stripped = code.strip()
        if not stripped and not unterminated:
            return True  # a blank or comment line inside the op
        if (unterminated or _NEW_OP.match(code) or _OP_LINE_START.match(code)
                or stripped[0] == "^"
                or len(held) >= _MAX_OP_LINES
                or (stripped[0] == "}" and stripped[:2] != "}>" and not _dict_open(
                    code_of(" ".join(text for _, text in held))[0]))):
            self._flush_held()
            return False
        held.append((self.line_no, raw[: len(code)]))
        if _goes_on(code_of(" ".join(text for _, text in held))[0]):
            return True
        self._flush_held()
        return True

    def _flush_held(self) -> None:
        """Read the held lines as one: blanks join them, and `join_map` says where each
        piece was (line numbers and columns as MLIR counts them)."""
        held = self.held
        assert held is not None
        self.held = None
        pieces: list[str] = []
        join_map: list[tuple[int, int, int]] = []
        offset = 0
        for k, (line_no, line) in enumerate(held):
            text = line if k == 0 else line.lstrip(" \t")
            if k:
                pieces.append(" ")
                offset += 1
            join_map.append((offset, line_no, len(line) - len(text) + 1))
            pieces.append(text)
            offset += len(text)
        now = self.line_no
        self.line_no = held[0][0]
        self.join_map = join_map if len(held) > 1 else None
        try:
            self.feed_line("".join(pieces))
        finally:
            self.join_map = None
            self.join_text_starts.clear()
            self.line_no = now

    def _position(self, offset: int) -> tuple[int, int]:
        """Line and column of a 0-based offset in the line being read."""
        join_map = self.join_map
        if join_map is None:
            return self.line_no, offset + 1
        k = bisect.bisect_right(join_map, (offset, 1 << 62, 0)) - 1
        start, line, col = join_map[max(k, 0)]
        return line, col + (offset - start)
