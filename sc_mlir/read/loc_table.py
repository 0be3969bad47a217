"""The trailing `#loc` table of a file the fast reader read, looked up by position."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping
from itertools import accumulate, compress

_INDEX_AFTER_LOOKUPS = 64
# A table in memory marks where every 32nd line starts (`_mark`).
_MARK_SHIFT = 5
# The index is made from the table split into lines a block at a time: the lines' bytes
# objects are let go block by block (a large dump's table is hundreds of MB).
_INDEX_BLOCK = 1 << 20
# Positions below this fit the index in 4-byte items (`_index`).
_INT32_STOP = 1 << 31
# Longer names (`#loc` and 19 digits) are no number an int64 holds: none the table defines.
_LONGEST_NAME = 23
# Names as `_line_index` reads them, one a line: `#loc` and digits, no leading zero.
_NUMBERED_NAMES = re.compile(r"(?:#loc(?:0|[1-9][0-9]*+)\n)*+#loc(?:0|[1-9][0-9]*+)")


class TableGone(Exception):
    """A table read from its file (`read_from_file`) that the file no longer holds."""


# A file's table, named by the file's path, size and modification time (`event_spans`
# names the tables of files whose spans workers read).
TableKey = tuple[str, int, int]


class LocationTable(Mapping[str, str]):
    """The `#loc` aliases of a trailing location table, fetched by position when asked for:
    a dump has hundreds of thousands and a report needs a few. The table was checked to
    hold one `#locN = loc(...)` per line, numbers increasing (`#loc` counts as -1), each
    line ending in a newline. `numbers` is a range when they are consecutive (most tables):
    a name's line is then found by a subtraction."""

    def __init__(self, data: bytes, start: int, end: int, numbers: array[int] | range,
                 before: Mapping[str, str]) -> None:
        self._data = data
        self._start, self._end = start, end
        self._numbers = numbers
        self._before = before  # aliases defined before the first op
        self._found: dict[str, str] = {}
        self._offsets: array[int] | None = None
        self._marks: list[int] | None = None  # see `_mark`
        self._key: TableKey | None = None  # see `event_spans.shared_table`
        self._read: Callable[[int, int], bytes] | None = None  # see `read_from_file`
        # What readers of the values make of them (`model.locations` parses them), kept
        # with the table: the chunks of a file read in spans share it, and parse each once.
        self.parsed: dict[str, object] = {}
        self.parse_errors: dict[str, str] = {}

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Sent to another process (records built in a worker): the table, not the file.
        table = b"\n" + self._bytes(self._start, self._end)
        return (LocationTable, (table, 1, len(table), self._numbers, dict(self._before)))

    def same_as(self, other: LocationTable) -> bool:
        """Whether `other` is this table: the same lines of the same bytes, numbered
        alike, after the same aliases (so that every name reads the same in both)."""
        return (self._data is other._data and self._start == other._start
                and self._end == other._end and type(self._numbers) is type(other._numbers)
                and self._numbers == other._numbers and self._before is other._before)

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
        """For each line, where it starts less one less its position in the table (the
        newlines before it, which the index leaves out: one step less per line to make),
        then the same for the end of the table. Made once, in C from the lines' lengths:
        line `at` starts at `index[at] + at + 1`, its newline is at `index[at + 1] + at + 1`."""
        if self._offsets is None:
            data, position, end = self._data, self._start, self._end
            # 4 bytes a line, not 8, when every position fits (a table under 2 GiB).
            offsets = array("i" if end < _INT32_STOP else "q")
            base = position - 1
            while position < end:
                block_end = data.find(b"\n", min(position + _INDEX_BLOCK, end - 1)) + 1
                lines = bytes(data[position:block_end]).split(b"\n")
                lines.pop()  # what follows the block's last newline: nothing
                offsets.extend(accumulate(map(len, lines), initial=base))
                base = offsets.pop()  # where the next block's first line starts, so read
                position = block_end
            if self._start < end:
                offsets.append(base)
            self._offsets = offsets
        return self._offsets

    def _mark(self) -> list[int]:
        """Where the newline before every `1 << _MARK_SHIFT`th line is (the table in memory),
        each found by searching on from the last for the line's name: a few thousand
        searches through the table in C, where `_index` makes an int per line (a 50 MB
        dump's 351,544 lines: 40 -> 11 ms, and its 24,000 look-ups 26 -> 41 ms)."""
        if self._marks is None:
            data, numbers = self._data, self._numbers
            position = self._start - 1  # the newline before the first line
            marks = [position]
            for at in range(1 << _MARK_SHIFT, len(numbers), 1 << _MARK_SHIFT):
                # Only the first line may be the bare `#loc` (number -1).
                position = data.find(b"\n#loc%d = " % numbers[at], position + 1)
                marks.append(position)
            self._marks = marks
        return self._marks

    def _line_index(self, name: object) -> int | None:
        """Which line of the table defines `name` (None when none does)."""
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
        if type(numbers) is range:
            at = number - numbers.start
            return at if 0 <= at < len(numbers) else None
        at = bisect_left(numbers, number)
        return at if at < len(numbers) and numbers[at] == number else None

    def __contains__(self, name: object) -> bool:
        return name in self._before or self._line_index(name) is not None

    def defines_all(self, names: list[str]) -> bool:
        """Whether the table defines every one of `names` (`all(name in table ...)`, but
        False for a name too long to be a table's): a few passes in C for a table numbered
        one by one and names as it numbers them, else a look-up of each."""
        lengths = list(map(len, names))
        if names and max(lengths) > _LONGEST_NAME:
            return False  # asked of each in turn, an int of 4300 digits raises where it did
        numbers = self._numbers
        if names and type(numbers) is range:
            listed = "\n".join(names)
            # As many lines as names: no name holds a newline.
            if listed.count("\n") == len(names) - 1 and _NUMBERED_NAMES.fullmatch(listed):
                # Numbers without a leading zero order as their digits do among those of as
                # many digits: the least is the least text of the shortest names, the
                # greatest the greatest of the longest (no int made per name).
                shortest, longest = min(lengths), max(lengths)
                least = min(compress(names, map(shortest.__eq__, lengths)))
                greatest = max(compress(names, map(longest.__eq__, lengths)))
                return numbers.start <= int(least[4:]) and int(greatest[4:]) < numbers.stop
        return all(name in self for name in names)

    def get(self, name: str, default: str | None = None) -> str | None:  # type: ignore[override]
        at = self._line_index(name)
        if at is None:
            return self._before.get(name, default)  # which names no table line defines
        if self._read is None:  # a report asking for many
            offsets = self._offsets
            if offsets is not None:
                data = self._data
                line = offsets[at] + at + 1
                return data[data.find(b" = ", line) + 3 : offsets[at + 1] + at + 1
                            ].decode().strip()
            marks = self._marks
            if marks is not None:
                # The line that starts with the name: `#locN = ` follows a newline nowhere
                # else (a line holds no newline, and no other line is named N).
                data = self._data
                head = f"\n{name} = ".encode()
                value = data.find(head, marks[at >> _MARK_SHIFT]) + len(head)
                return data[value : data.find(b"\n", value)].decode().strip()
        return self._value(name, at)

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def _value(self, name: str, at: int) -> str:
        """The value of `name`, defined by line `at`, when the table is not in memory or
        not yet indexed."""
        found = self._found.get(name)
        if found is not None:
            return found
        if self._read is not None:  # the lines are in the file
            offsets = self._offsets
            assert offsets is not None
            text = self._bytes(offsets[at] + at + 1, offsets[at + 1] + at + 1)
            return text[text.find(b" = ") + 3 :].decode().strip()
        if len(self._found) >= _INDEX_AFTER_LOOKUPS:
            # Where every few lines start, then `get` finds each line from the mark before
            # it.
            self._mark()
            return self[name]
        # Until the index is made; past it, a lookup is cheap and a large file read in
        # spans looks up most of its aliases: kept, they would hold the table twice.
        data = self._data
        equals = self._bisect(self._numbers[at])
        value = data[equals + 3 : data.find(b"\n", equals)].decode().strip()
        self._found[name] = value
        return value

    def _bisect(self, number: int) -> int:
        """Where ` = ` is in the line defining #loc<number>, found by bisecting byte
        positions."""
        data = self._data
        low, high = self._start, self._end
        while low < high:
            middle = (low + high) // 2
            line = data.rfind(b"\n", self._start - 1, middle) + 1
            equals = data.find(b" = ", line)
            digits = data[line + 4 : equals]
            at = int(digits) if digits else -1
            if at == number:
                return equals
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
