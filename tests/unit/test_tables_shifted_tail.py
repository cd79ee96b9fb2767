"""A long table whose last pages change their column layout on pages that do not line up (issue 37,
seventh session): mirrored margins set odd pages further right, or each page's columns are fitted to
its own rows. It stays one table with its header once.

Documents from tests/support/table_pages.py (``UNSEEN``: ``shifted_tail``), seeded; the pass rate over
many seeds is bench/tables_synthetic.py's ``--classes shifted_tail``.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import make_case

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.words import _norm  # noqa: E402


def _cells(grid: list[list[str]]) -> Counter[str]:
    return Counter(_norm(x).replace(" ", "") for row in grid for x in row if x and x.strip())


@pytest.mark.parametrize(
    ("seed", "tags"),
    [
        (5, ["header", "no_repeat", "totals", "mirror"]),  # the header's page set left, the next right
        (27, ["header", "repeat", "wide", "mirror"]),  # a wider last column on a page set right
        (7, ["ruled", "repeat", "totals", "refit"]),  # a totals page whose columns are narrower
        (79, ["none", "repeat", "totals", "mirror"]),  # a totals page set left, under its header
    ],
)
def test_a_table_over_pages_that_do_not_line_up_is_one_table(seed: int, tags: list[str]) -> None:
    case = make_case(seed, "shifted_tail")
    assert case.tags == tags  # the generator still draws the variant this seed stands for
    doc = pymupdf.open("pdf", case.pdf)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    (truth,) = case.tables
    assert [t.pages for t in tables] == [truth.pages]
    (table,) = tables
    assert table.merge_kind == "rows" and table.n_cols == len(truth.merged[0])
    got, want = _cells(table.grid()), _cells(truth.merged)
    tp = sum((got & want).values())
    assert 2 * tp / (sum(got.values()) + sum(want.values())) >= 0.95
    header = _cells(truth.merged[:1])
    assert all(got[k] <= want[k] for k in header), "header repeated inside the table"
