"""The heads of an MD&A comparison table's change columns (issue 37, a fresh tune draw, 4500-5999).

A comparison table prints the periods under one head ("Year Ended December 31,") and the change
columns ("$", "%") under heads of their own ("Increase (Decrease)" over "2024 vs. 2023", or
"2016 vs. 2015" over "Change"). Three ways these heads were lost, each seen on generated pages:

* a page of rows without a change yet: the heading search stopped at the last column holding a
  figure, and "(Decrease)", right of it, was cut off;
* "2016 vs. 2015" above the grid, one phrase, read as a head of every column (as "Years ended" over
  the years is), though it stands beside the years' own head, over the change columns only;
* "Years ended" over two years whose figures have "$" columns of their own: its words fall in a
  year's column and the next "$", no group of columns it is centred on, and it was cut in two
  heads, "Years" and "ended".
"""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import make_case

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402
import tables_synthetic as TS  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402


@pytest.mark.parametrize("seed", [4706, 5306, 5666])
def test_change_heads_are_read_whole_over_their_own_columns(seed: int) -> None:
    case = make_case(seed, "change_statement")
    doc = pymupdf.open("pdf", case.pdf)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert TS.shape_right(case, tables) == (True, "")


def test_a_head_beside_the_years_head_heads_only_the_columns_under_it() -> None:
    case = make_case(5966, "change_statement")
    doc = pymupdf.open("pdf", case.pdf)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    grid = TS._table_grid(table)
    assert grid[0][1:3] == ["Year Ended December 31, 2016", "Year Ended December 31, 2015"]
    assert grid[0][3].startswith("2016 vs. 2015") and grid[0][4].startswith("2016 vs. 2015")
