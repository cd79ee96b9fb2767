"""Running text cut into columns by chance gaps is no table (tables/prose.py ``_sentences``), but a
right-to-left table of long descriptions is one: its figures stand in its first column from the
left, where a left-to-right list's numbers stand (issue 37)."""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
from support.table_pages import make_case

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402
import tables_synthetic as TS  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.cells import _Part  # noqa: E402
from dagster_ocr.tables.prose import _sentences  # noqa: E402

HEBREW = "שירות סכום ספק סוג שנה ספק הכנסה מספר כמות עיר"
ENGLISH = "the supplier delivers the services as agreed in the schedule"


def _part(rows: list[list[str]]) -> _Part:
    n = len(rows[0])
    edges = [float(100 * c) for c in range(n + 1)]
    return _Part(0, (0, 0, edges[-1], 100), rows, [[None] * n] * len(rows), edges, 0, "stream")


def test_a_list_s_numbers_at_the_line_start_leave_it_prose_in_either_direction() -> None:
    assert _sentences(_part([[f"{i}.", ENGLISH] for i in range(1, 5)]))
    assert _sentences(_part([[HEBREW, f"{i}."] for i in range(1, 5)]), rtl=True)


def test_figures_at_the_left_of_a_right_to_left_part_make_it_a_table() -> None:
    rows = [["17.8", HEBREW, "יתרה"], ["35,326", HEBREW, "מחיר"], ["95.5", HEBREW, "מוצר"]]
    assert _sentences(_part(rows))  # read left to right, the figures are a list's numbers
    assert not _sentences(_part(rows), rtl=True)


def test_a_right_to_left_table_of_long_descriptions_is_read() -> None:
    # a tune seed of the fourteenth fresh draw (19500-20999): a Hebrew table whose middle column
    # wraps sentences of eight words and more, its figures at the left; no table was read
    case = make_case(20434, "rtl_wrapped")
    doc = pymupdf.open("pdf", case.pdf)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert TS.shape_right(case, tables) == (True, "")
