"""The sniffer's verdict on NUL bytes: read as text up to one byte in a hundred (a dump a
crash damaged), binary past it; text with no MLIR signal says whether it held NULs. The
head it is given is what one read of SNIFF_BYTES gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from sc_mlir.read import discover as discover_module
from sc_mlir.read.discover import SNIFF_BYTES, sniff

MLIR = b"module {\n" + b"// " + b"x" * 85 + b"\n}\n"  # 100 bytes


@pytest.mark.parametrize(("nuls", "verdict"), [
    (0, None), (1, None), (10, None), (11, "binary file (NUL bytes)")])
def test_nul_bytes_up_to_one_in_a_hundred_are_text(nuls, verdict):
    head = MLIR * 10  # 1,000 bytes
    head = head[:500] + b"\x00" * nuls + head[500 + nuls:]
    assert len(head) == 1000 and head.count(b"\x00") == nuls
    assert sniff(head) == verdict


@pytest.mark.parametrize(("head", "verdict"), [
    (b"hello\n" * 100, "no MLIR found in its first 256 KiB"),
    (b"hello\n" * 100 + b"\x00", "binary file (NUL bytes), no MLIR text in it")])
def test_text_without_mlir_says_whether_it_held_nuls(head, verdict):
    assert sniff(head) == verdict


def _one_read(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(SNIFF_BYTES)


@pytest.mark.parametrize("size", [0, 1, SNIFF_BYTES - 1, SNIFF_BYTES, SNIFF_BYTES + 1,
                                  3 * SNIFF_BYTES])
def test_a_head_is_what_one_read_of_sniff_bytes_gives(tmp_path, size):
    path = tmp_path / "dump.mlir"
    path.write_bytes(bytes(range(256)) * (size // 256) + b"x" * (size % 256))
    assert discover_module._read_head(str(path)) == _one_read(path)


def test_a_file_larger_than_its_size_said_is_read_on(tmp_path, monkeypatch):
    """A file that grew since its size was asked (or a /proc file, which says 0) is read
    on to SNIFF_BYTES, as one read would."""
    import os

    path = tmp_path / "dump.mlir"
    path.write_bytes(b"module {\n}\n" * 30_000)

    class Small:
        st_size = 100

    monkeypatch.setattr(discover_module.os, "fstat", lambda fd: Small())
    head = discover_module._read_head(str(path))
    monkeypatch.undo()
    assert len(head) == SNIFF_BYTES and head == _one_read(path)
    if os.path.exists("/proc/self/status"):
        assert os.stat("/proc/self/status").st_size == 0
        assert discover_module._read_head("/proc/self/status").startswith(b"Name:")


@pytest.mark.parametrize("head", [b"", b" ", b" \t\r\n\n", b"\n" * 1000, b"\x0b", b"\x0c\n",
                                  b"\n\n  x", b"x" + b" " * 100, b"\t\x00", b"\r\n\xa0",
                                  b" " * 70_000 + b"module {}"])
def test_an_empty_file_is_one_whose_head_strips_to_nothing(head):
    """`sniff` finds a byte other than spaces, tabs and line ends rather than stripping the
    head (a copy of it): the same verdict as the strip."""
    assert (sniff(head) == "empty file") == (not head.strip(b" \t\r\n"))


_HEADER = b"".join(b"// flag %d: --xla_sc_flag_%d=true\n" % (k, k) for k in range(9_000))


@pytest.mark.parametrize(("body", "reason"), [
    (MLIR, None),
    (b"\r\n  // an indented comment\r\n\n" + MLIR, None),
    (b"", "no MLIR found: only comments ({:,} bytes)"),
    (b"hello\n" * 100, "no MLIR found in the 256 KiB after its {:,} bytes of comments"),
    (b"\x01\x00" * 5_000, "binary file (NUL bytes)")])
@pytest.mark.parametrize("line_end", [b"\n", b"\r\n", b"\r"])
def test_a_comment_header_longer_than_the_first_look_is_looked_past(tmp_path, body, reason,
                                                                     line_end):
    # Before: a dump whose comments filled its first 256 KiB was skipped ("no MLIR found").
    assert len(_HEADER) > SNIFF_BYTES
    path = tmp_path / "headed.mlir"
    header = _HEADER.replace(b"\n", line_end)
    path.write_bytes(header + body.replace(b"\n", line_end))
    found, skipped = discover_module.discover(path)
    if reason is None:
        assert found == [str(path)] and skipped == []
    else:
        comments = len(header) + (len(body) if not body.strip() else 0)
        assert found == [] and [s.reason for s in skipped] == [reason.format(comments)]


def test_a_comment_line_longer_than_the_first_look_is_looked_past(tmp_path):
    path = tmp_path / "long_comment.mlir"
    path.write_bytes(b"// " + b"x" * (3 * SNIFF_BYTES) + b"\r" + MLIR)
    assert discover_module.discover(path) == ([str(path)], [])
    path.write_bytes(b"// " + b"x" * (3 * SNIFF_BYTES))
    [skipped] = discover_module.discover(path)[1]
    assert skipped.reason == f"no MLIR found: only comments ({3 * SNIFF_BYTES + 3:,} bytes)"


def test_a_dump_with_lone_cr_line_ends_that_starts_with_a_comment_is_mlir():
    # A lone CR ends a line for MLIR; before, `^` in the sniffer's pattern saw one line.
    head = (b"// a dump\n" + MLIR * 80).replace(b"\n", b"\r")
    assert sniff(head) is None
    assert sniff(b"// a note\rhello\r" * 50) == "no MLIR found in its first 256 KiB"
