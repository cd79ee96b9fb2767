"""Stream tables whose row labels wrap over an even number of lines with the row's figures centred
on the row (issue 37, "cells below tabula's on tables with wrapped row labels and empty cells"):
the figures' line falls between two of the label's lines, overlapping each by less than half a
line, so it bands as a line of its own. With one figure column of two or three filled per row,
every line of the table was one chunk and no table area was found at all (``wrapped_stub`` tune
seed 31 read no table); ``tables.areas._figures_set_midway`` reads such a line on the label's line
above it."""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
from support.table_pages import make_case

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.words import _norm  # noqa: E402


def _grids(doc: pymupdf.Document) -> list[list[list[str]]]:
    return [
        [[_norm(x) for x in r] for r in t.grid()]
        for t in extract_tables(doc, TI.pages_of(doc), TableSettings())
    ]


def test_generated_table_with_figures_midway_and_one_figure_per_row_is_found() -> None:
    case = make_case(31, "wrapped_stub")
    assert "middle" in case.tags
    doc = pymupdf.open("pdf", case.pdf)
    assert _grids(doc) == [[[_norm(x) for x in r] for r in case.tables[0].merged]]


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


def test_running_text_beside_a_figure_column_is_not_pulled_onto_a_line() -> None:
    """Only a line of figures moves: words set between two lines of a paragraph stay their own."""
    doc = pymupdf.open()
    page = doc.new_page()
    for k in range(6):
        page.insert_text((60, 100 + 14 * k), "The board expects costs to ease", fontsize=9)
    for k in range(5):
        page.insert_text((320, 107 + 14 * k), "margin note here", fontsize=9)
    assert _grids(doc) == []
