"""JSON and CSV name the same field the same way: every CSV column of `analyze`, `allocas`
and `diff` is a field of the matching JSON object (or `crossing_<field>` of its crossing),
and holds the same value. Read from the command's two outputs, as a user would."""

from __future__ import annotations

import csv
import io
import json

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from sc_mlir.cli import app

runner = CliRunner()


def output(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def as_cell(value: object) -> str:
    """A JSON value as the CSV writer prints it (a list: how many it holds)."""
    if value is None:
        return ""
    if isinstance(value, list):
        return str(len(value))
    return str(value)


def json_field_of(column: str, row: dict[str, object]) -> tuple[bool, object]:
    if column in row:
        return True, row[column]
    crossing = row.get("crossing")
    prefix = "crossing_"
    if column.startswith(prefix) and "crossing" in row:
        field = column.removeprefix(prefix)
        if crossing is None:
            return True, None
        assert isinstance(crossing, dict)
        return field in crossing, crossing.get(field)
    return False, None


def test_analyze_csv_columns_are_json_fields_with_the_same_values() -> None:
    spaces = json.loads(output("analyze", "--example", "--format", "json"))["spaces"]
    rows = csv_rows(output("analyze", "--example", "--format", "csv"))
    assert len(rows) == len(spaces) > 0
    assert any(s["crossing"] is not None for s in spaces)  # the crossing fields are seen
    for row, space in zip(rows, spaces, strict=True):
        for column, cell in row.items():
            found, value = json_field_of(column, space)
            assert found, f"CSV column {column!r} has no JSON field of that name"
            if column == "percent_of_bound" and cell:
                assert round(float(cell), 2) == value  # JSON rounds to 2 places
            elif column == "crossing_dead_reserved_words" and value is None:
                assert cell == "0"  # CSV: nothing reserved when nothing crosses
            else:
                assert cell == as_cell(value), (column, cell, value)


def test_the_two_renamed_analyze_columns() -> None:
    header = output("analyze", "--example", "--format", "csv").splitlines()[0].split(",")
    assert "alignment_bytes" in header and "unsized_allocas" in header
    assert "align_bytes" not in header and "n_unsized" not in header


@pytest.mark.parametrize("command", [
    ("allocas", "--example"),
    ("diff", str(FIXTURES / "diff" / "limit_halved" / "before"),
     str(FIXTURES / "diff" / "limit_halved" / "after")),
])
def test_row_outputs_name_the_same_fields(command: tuple[str, ...]) -> None:
    data = json.loads(output(*command, "--format", "json"))
    rows = data["allocations"] if isinstance(data, dict) else data
    header = next(csv.reader(io.StringIO(output(*command, "--format", "csv"))))
    assert rows and list(rows[0]) == header
