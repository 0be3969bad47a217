"""Helpers shared by the DataFrame views (`Dump.allocations`, `Analysis.spaces`...)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

_INT64 = (-(1 << 63), (1 << 63) - 1)


def nullable_integers(column: pd.Series) -> pd.Series:
    """Int64 (integers with missing values), unless a value does not fit in 64 bits
    (`memref<9223372036854775807x3xf32>`): then Python integers, exact, in an object column."""
    if all(v is None or _INT64[0] <= v <= _INT64[1] for v in column if isinstance(v, int)):
        return column.astype("Int64")
    return column.astype(object)


def frame_of(rows: Iterable[dict[str, object]], columns: Sequence[str],
             integer_columns: Iterable[str]) -> pd.DataFrame:
    """A DataFrame whose integer columns keep every value exact: built from Python objects
    (pandas would otherwise turn a column of integers and None into float64, which rounds
    above 2**53), then typed column by column."""
    import pandas as pd

    frame = pd.DataFrame(list(rows), columns=list(columns), dtype=object)
    integers = set(integer_columns)
    for column in integers:
        frame[column] = nullable_integers(frame[column])
    others = [c for c in frame.columns if c not in integers]
    frame[others] = frame[others].infer_objects()
    return frame
