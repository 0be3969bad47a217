"""Pallas kernels embedded in lowered JAX programs: find them without jax.

A program lowered for TPU (`lowered.as_text()`, StableHLO) or an XLA dump's HLO text
carries each Mosaic kernel as a `tpu_custom_call` whose `backend_config` is JSON, with the
kernel in `custom_call_config.body` as base64 MLIR bytecode. This module finds those calls
with a few regular expressions over the text (no MLIR parse of the program, no jax),
undoes the string escapes of either printer and decodes the base64. Turning the bytecode
into MLIR text needs jaxlib: see `sc_mlir.read.jaxbridge`.

>>> config = r'{\\22custom_call_config\\22: {\\22body\\22: \\22TUzvUg==\\22}}'
>>> call = 'stablehlo.custom_call @tpu_custom_call(%a)'
>>> text = f'{call} {{backend_config = "{config}", kernel_name = "k"}}'
>>> [(k.name, k.body, k.line) for k in find_kernels(text)]
[('k', b'ML\\xefR', 1)]
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from typing import Any

TARGET = "tpu_custom_call"
INSTALL_LINE = "pip install 'sc-mlir[jax]'"

# What a lowered program looks like in its first bytes: HLO text, or StableHLO/MHLO ops.
# Each is (literal, whether a word may not precede it, whether a word may not follow it):
# as `HloModule\b|\bstablehlo\.|\bmhlo\.|"tpu_custom_call"` reads, but found by literal
# searches (that pattern starts with no literal, so `re` tries every byte: 2 ms per head).
_PROGRAM_SIGNALS = ((b"HloModule", False, True), (b"stablehlo.", True, False),
                    (b"mhlo.", True, False), (b'"' + TARGET.encode() + b'"', False, False))
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# No leading \b: a pattern that starts with a literal lets `re` skip ahead by that literal
# through megabytes of base64; what precedes the match is checked by hand (_is_word_start).
_BACKEND_CONFIG = re.compile(r"backend_config\s*=\s*")
_KERNEL_NAME = re.compile(r'\bkernel_name\s*=\s*"((?:[^"\\]|\\.)*)"')
_MLIR_ESCAPE = re.compile(r"\\([0-9A-Fa-f]{2}|.)", re.S)
_C_ESCAPE = re.compile(r"\\([0-7]{1,3}|x[0-9A-Fa-f]{1,2}|.)", re.S)
_NAMED_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\"}


@dataclass(frozen=True)
class EmbeddedKernel:
    """One `tpu_custom_call`: where it is in the program and its decoded body."""

    line: int
    col: int
    name: str | None  # the call's kernel_name attribute (StableHLO prints it; HLO does not)
    body: bytes | None  # MLIR bytecode (or text), None when it could not be decoded
    config: dict[str, Any] = field(default_factory=dict)  # the backend_config, body left out
    problem: str | None = None  # why `body` is None

    @property
    def serialized(self) -> bool:
        """Whether the body went through `mosaic-serde` (jax writes format 1)."""
        custom = self.config.get("custom_call_config", {})
        return isinstance(custom, dict) and custom.get("serialization_format") == 1


def looks_like_program(head: bytes) -> bool:
    """Whether the first bytes of a file look like a lowered program (HLO or StableHLO).

    >>> looks_like_program(b"HloModule jit_f"), looks_like_program(b"func.func @k() {")
    (True, False)
    """
    for literal, word_start, word_end in _PROGRAM_SIGNALS:
        at = head.find(literal)
        while at >= 0:
            after = at + len(literal)
            if not ((word_start and at > 0 and head[at - 1] in _WORD_BYTES)
                    or (word_end and after < len(head) and head[after] in _WORD_BYTES)):
                return True
            at = head.find(literal, at + 1)
    return False


def is_hlo_text(text: str) -> bool:
    """HLO text (XLA's own printer) rather than MLIR: its escapes differ."""
    return text.lstrip().startswith("HloModule")


def find_kernels(text: str) -> list[EmbeddedKernel]:
    """Every `tpu_custom_call` in a program's text, in order, with its body decoded."""
    hlo = is_hlo_text(text)
    kernels: list[EmbeddedKernel] = []
    lines = _LineCounter(text)
    for match in _BACKEND_CONFIG.finditer(text):
        if not _is_word_start(text, match.start()):
            continue
        value_start = match.end()
        value = _config_value(text, value_start, hlo)
        line_start = text.rfind("\n", 0, match.start()) + 1
        where = (lines.line_of(match.start()), match.start() - line_start + 1)
        if value is None:
            line_end = _line_end(text, value_start)
            if TARGET in text[line_start:line_end]:
                kernels.append(EmbeddedKernel(*where, None, None, {},
                                              "its backend_config is not a string or JSON "
                                              "object that can be read"))
            continue
        config_text, value_end = value
        # The op's own text around the value: its target and kernel_name are there (before
        # the value in HLO and pretty StableHLO, after it in the generic form).
        line_end = _line_end(text, value_end)
        around = text[line_start:match.start()] + " " + text[value_end:line_end]
        if TARGET not in around:
            continue
        name_match = _KERNEL_NAME.search(around)
        name = _unescape_mlir(name_match.group(1)) if name_match else None
        kernels.append(_kernel(where, name, config_text))
    return kernels


def _is_word_start(text: str, at: int) -> bool:
    return at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_$.")


class _LineCounter:
    """Line numbers of increasing offsets, counting each newline once (a program may hold
    thousands of calls in a file of hundreds of MB)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0
        self.line = 1

    def line_of(self, at: int) -> int:
        if at < self.offset:  # not expected (offsets grow), but never wrong
            self.offset, self.line = 0, 1
        self.line += self.text.count("\n", self.offset, at)
        self.offset = at
        return self.line


def count_mentions(text: str) -> int:
    """How often the custom-call target is named as a call's target (`@tpu_custom_call` in
    StableHLO, `"tpu_custom_call"` in HLO): a call the reader could not pair with its
    config shows up as a difference with `find_kernels`. (Escaped quotes inside MLIR
    strings are `\\22`, and the bodies are base64: neither holds these spellings.)"""
    return len(_MENTION.findall(text))


_MENTION = re.compile(r"@" + TARGET + r"\b|\"" + TARGET + r"\"")


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _config_value(text: str, start: int, hlo: bool) -> tuple[str, int] | None:
    """The backend_config's JSON text (escapes undone) and where its value ends."""
    if text.startswith('"', start):
        end = _closing_quote(text, start + 1)
        if end < 0:
            return None
        raw = text[start + 1:end]
        return (_unescape_c(raw) if hlo else _unescape_mlir(raw)), end + 1
    if text.startswith("{", start) and hlo:
        # HLO prints a JSON backend_config bare; it may hold raw newlines.
        try:
            _, end = json.JSONDecoder().raw_decode(text, start)
        except ValueError:
            return None
        return text[start:end], end
    return None


def _closing_quote(text: str, at: int) -> int:
    """Where the string that starts at `at` ends (its closing quote), or -1. Found with
    str.find, quote by quote: a quote after an odd run of backslashes is escaped.

    >>> _closing_quote(r'ab\\"c\\\\"d', 0)  # a, b, \\, ", c, \\, \\, " (7), d
    7
    """
    while True:
        end = text.find('"', at)
        if end < 0:
            return -1
        backslashes = 0
        while end - 1 - backslashes >= at and text[end - 1 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return end
        at = end + 1


def _unescape_mlir(raw: str) -> str:
    r"""MLIR string escapes: `\XX` (two hex digits, a byte), `\\`, `\"`, `\n`, `\t`.

    >>> _unescape_mlir(r'{\22a\22: \22\C3\A9\22}')
    '{"a": "é"}'
    """
    if "\\" not in raw:
        return raw
    return _bytes_to_text(_MLIR_ESCAPE.sub(_mlir_escape, raw))


def _mlir_escape(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) == 2:
        return chr(int(code, 16))  # a byte, kept as a latin-1 char until decoded
    return _NAMED_ESCAPES.get(code, code)


def _unescape_c(raw: str) -> str:
    r"""C escapes as absl's CEscape writes them: `\"`, `\\`, `\n`, octal `\NNN`, `\xNN`.

    >>> _unescape_c(r'{\"a\": 1}\n')
    '{"a": 1}\n'
    """
    if "\\" not in raw:
        return raw
    return _bytes_to_text(_C_ESCAPE.sub(_c_escape, raw))


def _c_escape(match: re.Match[str]) -> str:
    code = match.group(1)
    if code[0] in "01234567":
        return chr(int(code, 8) & 0xFF)
    if code[0] == "x" and len(code) > 1:
        return chr(int(code[1:], 16))
    return _NAMED_ESCAPES.get(code, code)


def _bytes_to_text(latin: str) -> str:
    """Escaped bytes were kept as latin-1 chars; read the sequence as UTF-8. Text that was
    never escaped is already Unicode beyond latin-1 and is kept as it is."""
    try:
        return latin.encode("latin-1").decode("utf-8", errors="replace")
    except UnicodeEncodeError:
        return latin


def _kernel(where: tuple[int, int], name: str | None, config_text: str) -> EmbeddedKernel:
    line, col = where
    try:
        config = json.loads(config_text)
    except ValueError as exc:
        return EmbeddedKernel(line, col, name, None, {}, f"backend_config is not JSON ({exc})")
    custom = config.get("custom_call_config") if isinstance(config, dict) else None
    if not isinstance(custom, dict) or not isinstance(custom.get("body"), str):
        return EmbeddedKernel(line, col, name, None, config if isinstance(config, dict) else {},
                              "backend_config has no custom_call_config.body")
    encoded = custom.pop("body")
    try:
        body = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as exc:
        return EmbeddedKernel(line, col, name, None, config,
                              f"custom_call_config.body is not base64 ({exc})")
    return EmbeddedKernel(line, col, name, body, config)
