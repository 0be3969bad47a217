"""Shared test helpers: where the read-only corpus is, and skipping when it is absent."""

from __future__ import annotations

import importlib.util
import os
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
SHARED = Path(os.environ.get("SC_MLIR_SHARED", REPO.parent / "shared"))
CORPUS = SHARED / "corpus"


@cache
def bench_generator() -> ModuleType:
    """`bench/generate.py`, the benchmark's dump generator (not a package module), loaded
    once for every test that writes dumps with it."""
    spec = importlib.util.spec_from_file_location("bench_generate", REPO / "bench" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def corpus_dir(name: str) -> Path:
    """A folder of ../shared/corpus, or skip the test with the reason."""
    path = CORPUS / name
    if not path.is_dir():
        pytest.skip(f"{path} is absent (the shared corpus is read-only and optional)")
    return path


@pytest.fixture
def mosaic() -> Path:
    return corpus_dir("mosaic")


@pytest.fixture
def upstream() -> Path:
    return corpus_dir("upstream")
