"""The text-fidelity bench's normal form and metrics (bench/text_fidelity.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import text_fidelity as T  # noqa: E402


def test_normal_form_strips_markdown_and_joins_line_break_hyphens() -> None:
    md = "# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- item"
    assert T.normal(md, markdown=True, dehyphenate=False) == "Title a b 1 2 item"
    # get_text's line-break hyphen before lower case goes; before upper case it stays
    assert T.normal("exam-\nple and Self-\nLocking", markdown=False, dehyphenate=True) == (
        "example and Self- Locking"
    )


def test_recall_precision_and_order() -> None:
    ref = T.words("the quick brown fox jumps over the lazy dog")
    assert T.compare(ref, ref) == {"recall": 1.0, "precision": 1.0, "order": 1.0}
    lost = T.compare(ref, T.words("the quick brown fox jumps over the dog"))
    assert lost["recall"] == 8 / 9 and lost["precision"] == 1.0
    doubled = T.compare(ref, ref + T.words("lazy dog"))
    assert doubled["recall"] == 1.0 and doubled["precision"] == 9 / 11
    swapped = T.compare(ref, T.words("over the lazy dog the quick brown fox jumps"))
    assert swapped["recall"] == 1.0 and 0 < swapped["order"] < 1.0


def test_similarity_page_by_page_past_the_limit() -> None:
    pages = ["abc def", "ghi jkl"]
    assert T.similarity(pages, pages, whole_limit=3) == 1.0
    assert T.similarity(["abcd"], ["abcx"], whole_limit=100) == 0.75
    assert T.similarity(["abcd", "efgh"], ["abcx", "efgh"], whole_limit=3) == 1 - 1 / 8


def test_classes() -> None:
    base = {"sim": 1.0, "recall": 1.0, "precision": 1.0, "order": 1.0, "lost": {}, "dup": 0, "new": 0}
    assert T.classify(base) == ""
    assert T.classify({**base, "recall": 0.8, "lost": {"furniture": 9, "other": 1}}) == "lost(furniture)"
    assert T.classify({**base, "precision": 0.5, "dup": 10, "new": 1}) == "dup"
    assert T.classify({**base, "order": 0.5}) == "order"
    assert T.classify({**base, "sim": 0.5}) == "format"
