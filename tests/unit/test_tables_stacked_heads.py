"""Statements whose period heads are stacked over two lines, one head per figure column
(tests/support/table_pages.py ``stacked_statement``, issue 37): "December 31," over "2023", "Three
months ended" over "June 30, 2024", above columns that set "$" apart. The header is one row, each
column's lines joined top first, however the finder cut the lines before the "$" columns were
folded."""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import make_case
from support.table_parts import norm_grid as _norm_grid
from support.table_parts import table_of_rows

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.model import Table  # noqa: E402
from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.statement import merge_stacked_heads  # noqa: E402


# tune seeds, each a form: 0 "September 28," over the year, centred over "$" and figure, under a
# period head over all the columns (the columns' context); 2 the same set right, no period head;
# 4 "Nine months ended" over "September 28, 2019"; 9 "Year Ended" over the date, set right. Each
# read two header rows: the head over the "$" column spanned it and its figure's, the year did not.
# 8 two dates stacked over two columns (the heads and the first section label were left above the
# table); 3 and 24 "Year ended" over a date whose word space lay on the gutter right of the "$"
# column ("September" | "28, 2017": the header read as a row of figures, or the columns not folded);
# 175 a monospaced statement whose first head was cut the same way before its comma ("September" |
# "28,"): the day, read as a figure, made the header rows a row of data and no "$" column folded;
# 2097 (a fresh tune draw) the heads a line's pitch under the units line "(in millions, except per
# share data)", read as a paragraph the figure columns went on from (the labels were cut off);
# 18597 and 18927 (the thirteenth draw's end, read while the rule for a head stacked a line above
# the others was made: ``areas._heads_above``) "(in thousands)" and the statement's title centred
# on the first of three "Year Ended" heads in a monospaced font: units, and heads all alike, have
# no one column's head over them
@pytest.mark.parametrize("seed", [0, 2, 3, 4, 8, 9, 24, 175, 2097, 18597, 18927])
def test_a_period_head_stacked_over_two_lines_is_one_header_row(seed: int) -> None:
    case = make_case(seed, "stacked_statement")
    doc = pymupdf.open("pdf", case.pdf)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    truth = case.tables[0]
    assert table.header_rows == 1
    assert _norm_grid(table.grid()) == _norm_grid(truth.merged)


def _table(rows: list[list[str]]) -> Table:
    return table_of_rows(rows, 2)


def test_stacked_lines_of_a_period_join_per_column() -> None:
    table = merge_stacked_heads(
        _table([["", "December 31,", "December 31,"], ["", "2023", "2022"], ["Cash", "$ 12", "$ 9"]])
    )
    assert table.header_rows == 1 and table.n_rows == 2
    assert table.grid() == [["", "December 31, 2023", "December 31, 2022"], ["Cash", "$ 12", "$ 9"]]


@pytest.mark.parametrize(
    "heads",
    [
        [["", "Revenue", "Cost"], ["", "Q1", "Q2"]],  # heads of labels: no year under them
        [["", "December 31,", ""], ["", "2023", "2022"]],  # a line that does not fill the columns
        [["", "2023", "2022"], ["", "December 31,", "December 31,"]],  # a year above: no period read
    ],
)
def test_header_rows_that_are_no_stacked_period_keep_their_rows(heads: list[list[str]]) -> None:
    table = merge_stacked_heads(_table([*heads, ["Cash", "$ 12", "$ 9"]]))
    assert table.header_rows == 2 and table.n_rows == 3
