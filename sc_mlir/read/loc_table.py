"""The trailing `#loc` table of a file the fast reader read, looked up by position."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping

_VALUE_AT = re.compile(rb"[^\n]*")
_TABLE_LINE = re.compile(rb"\n(?=#)")
_INDEX_AFTER_LOOKUPS = 64


class TableGone(Exception):
    """A table read from its file (`read_from_file`) that the file no longer holds."""


# A file's table, named by the file's path, size and modification time (`event_spans`
# names the tables of files whose spans workers read).
TableKey = tuple[str, int, int]


class LocationTable(Mapping[str, str]):
    """The `#loc` aliases of a trailing location table, fetched by position when asked for:
    a dump has hundreds of thousands and a report needs a few. The table was checked to
    hold one `#locN = loc(...)` per line, numbers increasing (`#loc` counts as -1)."""

    def __init__(self, data: bytes, start: int, end: int, numbers: array[int],
                 before: Mapping[str, str]) -> None:
        self._data = data
        self._start, self._end = start, end
        self._numbers = numbers
        self._before = before  # aliases defined before the first op
        self._found: dict[str, str] = {}
        self._offsets: array[int] | None = None
        self._key: TableKey | None = None  # see `event_spans.shared_table`
        self._read: Callable[[int, int], bytes] | None = None  # see `read_from_file`

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Sent to another process (records built in a worker): the table, not the file.
        table = b"\n" + self._bytes(self._start, self._end)
        return (LocationTable, (table, 1, len(table), self._numbers, dict(self._before)))

    def read_from_file(self, read: Callable[[int, int], bytes]) -> None:
        """From now on the table's lines are read with `read(position, size)` (positions as
        in `data`, which raises when the file is no longer what it was), and `data` is let
        go: a worker that reads spans keeps an index of the lines, not the table, which its
        RSS would count again (300 MB for a 1 GB dump)."""
        self._index()
        self._read = read
        self._data = b""

    def read_into_memory(self) -> None:
        """The table read from the file again and kept (`read_from_file` undone). Raises
        TableGone when the file no longer holds it."""
        if self._read is not None:
            self._data = self._bytes(0, self._end)
            self._read = None

    @property
    def reads_from_file(self) -> bool:
        return self._read is not None

    def _bytes(self, start: int, end: int) -> bytes:
        if self._read is None:
            return bytes(self._data[start:end])
        try:
            return self._read(start, end - start)
        except Exception as exc:
            raise TableGone(f"the #loc table could not be read again: {exc}") from exc

    def _index(self) -> array[int]:
        """Where each line starts, less one: one search over the table, then each line is
        one bisect away."""
        if self._offsets is None:
            self._offsets = array("q", (m.start() for m in _TABLE_LINE.finditer(
                self._data, self._start - 1, self._end)))
        return self._offsets

    def _number(self, name: object) -> int | None:
        if not isinstance(name, str) or not name.startswith("#loc"):
            return None
        digits = name[4:]
        if digits:
            if not (digits.isascii() and digits.isdigit()) or (digits[0] == "0"
                                                               and digits != "0"):
                return None
            number = int(digits)
        else:
            number = -1
        numbers = self._numbers
        at = bisect_left(numbers, number)
        return number if at < len(numbers) and numbers[at] == number else None

    def __contains__(self, name: object) -> bool:
        return name in self._before or self._number(name) is not None

    def __getitem__(self, name: str) -> str:
        if name in self._before:
            return self._before[name]
        found = self._found.get(name)
        if found is not None:
            return found
        number = self._number(name)
        if number is None:
            raise KeyError(name)
        data = self._data
        if self._read is not None:  # the lines are in the file
            offsets = self._offsets
            assert offsets is not None
            at = bisect_left(self._numbers, number)
            line = offsets[at] + 1
            text = self._bytes(line, offsets[at + 1] if at + 1 < len(offsets) else self._end)
            return _VALUE_AT.match(text, text.find(b" = ") + 3).group().decode().strip()
        if len(self._found) >= _INDEX_AFTER_LOOKUPS:
            # A report asking for many: one search for every line start, then each is one
            # bisect away.
            line = self._index()[bisect_left(self._numbers, number)] + 1
            equals = data.find(b" = ", line)
        else:
            line, equals = self._bisect(number)
        value = _VALUE_AT.match(data, equals + 3).group().decode().strip()
        if self._offsets is None:
            # Until the index is made; past it, a lookup is cheap and a large file read in
            # spans looks up most of its aliases: kept, they would hold the table twice.
            self._found[name] = value
        return value

    def _bisect(self, number: int) -> tuple[int, int]:
        """The line defining #loc<number>, found by bisecting byte positions."""
        data = self._data
        low, high = self._start, self._end
        while low < high:
            middle = (low + high) // 2
            line = data.rfind(b"\n", self._start - 1, middle) + 1
            equals = data.find(b" = ", line)
            digits = data[line + 4 : equals]
            at = int(digits) if digits else -1
            if at == number:
                return line, equals
            if at < number:
                low = data.find(b"\n", line) + 1
            else:
                high = line
        raise KeyError(number)  # cannot happen in a checked table

    def __iter__(self) -> Iterator[str]:
        yield from self._before
        for number in self._numbers:
            yield f"#loc{number}" if number >= 0 else "#loc"

    def __len__(self) -> int:
        return len(self._before) + len(self._numbers)
