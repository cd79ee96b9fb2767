"""Shared fixtures: the real-PDF corpus and scratch folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _find_corpus() -> Path | None:
    candidates = [
        os.environ.get("DAGSTER_OCR_CORPUS"),
        REPO.parent / "shared" / "corpus",
        "/work/shared/corpus",
    ]
    for c in candidates:
        if c and (Path(c) / "MANIFEST.json").is_file():
            return Path(c)
    return None


CORPUS = _find_corpus()


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared corpus of real PDFs with ground truth (../shared/corpus)."""
    if CORPUS is None:
        pytest.skip("corpus not found: set DAGSTER_OCR_CORPUS to ../shared/corpus")
    return CORPUS
