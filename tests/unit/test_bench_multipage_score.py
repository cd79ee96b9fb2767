"""bench/tables_synthetic.py's multi-page score reads each page's rows where they stand: a page
joined one column off (its figures under the labels) is wrong however many cells match."""

from __future__ import annotations

import sys
from pathlib import Path

from support.table_pages import Case, TruthTable

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_synthetic as TS  # noqa: E402

from dagster_ocr.model import Cell, Table  # noqa: E402

HEAD = ["Item", "2024", "2023"]
PAGE0 = [HEAD] + [[f"Label {i}", f"{i},100", f"{i},200"] for i in range(20)]
PAGE1 = [HEAD] + [[f"Label {i}", f"{i},100", f"{i},200"] for i in range(20, 24)]


def _table(page1_rows: list[list[str]]) -> Table:
    cells, r = [], 0
    for page, rows in ((0, PAGE0), (1, page1_rows)):
        for row in rows:
            cells += [Cell(r, c, text, page) for c, text in enumerate(row)]
            r += 1
    return Table("t0", 0, 1, r, 3, cells, (0, 0, 1, 1), header_rows=1, pages=[0, 1])


def _case() -> Case:
    merged = PAGE0 + PAGE1[1:]
    truth = TruthTable(pages=[0, 1], grids={0: PAGE0, 1: PAGE1}, merged=merged, kind="rows")
    return Case(seed=0, cls="label_tail", pdf=b"", n_pages=2, tables=[truth], tags=[])


def test_a_page_joined_one_column_off_is_wrong() -> None:
    right = _table(PAGE1[1:])
    assert TS.merge_right(_case(), [right]) == (True, "")
    shifted = _table([[f"{i},100", f"{i},200", ""] for i in range(20, 24)])  # labels lost, figures left
    ok, why = TS.merge_right(_case(), [shifted])
    assert not ok and why.startswith("page 1: rows F1")
