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


# Digits past which a figure prints a count in scientific notation: a label has room for a
# few dozen characters, and a dump may declare 10^270 words.
_FIGURE_DIGITS = 15


def num_short(value: int, signed: bool = False) -> str:
    """`num` for a figure's labels: a count of more than 15 digits as three significant
    digits and a power of ten (rounded half up); `signed`: a `+` before a positive count.

    >>> num_short(131071), num_short(10**270), num_short(-(2 * 10**20) - 5 * 10**17)
    ('131,071', '1.00e270', '-2.01e20')
    >>> num_short(999_5 * 10**20), num_short(7, signed=True)
    ('1.00e24', '+7')
    """
    digits = str(abs(value))
    if len(digits) <= _FIGURE_DIGITS:
        return f"{value:+,}" if signed else f"{value:,}"
    power = len(digits) - 1
    scale = 10 ** (power - 2)
    mantissa, rest = divmod(abs(value), scale)  # three digits, then what they leave
    if 2 * rest >= scale:
        mantissa += 1
    if mantissa == 1000:  # 9.995e20 rounds to 1.00e21
        mantissa, power = 100, power + 1
    sign = "-" if value < 0 else ("+" if signed else "")
    return f"{sign}{mantissa // 100}.{mantissa % 100:02d}e{power}"
