"""A ruled table with no rule down its outer sides keeps its first and last columns (issue 37).

Rules between the columns and across every row, the row rules running on over the first and last
columns, no side drawn (a LaTeX ``{l|r|r}`` tabular with ``\\hline``, a spreadsheet's inner borders).
The line finder makes cells only between two vertical rules; PyMuPDF gives such a grid the box of its
joined rules as a border when that box holds text, but asked the characters' PDF-space y whether they
lie in a page-space box, so the border came only where the text's mirror image across the page's
middle fell inside: elsewhere the first and last columns were left out, their words read as text.

Documents from tests/support/table_pages.py (``UNSEEN``: ``open_ruled``), tune seeds; the pass rate
over many seeds is bench/tables_synthetic.py's ``--classes open_ruled``.
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
    return Counter(_norm(x) for row in grid for x in row if x and x.strip())


def _tables(pdf: bytes):
    doc = pymupdf.open("pdf", pdf)
    return extract_tables(doc, TI.pages_of(doc), TableSettings())


@pytest.mark.parametrize("seed", [2])
def test_generated_open_sided_grid_keeps_its_outer_columns(seed: int) -> None:
    case = make_case(seed, "open_ruled")
    (truth,) = case.tables
    (table,) = _tables(case.pdf)
    assert table.strategy == "lines"
    assert table.n_cols == len(truth.merged[0])
    assert _cells(table.grid()) == _cells(truth.merged)


@pytest.mark.parametrize("top", [80.0, 380.0, 600.0])
def test_open_sided_grid_anywhere_on_the_page(top: float) -> None:
    """Four columns, rules only between them and across the rows: all four, wherever it sits (at
    ``top`` = 380 on an 842-point page, across the middle, the old test found the border by chance)."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    xs = [60.0, 170.0, 260.0, 350.0, 440.0]  # the outer two are where the row rules end
    rows = [["Name", "Year", "Count", "Note"]] + [[f"Site {k}", "2024", str(10 + k), "ok"] for k in range(5)]
    h = 16.0
    for r in range(len(rows) + 1):
        page.draw_line((xs[0], top + r * h), (xs[-1], top + r * h), width=0.5)
    for x in xs[1:-1]:
        page.draw_line((x, top), (x, top + h * len(rows)), width=0.5)
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            page.insert_text((xs[c] + 4, top + r * h + 12), text, fontsize=9)
    (table,) = _tables(doc.tobytes())
    assert table.strategy == "lines"
    assert table.grid() == rows
