"""A table's shape (issue 37): a sparse statistical table gets one column per printed column, not
one per position its figures sit at; a table cut into sections stays one table; two tables stacked
under their own headers stay two.

Documents from tests/support/table_pages.py (``SHAPE``), seeded tune cases that failed before the
rules; the pass rate over many seeds is bench/tables_synthetic.py's
``--classes sparse_stats,sectioned,two_stacked``.
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

from dagster_ocr.model import Page  # noqa: E402
from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.words import _norm  # noqa: E402


def _cells(grid: list[list[str]]) -> Counter[str]:
    return Counter(k for row in grid for x in row if (k := _norm(x)))


def _shape_right(seed: int, cls: str) -> None:
    """As many tables as drawn, top to bottom each with its column count and its cells."""
    case = make_case(seed, cls)
    doc = pymupdf.open("pdf", case.pdf)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert len(tables) == len(case.tables), [t.n_rows for t in tables]
    for t, truth in zip(tables, case.tables, strict=True):
        assert t.n_cols == len(truth.merged[0])
        got, want = _cells(t.grid()), _cells(truth.merged)
        assert 2 * sum((got & want).values()) / (sum(got.values()) + sum(want.values())) >= 0.95


@pytest.mark.parametrize("seed", [0, 15, 24, 36])
def test_a_sparse_statistical_table_has_one_column_per_printed_column(seed: int) -> None:
    """Placeholders centred where figures are set right, figures on a decimal point or centred
    under wider heads, a head's words across the gutter finder's cut, raised footnote marks."""
    _shape_right(seed, "sparse_stats")


@pytest.mark.parametrize(("seed", "cls"), [(14172, "sparse_stats"), (14748, "spaced_stats")])
def test_a_column_blank_on_every_row_keeps_its_head(seed: int, cls: str) -> None:
    """A tenth fresh tune draw (13500-14999): a statistical table leaves one column blank on every
    row ("Factory" over nothing between "Share service" and "Reserve total"; "Wholesale" last). The
    stretch between its neighbours is crossed by its head alone, so it read as one gutter and the
    head joined a neighbour's ("Share service Factory"): a head over nothing keeps a column of its
    own (``words._heads_over_nothing``)."""
    _shape_right(seed, cls)
    case = make_case(seed, cls)
    doc = pymupdf.open("pdf", case.pdf)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert [_norm(x) for x in table.grid()[0]] == [_norm(x) for x in case.tables[0].merged[0]]


# 2353 (a fresh tune draw): the first section's figures in one column, the next section's first row
# in two, under heads over four (the row was held to the first section's columns: a new table);
# 4573 (a fourth fresh tune draw): a section's first row under its label fills its cells with "x"
# only (suppressed, as Statistics Canada and the ONS print it), read as no data row: a new table
# 8263, 8623 (a sixth, 7500-8999): a last column holding one figure under its head, fewer lines
# than may cross a gutter: the stretch to the table's right edge read as no gutter, the column
# joined to the one before (``words._sparse_last``); 7513 the first section's label alone in the
# stub right under the heads, as the later sections' labels are set, read as the stub head's second
# line ("Age group Public sector"); 11533 (an eighth, 10500-11999): the first sections' figures in
# the first year's column only, "..." (a mark) in the one non-figure row: the head line of years
# was counted a row of figures and, one line, fell within the share allowed to cross a gutter, so
# the later section's first row, in the other years' columns, read as a new table; 10963 (the same
# draw): 7513's form with a sub-label under the first label ("Urban areas" over "Of which:")
@pytest.mark.parametrize("seed", [4, 13, 58, 67, 2353, 4573, 7513, 8263, 8623, 10963, 11533])
def test_a_table_cut_into_sections_is_one_table(seed: int) -> None:
    """Label rows (spanning from the stub, centred, in the stub) with space above, sub-headings,
    sections that fill fewer columns."""
    _shape_right(seed, "sectioned")


def test_section_labels_centred_inside_one_column_are_the_stubs() -> None:
    """A tenth fresh tune draw (13500-14999), ``sectioned`` 14293: section labels set centred over
    a table of years, short enough to fall inside the first year's column ("Manufacturing" over
    "893.07"), cross no gutter and were read as that column's cells (the first, "Full-time",
    joined the head "1996"). Centred over the table, over figures alone, they are the sections'
    labels (``areas._centred_in_a_column``); an address's line centred by chance over a column of
    text stays its cell (camelot's m27, unchanged). 13903 (the same draw): "Non-residents" under
    heads of words, over marks ("...") and figures, had joined the head "Housing annual"; its
    group head over the first column alone ("Quarter total", a line of its own above) is left."""
    for seed, first in ((14293, 0), (13903, 1)):
        case = make_case(seed, "sectioned")
        doc = pymupdf.open("pdf", case.pdf)
        (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
        want = [[_norm(x) for x in r] for r in case.tables[0].merged[first:]]
        assert [[_norm(x) for x in r] for r in table.grid()] == want


@pytest.mark.parametrize("seed", [11, 47, 50, 56, 734, 1964])
def test_two_tables_stacked_under_their_own_headers_stay_two(seed: int) -> None:
    """A second table under the first with only a little space between, its own header over three
    columns or more: two tables (47, 50, 56 were one), each with its columns (11); 734 (a 1,500-seed
    draw) a narrower table of three columns under one of six, a wider space between; 1964 (a fresh
    draw) a source note under the first, set like a paragraph's line, and a wide gutter before its
    sparse right columns: the note was read as a paragraph its left columns ran on into, and the
    table was cut in two there (the rows a table prints are no text a paragraph goes on from)."""
    _shape_right(seed, "two_stacked")


def _right(page: pymupdf.Page, x: float, y: float, text: str, bold: bool = False) -> None:
    """``text`` set flush right at ``x``."""
    font = "hebo" if bold else "helv"
    page.insert_text(
        (x - pymupdf.get_text_length(text, fontname=font, fontsize=9), y), text, fontname=font, fontsize=9
    )


def test_two_sparse_columns_with_their_own_heads_stay_two() -> None:
    """No row fills both "Male" and "Female", but each has a head of its own: two columns, where a
    head over both (one phrase) would have made them one."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 100), "Region", fontname="hebo", fontsize=9)
    for x, head in ((200, "Male"), (260, "Female"), (330, "Total")):
        _right(page, x, 100, head, bold=True)
    rows = [("North", "12.5", "", "40.1"), ("South", "", "3.4", "12.0"), ("East", "1,204.7", "", "9.9")]
    rows += [("West", "", "88.0", "7.5"), ("Centre", "0.4", "", "61.2"), ("Islands", "", "2.2", "3.3")]
    for k, (stub, a, b, c) in enumerate(rows):
        y = 116 + 14 * k
        page.insert_text((60, y), stub, fontname="helv", fontsize=9)
        for x, v in ((200, a), (260, b), (330, c)):
            if v:
                _right(page, x, y, v)
    (table,) = extract_tables(doc, [Page(index=0, width=595, height=842)], TableSettings())
    assert table.n_cols == 4
    assert table.grid()[0] == ["Region", "Male", "Female", "Total"]


def test_a_first_row_of_not_available_marks_is_a_data_row() -> None:
    """tune 1362: the body's first row holds ".." in each of its filled cells (a country with no
    figure that year); read as a header line it made the header two lines, "Sector Spain"."""
    _shape_right(1362, "sparse_stats")
    case = make_case(1362, "sparse_stats")
    doc = pymupdf.open("pdf", case.pdf)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    grid = table.grid()
    assert grid[table.header_rows - 1][0] == "Sector" and grid[table.header_rows][0] == "Spain"


# 6433 (a fifth fresh tune draw): section labels set centred over a table of four columns, under a
# filled stub head: each fell inside the second column and was read as its cell
@pytest.mark.parametrize("seed", [6433])
def test_a_section_label_centred_over_the_table_is_the_stubs_cell(seed: int) -> None:
    case = make_case(seed, "sectioned")
    doc = pymupdf.open("pdf", case.pdf)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    truth = case.tables[0].merged
    labels = [row[0] for row in truth if row[0] and not any(row[1:])]
    assert len(labels) >= 3
    grid = table.grid()
    for label in labels:
        (row,) = [r for r in grid if _norm(label) in {_norm(x) for x in r}]
        assert _norm(row[0]) == _norm(label) and not any(row[1:]), row


# a thirteenth fresh tune draw (18000-19499): ``sectioned`` 18763, two sections only, their labels
# centred over the table: the first, straight under the heads, is set as the one later label is
# and on no head ("Exports" between "Average" and "Channel factory"), so it is a label, not the
# head's lower line (one label alike is enough where the line is stacked on no head)
def test_a_first_section_label_set_as_the_only_other_one_and_on_no_head_is_a_label() -> None:
    case = make_case(18763, "sectioned")
    assert case.tags == ["rules", "centre", "right", "place:centre"]
    doc = pymupdf.open("pdf", case.pdf)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    (truth,) = case.tables
    assert [[_norm(x) for x in r] for r in table.grid()] == [[_norm(x) for x in r] for r in truth.merged]


# a twelfth fresh tune draw (16500-17249), each grid as drawn: ``sectioned`` 16813, section labels
# centred over a narrow table inside its first figures' column: the first, straight under the heads
# ("Part-time" under "Customer"), was read as the head's second line (it is set as the later labels
# are: ``areas._labels_set_alike``), and the section under "Imports", its first row a figure and a
# flag a space apart ("(0.6) r", not read as a figure), a second table; 16603, a fixed-pitch stub
# whose long labels cross the edge a section's label spanning the columns had held in place ("Margin
# average district 15.7": ``stream._stub_edge_past_labels``); ``two_stacked`` 16574, a note's
# superscript read into its figure after the bracket ("(20)1"): the first row read as a head line
@pytest.mark.parametrize(
    ("seed", "cls"), [(16813, "sectioned"), (16603, "sectioned"), (16574, "two_stacked")]
)
def test_a_twelfth_draw_reads_as_drawn(seed: int, cls: str) -> None:
    case = make_case(seed, cls)
    doc = pymupdf.open("pdf", case.pdf)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert len(tables) == len(case.tables)
    for table, truth in zip(tables, case.tables, strict=True):
        assert [[_norm(x) for x in r] for r in table.grid()] == [[_norm(x) for x in r] for r in truth.merged]


# the first section's label set in the stub straight under the stub's head ("Item" over
# "Full-time"), where the next section opens under a sub-label of its own ("Part-time" over "By
# size class"): the body held no label alone between two lines of figures, so the first label was
# read as the stub head's lower line. 21193 (the fifteenth fresh draw, 21000-22499), 19003 and
# 18013 (the fourteenth and thirteenth, left by their sessions)
@pytest.mark.parametrize("seed", [18013, 19003, 21193])
def test_a_first_section_label_under_the_stub_head_opens_the_body(seed: int) -> None:
    case = make_case(seed, "sectioned")
    doc = pymupdf.open("pdf", case.pdf)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    truth = case.tables[0].merged
    assert table.header_rows == case.tables[0].header_rows
    assert [[_norm(x) for x in r] for r in table.grid()] == [[_norm(x) for x in r] for r in truth]


def test_a_first_section_label_wrapped_over_two_lines_stays_out_of_the_head() -> None:
    # blank_cells 22366 (the fifteenth draw): the first label wraps ("Balance storage contract" over
    # "market county", which reads on) before its section's figures; a guard found reading the draw
    # again after the rule above first asked every sub-label to start a phrase
    case = make_case(22366, "blank_cells")
    doc = pymupdf.open("pdf", case.pdf)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    grid = [[_norm(x) for x in r] for r in table.grid()]
    assert table.header_rows == 2
    assert grid[1][0] == _norm("Region")
    assert grid[2] == [_norm("Balance storage contract market county"), "", "", "", ""]
