"""Stream tables whose row labels wrap over an even number of lines with the row's figures centred
on the row (issue 37, "cells below tabula's on tables with wrapped row labels and empty cells"):
the figures' line falls between two of the label's lines, overlapping each by less than half a
line, so it bands as a line of its own. With one figure column of two or three filled per row,
every line of the table was one chunk and no table area was found at all (``wrapped_stub`` tune
seed 31 read no table); ``tables.areas._figures_set_midway`` reads such a line on the label's line
above it. And the first row's label, its figures on a lower line of it, was read into the header
(the stub's head "Item" with the label's first line, the rest of the label a row of its own): a
stub-only line under the header that reads on down to its figures opens the body."""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import make_case, print_rows

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.words import _norm  # noqa: E402


def _grids(doc: pymupdf.Document) -> list[list[list[str]]]:
    return [
        [[_norm(x) for x in r] for r in t.grid()]
        for t in extract_tables(doc, TI.pages_of(doc), TableSettings())
    ]


# tune seeds: 31 figures midway, one figure column filled per row (no table was found); 0, 21 and
# 26 the first row's label wrapped, its figures midway or on its last line (its first line went to
# the header), under a header rule (0, 26) or none (21)
@pytest.mark.parametrize(("seed", "where"), [(31, "middle"), (0, "middle"), (21, "middle"), (26, "bottom")])
def test_generated_tables_with_figures_below_a_label_first_line_read_as_printed(
    seed: int, where: str
) -> None:
    case = make_case(seed, "wrapped_stub")
    assert where in case.tags
    doc = pymupdf.open("pdf", case.pdf)
    assert _grids(doc) == [[[_norm(x) for x in r] for r in case.tables[0].merged]]


def _page(rows: list[list[str]]) -> pymupdf.Document:
    doc = pymupdf.open()
    print_rows(doc.new_page(), 80, rows, [60, 200, 280], pitch=12)
    return doc


def _midway_page() -> pymupdf.Document:
    """A header, then rows whose labels take two lines, the figures set half a line down from the
    label's first line (between its two lines), most rows filling one of the two figure columns."""
    doc = pymupdf.open()
    page = doc.new_page()
    pitch, size = 14.0, 9
    page.insert_text((60, 100), "Item", fontsize=size)
    page.insert_text((220, 100), "Budget", fontsize=size)
    page.insert_text((300, 100), "Actual", fontsize=size)
    rows = [
        ("Roads and", "bridges", "1,200", ""),
        ("Schools and", "libraries", "", "3,450"),
        ("Water and", "drainage", "870", ""),
        ("Parks and", "open spaces", "", "95"),
        ("Public", "transport", "2,310", "2,280"),
    ]
    y = 100 + 1.5 * pitch
    for first, second, budget, actual in rows:
        page.insert_text((60, y), first, fontsize=size)
        page.insert_text((60, y + pitch), second, fontsize=size)
        mid = y + pitch / 2
        if budget:
            page.insert_text(
                (255 - pymupdf.get_text_length(budget, fontsize=size), mid), budget, fontsize=size
            )
        if actual:
            page.insert_text(
                (335 - pymupdf.get_text_length(actual, fontsize=size), mid), actual, fontsize=size
            )
        y += 2 * pitch + 4
    return doc


def test_figures_set_between_a_two_line_label_read_with_the_label() -> None:
    want = [
        ["Item", "Budget", "Actual"],
        ["Roads and bridges", "1,200", ""],
        ["Schools and libraries", "", "3,450"],
        ["Water and drainage", "870", ""],
        ["Parks and open spaces", "", "95"],
        ["Public transport", "2,310", "2,280"],
    ]
    assert _grids(_midway_page()) == [[[_norm(x) for x in r] for r in want]]


def test_the_first_row_label_wrapped_down_to_its_figures_is_no_header_line() -> None:
    rows = [
        ["Item", "Budget", "Actual"],
        ["Roads, bridges and", "", ""],
        ["tunnels", "1,200", "1,150"],
        ["Schools", "3,450", "3,500"],
    ]
    assert _grids(_page(rows)) == [
        [[_norm(x) for x in r] for r in [rows[0], ["Roads, bridges and tunnels", "1,200", "1,150"], rows[3]]]
    ]


def test_a_stacked_stub_head_stays_in_the_header() -> None:
    """A stub head over two lines whose second line is followed by a row starting with a capital:
    the header keeps both lines."""
    rows = [
        ["Name of", "Budget", "Actual"],
        ["project", "", ""],
        ["Roads", "1,200", "1,150"],
        ["Schools", "3,450", "3,500"],
    ]
    assert _grids(_page(rows))[0][0] == [_norm(x) for x in ["Name of project", "Budget", "Actual"]]


def test_running_text_beside_a_figure_column_is_not_pulled_onto_a_line() -> None:
    """Only a line of figures moves: words set between two lines of a paragraph stay their own."""
    doc = pymupdf.open()
    page = doc.new_page()
    for k in range(6):
        page.insert_text((60, 100 + 14 * k), "The board expects costs to ease", fontsize=9)
    for k in range(5):
        page.insert_text((320, 107 + 14 * k), "margin note here", fontsize=9)
    assert _grids(doc) == []


# blank_cells tune seeds 14 and 15: under heads that leave the stub's head blank, the first row's
# label wraps down to its figures (14) or is a label alone over two lines (15); its second line
# (reading on, left of every head) ended the area, and the header and first row were lost
def test_the_first_row_label_wrapped_under_a_blank_stub_head_keeps_the_header() -> None:
    case = make_case(14, "blank_cells")
    doc = pymupdf.open("pdf", case.pdf)
    assert _grids(doc) == [[[_norm(x) for x in r] for r in case.tables[0].merged]]


# a seventh fresh tune draw (9000-10499): the first row's label wrapped over four or five lines, its
# figures beside the last, under a header that heads the stub too ("Name"): past three lines alone in
# the stub the area ended, and the header and the label's first lines went with it
@pytest.mark.parametrize("seed", [9075, 9345])
def test_the_first_row_label_wrapped_under_a_stub_head_keeps_the_header(seed: int) -> None:
    case = make_case(seed, "wrapped_stub")
    doc = pymupdf.open("pdf", case.pdf)
    assert _grids(doc) == [[[_norm(x) for x in r] for r in case.tables[0].merged]]


def test_a_first_row_of_a_label_alone_wrapped_under_a_blank_stub_head_keeps_the_header() -> None:
    case = make_case(15, "blank_cells")
    doc = pymupdf.open("pdf", case.pdf)
    want = [[_norm(x) for x in r] for r in case.tables[0].merged]
    # the group head over the first column ("Export service"), one chunk alone above the heads, is
    # not read (another mechanism); the heads, the label row and the body are
    assert _grids(doc) == [want[1:]]


def test_a_label_whose_rest_starts_with_a_bracket_stays_one_row_and_its_figures_are_read_once(
    corpus: Path, tmp_path: Path
) -> None:
    """us-023 (ICDAR, tune): "Mean Health and Activities Limitation Index" / "(HALex), ages 18-65 yrs"
    with the row's figures set midway. Taken into the label's first line, the figures ended the row
    there (its rest, starting with a bracket, does not read on in lower case) and, the line keeping
    the label's extent, fell outside the table's region and were read again as a paragraph."""
    from dagster_ocr.ingest import DocumentStore
    from dagster_ocr.pipeline import parse
    from dagster_ocr.settings import Settings

    pdf = corpus / "tables" / "icdar2013" / "us-023" / "us-023.pdf"
    store = DocumentStore(tmp_path / "store")
    parsed = parse(store.register(pdf)[0], Settings.load(None, {"text": {"ocr_mode": "never"}}))
    labels = [row[0] for t in parsed.tables for row in t.grid()]
    assert "Mean Health and Activities Limitation Index (HALex), ages 18–65 yrs" in labels
    assert "(HALex), ages 18–65 yrs" not in labels
    assert not [p.text for p in parsed.paragraphs.paragraphs if "0.0928" in p.text]
