"""Unit tests of table extraction and cross-page merging on tiny PDFs drawn with PyMuPDF."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from pydantic import ValidationError

from dagster_ocr.model import Page, TextSource
from dagster_ocr.samples import SAMPLE_FACTS, write_samples
from dagster_ocr.tables import TableSettings, extract_tables

# The classic ruling-line finder is exact and fast on drawn grids; the merge logic does not
# depend on which finder produced the parts.
LINES = TableSettings(finder="lines")
HEADER = ["Region", "Year", "Value"]
COLS = [60.0, 200.0, 330.0, 460.0]
LOREM = "This paragraph of ordinary body text separates the two tables and is long enough to read as prose."


def _table(page: pymupdf.Page, y0: float, rows: list[list[str]], row_h: float = 20.0) -> float:
    """Draw a ruled grid with one text per cell; returns the bottom y."""
    y1 = y0 + row_h * len(rows)
    for i in range(len(rows) + 1):
        page.draw_line((COLS[0], y0 + i * row_h), (COLS[-1], y0 + i * row_h))
    for x in COLS:
        page.draw_line((x, y0), (x, y1))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            page.insert_text((COLS[c] + 4, y0 + r * row_h + 14), text, fontsize=10)
    return y1


def _pages(doc: pymupdf.Document) -> list[Page]:
    out = []
    for i in range(doc.page_count):
        pg = doc[i]
        out.append(Page(index=i, width=pg.rect.width, height=pg.rect.height))
    return out


def _continued_doc() -> pymupdf.Document:
    doc = pymupdf.open()
    p1 = doc.new_page(width=595, height=842)
    p1.insert_text((60, 80), LOREM, fontsize=9)
    p1.insert_text((60, 120), "Table 1. Measurements by region", fontsize=10)
    body1 = [[f"R{i}", str(2000 + i), str(i * 10)] for i in range(30)]
    _table(p1, 130, [HEADER, *body1])  # ends at y=750: near the page bottom
    p1.insert_text((60, 770), "See notes at end of table.", fontsize=8)
    p1.insert_text((290, 820), "1", fontsize=9)
    p2 = doc.new_page(width=595, height=842)
    p2.insert_text((60, 60), "Table 1. Measurements by region (continued)", fontsize=10)
    body2 = [[f"S{i}", str(2100 + i), str(i * 7)] for i in range(5)]
    bottom = _table(p2, 70, [HEADER, *body2])
    p2.insert_text((60, bottom + 30), LOREM, fontsize=9)
    p2.insert_text((290, 820), "2", fontsize=9)
    return doc


def test_continued_table_is_merged_with_header_once() -> None:
    doc = _continued_doc()
    tables = extract_tables(doc, _pages(doc), LINES)
    assert len(tables) == 1
    t = tables[0]
    assert (t.table_id, t.first_page_index, t.last_page_index, t.pages) == ("t0", 0, 1, [0, 1])
    assert t.merge_kind == "rows" and t.n_cols == 3
    assert t.n_rows == 1 + 30 + 5  # the repeated header on page 2 is dropped
    grid = t.grid()
    assert grid[0] == HEADER
    assert sum(1 for row in grid if row == HEADER) == 1
    assert grid[1] == ["R0", "2000", "0"] and grid[30] == ["R29", "2029", "290"]
    assert grid[31] == ["S0", "2100", "0"] and grid[-1] == ["S4", "2104", "28"]
    rows_page = {c.row: c.page_index for c in t.cells}
    assert rows_page[30] == 0 and rows_page[31] == 1
    assert [p for p, _ in t.regions] == [0, 1]
    assert t.header_rows == 1
    assert all(c.is_header == (c.row == 0) for c in t.cells)
    assert t.caption.startswith("Table 1. Measurements")
    assert t.strategy == "lines"


def test_same_header_separated_by_body_text_is_not_merged() -> None:
    doc = pymupdf.open()
    p1 = doc.new_page(width=595, height=842)
    bottom = _table(p1, 80, [HEADER, ["A", "2001", "1"], ["B", "2002", "2"]])
    for k in range(12):  # a full paragraph after the table, to the bottom of the page
        p1.insert_text((60, bottom + 30 + 14 * k), LOREM, fontsize=9)
    p2 = doc.new_page(width=595, height=842)
    for k in range(6):
        p2.insert_text((60, 70 + 14 * k), LOREM, fontsize=9)
    _table(p2, 180, [HEADER, ["C", "2003", "3"], ["D", "2004", "4"]])
    tables = extract_tables(doc, _pages(doc), LINES)
    assert [(t.table_id, t.pages, t.merge_kind) for t in tables] == [("t0", [0], ""), ("t1", [1], "")]
    assert tables[0].grid()[0] == HEADER and tables[1].grid()[0] == HEADER


def test_different_column_layout_is_not_merged() -> None:
    doc = _continued_doc()
    pages = _pages(doc)
    strict = TableSettings(finder="lines", col_tolerance=0.0)
    assert len(extract_tables(doc, pages, strict)) == 1  # identical grids still match exactly
    assert len(extract_tables(doc, pages, TableSettings(finder="lines", merge=False))) == 2


def test_ocr_pages_are_skipped() -> None:
    doc = _continued_doc()
    pages = _pages(doc)
    pages[1].text_source = TextSource.OCR
    tables = extract_tables(doc, pages, LINES)
    assert len(tables) == 1 and tables[0].pages == [0] and tables[0].n_rows == 31


def test_settings_reject_unknown_keys() -> None:
    with pytest.raises(ValidationError):
        TableSettings(finder="lines", bogus=1)  # type: ignore[call-arg]


# --- text-alignment ("stream") finder: tables without ruling lines -------------------------------

STREAM_COLS = [60.0, 250.0, 360.0, 470.0]  # left edge of each printed column


def _borderless(page: pymupdf.Page, y0: float, rows: list[list[str]], pitch: float = 14.0) -> float:
    """Print rows of cells at fixed column positions, no rules at all; returns the bottom y."""
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            if text:
                page.insert_text((STREAM_COLS[c], y0 + r * pitch), text, fontsize=9)
    return y0 + len(rows) * pitch


def test_borderless_table_with_stacked_header() -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), LOREM, fontsize=9)
    body = [[f"District {i}", str(100 + i), f"{i * 3}.5", f"{i}%"] for i in range(8)]
    # a two-line header: the lines stack into one header row (ICDAR's convention for wrapped headers)
    _borderless(page, 130, [["", "Counts", "", "Percent"], ["Area", "Pupils", "Ratio", "Share"], *body])
    page.insert_text((60, 300), LOREM, fontsize=9)
    tables = extract_tables(doc, _pages(doc))
    assert len(tables) == 1
    t = tables[0]
    assert t.strategy == "stream" and t.n_cols == 4 and t.n_rows == 9
    grid = t.grid()
    assert grid[0] == ["Area", "Counts Pupils", "Ratio", "Percent Share"]
    assert grid[1] == ["District 0", "100", "0.5", "0%"] and grid[-1] == ["District 7", "107", "21.5", "7%"]
    assert t.header_rows == 1
    assert all(c.is_header == (c.row == 0) for c in t.cells)
    assert not any(c.suspicious for c in t.cells)


def test_two_column_prose_and_bullets_are_not_tables() -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    words = LOREM.split()
    for k in range(20):  # two columns of running text
        page.insert_text((60, 80 + 12 * k), " ".join(words[k % 5 : k % 5 + 7]), fontsize=9)
        page.insert_text((320, 80 + 12 * k), " ".join(words[(k + 2) % 6 : (k + 2) % 6 + 7]), fontsize=9)
    for k in range(4):
        page.insert_text((60, 400 + 14 * k), "•", fontsize=9)
        page.insert_text((90, 400 + 14 * k), f"item number {k}", fontsize=9)
    assert extract_tables(doc, _pages(doc)) == []


def test_borderless_table_continued_on_next_page_is_merged() -> None:
    doc = pymupdf.open()
    head = ["Region", "Pupils", "Ratio", "Share"]
    p1 = doc.new_page(width=595, height=842)
    p1.insert_text((60, 80), LOREM, fontsize=9)
    p1.insert_text((60, 110), "Table 2. Pupils by region", fontsize=10)
    _borderless(p1, 130, [head, *[[f"North {i}", str(200 + i), f"{i}.25", f"{i}%"] for i in range(45)]])
    p1.insert_text((290, 820), "1", fontsize=9)
    p2 = doc.new_page(width=595, height=842)
    p2.insert_text((60, 60), "Table 2. Pupils by region (continued)", fontsize=10)
    bottom = _borderless(
        p2, 80, [head, *[[f"South {i}", str(300 + i), f"{i}.75", f"{i}%"] for i in range(6)]]
    )
    p2.insert_text((60, bottom + 30), LOREM, fontsize=9)
    tables = extract_tables(doc, _pages(doc))
    assert len(tables) == 1
    t = tables[0]
    assert t.pages == [0, 1] and t.merge_kind == "rows" and t.n_rows == 1 + 45 + 6
    grid = t.grid()
    assert sum(1 for row in grid if row == head) == 1
    assert grid[45] == ["North 44", "244", "44.25", "44%"] and grid[46] == ["South 0", "300", "0.75", "0%"]


def test_sample_contract_table_merges_with_default_finder(tmp_path: Path) -> None:
    write_samples(tmp_path)
    doc = pymupdf.open(tmp_path / SAMPLE_FACTS["file_name"])
    facts = SAMPLE_FACTS["table"]
    tables = [t for t in extract_tables(doc, _pages(doc)) if t.caption.startswith("Table 1")]
    assert len(tables) == 1
    t = tables[0]
    assert t.pages == facts["pages"] and t.n_cols == facts["n_cols"] and t.n_rows == facts["n_rows_merged"]
    grid = t.grid()
    assert grid[0] == facts["header"] and grid[1] == facts["first_row"] and grid[-1] == facts["last_row"]
    assert t.caption == facts["caption"]
