"""A page's running head or foot is no row of the table under it (tables/stream.py
``_without_running_lines``, issue 37).

"Annual statistical report 2025" at the left and "Page 39" at the right line up with a statement's
stub and last column: the statement began with that line, "Page 39" in its last column's head."""

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


def _tables(doc: pymupdf.Document):
    return extract_tables(doc, TI.pages_of(doc), TableSettings())


def test_a_running_head_with_its_page_number_is_no_row_of_the_statement_under_it() -> None:
    # a tune seed of the second fresh draw (1500-2999), left by its session
    case = make_case(2426, "change_statement")
    tables = _tables(pymupdf.open("pdf", case.pdf))
    assert TS.shape_right(case, tables) == (True, "")
    assert not any("Page 39" in c.text for c in tables[0].cells)


@pytest.mark.parametrize("head", ["Page 4", "4"])
def test_a_contents_page_keeps_its_first_entry(head: str) -> None:
    """Entries of a contents page end in page numbers too, but lie as close as rows do: the first
    line is kept where it is set at the rows' spacing, dropped where set apart as a running head."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    entries = ["Introduction", "Methods", "Results", "Discussion", "Appendix A", "Appendix B"]
    for i, entry in enumerate(entries):
        page.insert_text((72, 80 + 14 * i), entry, fontsize=10)
        page.insert_text((500, 80 + 14 * i), str(3 + 4 * i), fontsize=10)
    (table,) = _tables(doc)
    assert TS._table_grid(table)[0] == ["Introduction", "3"]
    # the same entries under a running head set apart: the head is no entry
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 50), "Annual report 2025", fontsize=10)  # within a table's section gap
    page.insert_text((500, 50), head, fontsize=10)
    for i, entry in enumerate(entries):
        page.insert_text((72, 80 + 14 * i), entry, fontsize=10)
        page.insert_text((500, 80 + 14 * i), str(3 + 4 * i), fontsize=10)
    (table,) = _tables(doc)
    assert TS._table_grid(table)[0] == ["Introduction", "3"]


def test_a_running_head_set_smaller_than_the_sideways_table_under_it_is_no_row() -> None:
    """Set apart by 1.3 of the table's line heights but 1.8 of its own (a tune seed of the fresh
    4500-5999 draw)."""
    case = make_case(4981, "sideways_text")
    (table,) = _tables(pymupdf.open("pdf", case.pdf))
    texts = [c.text for c in table.cells]
    assert "Page 40" not in texts and "Annual statistical report 2025" not in texts


def test_a_turned_pages_running_head_close_over_larger_prose_is_no_row() -> None:
    """A page set sideways whole, a table beside prose in a larger type: the running head is set
    apart by less than one and a half of its own height from the prose's taller line boxes, but by
    far more than the space between the lines under it (a tune seed of the seventh fresh draw,
    9000-10499: the table took the head as its first row, and so the prose beside as a fifth
    column, the head's page number in its top cell)."""
    case = make_case(9391, "sideways_text")
    tables = _tables(pymupdf.open("pdf", case.pdf))
    assert TS.shape_right(case, tables) == (True, "")
