"""The sniffer's verdict on NUL bytes: read as text up to one byte in a hundred (a dump a
crash damaged), binary past it; text with no MLIR signal says whether it held NULs."""

from __future__ import annotations

import pytest

from sc_mlir.read.discover import sniff

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
