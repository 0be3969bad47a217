"""Shared test helpers: where the read-only corpus is, and skipping when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
SHARED = Path(os.environ.get("SC_MLIR_SHARED", REPO.parent / "shared"))
CORPUS = SHARED / "corpus"


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
