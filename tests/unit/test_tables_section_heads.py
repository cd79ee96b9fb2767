"""Statements whose period heads stand over one or two label lines before the first row of figures
(tests/support/table_pages.py ``sectioned_heads_statement``, issue 37): "September 28, 2024" |
"September 30, 2023" over "ASSETS:" over "Current assets:", as Apple's balance sheet prints them.
The heads are the table's header row, one per period column; the label lines are body rows, the
label in the stub, wherever it is set (at the margin or centred over the table)."""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import make_case
from support.table_parts import norm_grid as _norm_grid
from support.table_parts import part_of_rows as _part
from support.table_parts import table_of_rows

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.model import Cell, Table  # noqa: E402
from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.areas import _label_under_heads  # noqa: E402
from dagster_ocr.tables.rows import _own_header  # noqa: E402
from dagster_ocr.tables.statement import fold_symbol_columns  # noqa: E402
from dagster_ocr.tables.words import _TextLine, _Word  # noqa: E402


# tune seeds, each a form (all read no header row before: the heads were the columns' context and
# the label lines were left above the table): 1 a group's label at the margin over the first
# section's, years under a period head; 29 the same, the group's label running on under the heads
# ("Liabilities and shareholders' equity:"), dates stacked under "Nine months ended"; 2 one group
# label centred over the table in place of the section's (it ran over the figure columns: a row
# spanning them, and the "$" columns were not folded); 12 a group label centred over the table
# under the years and another over a later section; 0 the same under dates stacked over years (the
# table broke at the later group's label: the centred heads covered the gutters of the "$" columns);
# 28 a group label centred over the table ("ASSETS", starting under the first period head) over a
# section's label, apart from the heads (the table began at its first figures, its header lost); from
# a fresh tune draw (seeds 1500-2999): 2758 a later group's label, then a section's label set out left
# of the stub's rows by two characters (the table ended there), 2278 "$" set at its column's left on
# a section's first row, the label's last word past the stub's edge (the sign read as the label's);
# from a fifth (6000-7499): 6028 a group's label of one short word ("Assets:") centred over a
# statement in Courier, ending before the first year head (read as the stub's label, it held a column
# of its own that cut a long label at a word space, and the "$" columns were not folded)
@pytest.mark.parametrize("seed", [0, 1, 2, 12, 28, 29, 2278, 2758, 6028])
def test_period_heads_over_label_lines_are_the_header_row(seed: int) -> None:
    case = make_case(seed, "sectioned_heads_statement")
    doc = pymupdf.open("pdf", case.pdf)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    truth = case.tables[0]
    assert table.header_rows == 1
    assert _norm_grid(table.grid()) == _norm_grid(truth.merged)


@pytest.mark.parametrize(
    ("seed", "cls"),
    [
        # a centred group label over a section's label, mid-table, then a row opening with "$"
        # signs set apart: those signs are no cells of their own, the row resumes the table
        (148, "sectioned_heads_statement"),
        # a section's label of five words reaching over the figure columns' gutters, mid-table:
        # a row of figures in the table's columns follows it, so it is no note under the grid
        (147, "stacked_statement"),
    ],
)
def test_a_section_label_mid_statement_does_not_cut_it_in_two(seed: int, cls: str) -> None:
    case = make_case(seed, cls)
    doc = pymupdf.open("pdf", case.pdf)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert _norm_grid(table.grid()) == _norm_grid(case.tables[0].merged)


def test_a_label_alone_across_the_figure_columns_folds_into_the_stub() -> None:
    """A group label centred over a statement, its cell spanning the figure columns from the middle
    of the table, is the row's label: the "$" columns still fold into their figures."""
    rows = [
        ["", "", "2024", "", "2023"],
        ["", "LIABILITIES AND EQUITY:", None, None, None],  # set from the stub's gutter on
        ["Cash", "$", "12", "$", "9"],
        ["Inventory", "", "4", "", "7"],
    ]
    cells = [
        Cell(row=r, col=c, text=t, page_index=0, col_span=4 if c == 1 and r == 1 else 1, is_header=r == 0)
        for r, row in enumerate(rows)
        for c, t in enumerate(row)
        if t
    ]
    table = Table(
        table_id="t0",
        bbox=(50.0, 100.0, 500.0, 400.0),
        first_page_index=0,
        last_page_index=0,
        n_rows=4,
        n_cols=5,
        cells=cells,
        header_rows=1,
    )
    fold_symbol_columns(table)
    assert table.grid() == [
        ["", "2024", "2023"],
        ["LIABILITIES AND EQUITY:", "", ""],
        ["Cash", "$ 12", "$ 9"],
        ["Inventory", "4", "7"],
    ]


def test_a_long_label_cut_into_the_sign_column_goes_back_to_the_stub() -> None:
    """A row label longer than the others runs past the gutter between the stub and the "$"
    column, and its last word was that column's cell (generated ``sectioned_heads_statement``,
    tune seed 386: no "$" of the table folded, adjacency F1 0.60): the word goes back to its label,
    a label set over the sign column alone moves to the stub, and the signs fold. A column of words
    beside the signs (fewer signs than words) is a column of its own."""

    spilled = table_of_rows(
        [
            ["", "", "2024", "", "2023"],
            ["", "Investing:", "", "", ""],
            ["Business combinations", "$", "(40)", "$", "12"],
            ["Purchases of marketable", "securities", "226", "", "—"],
            ["Total", "$", "186", "$", "12"],
        ],
        1,
    )
    assert fold_symbol_columns(spilled).grid() == [
        ["", "2024", "2023"],
        ["Investing:", "", ""],
        ["Business combinations", "$ (40)", "$ 12"],
        ["Purchases of marketable securities", "226", "—"],
        ["Total", "$ 186", "$ 12"],
    ]
    words = table_of_rows(
        [["", "", "2024"], ["Cash", "$", "4"], ["Notes", "held", "5"], ["Debt", "due", "6"]], 1
    )
    assert fold_symbol_columns(words).n_cols == 3


def test_a_statement_under_other_periods_on_the_next_page_is_another_table() -> None:
    """Apple's balance sheet (two dates heading its grid) and, on the next page, its statement of
    shareholders' equity (three dates, the first two the same): the years in the header rows differ,
    so the next statement does not continue the balance sheet. A continuation repeating the same
    dates still does."""
    s = TableSettings()
    heads = [["", "September 28,", "September 30,"], ["", "2024", "2023"]]
    a = _part([*heads, ["ASSETS:", "", ""], ["Cash", "$ 29,943", "$ 29,965"]], 2)
    other = _part(
        [
            ["", "September 28,", "September 30,", "September 24,"],
            ["", "2024", "2023", "2022"],
            ["Beginning balances", "$ 62,146", "$ 50,672", "$ 63,090"],
        ],
        2,
    )
    assert _own_header(a, other, s)
    repeated = _part([*heads, ["Term debt", "85,750", "95,281"]], 2)
    assert not _own_header(a, repeated, s)


def _line(*chunks: tuple[float, str], y: float) -> _TextLine:
    """A text line of chunks, each (its left x, its words 30 pt apart)."""
    parts = [
        [_Word(x + 30 * i, y, x + 30 * i + 26, y + 10, t) for i, t in enumerate(text.split())]
        for x, text in chunks
    ]
    return _TextLine([w for ch in parts for w in ch], parts)


def test_a_label_centred_under_a_line_of_periods_is_a_group_label() -> None:
    periods = [_line((200, "2017"), (280, "2016"), (360, "2015"), y=0)]
    # "ASSETS" centred over the whole table starts under the first period: below a line of periods,
    # which ends a statement's heads, a group's label
    assert _label_under_heads(_line((210, "ASSETS"), y=20), periods, 10.0) == "over"
    # the units under the periods are the table's, no row label
    assert _label_under_heads(_line((205, "(In millions)"), y=20), periods, 10.0) is None
    # under heads that are no periods, a line starting under them is a head's lower line
    heads = [_line((200, "total"), (280, "Rodent seen"), (360, "Leaks"), y=0)]
    assert _label_under_heads(_line((205, "occupied"), y=12), heads, 10.0) is None
