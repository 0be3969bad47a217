"""How a count of words (or bytes) is printed, in every output meant for people."""

from __future__ import annotations

UNKNOWN = "?"  # a count nobody knows (an unknown bound, an unsized alloca)
ABSENT = "—"  # nothing on this side (before a pass, after a removal)


def num(value: int | None, missing: str = UNKNOWN) -> str:
    """A whole number with thousands commas; `missing` when there is none.

    >>> num(131071), num(None), num(None, ABSENT)
    ('131,071', '?', '—')
    """
    return missing if value is None else f"{value:,}"
