"""Ruled tables whose rows are ruled by their column rules alone (issue 37): a securities report's
history (Japanese EDINET filings, HTML exported with cell borders on the sides) draws each column
rule one segment a row, end to end, and no rule between rows. The line finder joins the segments
into one rule and read the whole body as one row; the joints now imply the row rules
(``tables.grid._joint_rules``). Rules and text placed by hand."""

from __future__ import annotations

import pymupdf
import pytest

from dagster_ocr.model import Page
from dagster_ocr.tables import TableSettings, extract_tables

XS = [60.0, 160.0, 500.0]
EVENTS = [
    ("1933-09", ["Automobile department opened inside the loom works"]),
    ("1935-11", ["First truck sold"]),
    ("1936-09", ["First passenger car sold"]),
    (
        "1937-08",
        ["The motor company split off from the loom works and", "incorporated with a capital of 12 million"],
    ),
    ("1940-03", ["Steel works founded"]),
    ("1941-05", ["Machine works founded to make precision machine tools"]),
    ("1943-11", ["Spinning company absorbed"]),
    ("1945-08", ["Body works founded", "as a subsidiary"]),
    ("1946-04", ["Auto body company founded"]),
]


def _history(
    color: tuple[float, float, float] = (0, 0, 0), shade: bool = False, through: float | None = None
) -> pymupdf.Document:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    top, pitch = 80.0, 12.0
    y = top
    shape = page.new_shape()
    bands = [(y, y + 15.0)]
    y += 15.0
    for _, lines in EVENTS:
        bands.append((y, y + pitch * len(lines)))
        y += pitch * len(lines)
    for y0, y1 in bands:
        if shade:
            shape.draw_rect(pymupdf.Rect(XS[1], y0, XS[2], y1))
            shape.finish(fill=(0.85, 0.85, 0.85), color=None)
        for x in XS:  # the column rules, one segment a row
            shape.draw_line((x, y0), (x, y1))
            shape.finish(color=color, width=0.7)
    if through is not None:  # a rule drawn whole from the top to the bottom
        shape.draw_line((through, top), (through, y))
        shape.finish(color=(0, 0, 0), width=0.7)
    for yy in (top, top + 15.0, y):  # the frame: top, under the heads, bottom
        shape.draw_line((XS[0], yy), (XS[-1], yy))
        shape.finish(color=(0, 0, 0), width=0.7)
    shape.commit()
    page.insert_text((XS[0] + 4, top + 11), "Date", fontsize=9)
    page.insert_text((XS[1] + 4, top + 11), "Event", fontsize=9)
    for (y0, _), (date, lines) in zip(bands[1:], EVENTS, strict=True):
        page.insert_text((XS[0] + 4, y0 + 9), date, fontsize=9)
        for k, line in enumerate(lines):
            page.insert_text((XS[1] + 4, y0 + 9 + pitch * k), line, fontsize=9)
    return doc


def _pages(doc: pymupdf.Document) -> list[Page]:
    return [Page(index=pg.number, width=pg.rect.width, height=pg.rect.height) for pg in doc]


def test_column_rules_jointed_at_each_row_rule_the_rows() -> None:
    doc = _history()
    tables = extract_tables(doc, _pages(doc), TableSettings())
    assert len(tables) == 1
    grid = tables[0].grid()
    assert grid[0] == ["Date", "Event"]
    assert grid[1:] == [[date, " ".join(lines)] for date, lines in EVENTS]


@pytest.mark.parametrize("shade", [False, True])
def test_white_strokes_between_shaded_cells_imply_no_rows(shade: bool, monkeypatch) -> None:
    """White column strokes (seen only against a fill) joint at every row too: no rule is implied,
    the tables are those read without implied rules."""
    from dagster_ocr.tables import grid

    doc = _history(color=(1, 1, 1), shade=shade)
    got = [t.grid() for t in extract_tables(doc, _pages(doc), TableSettings())]
    assert got != [[["Date", "Event"], *[[d, " ".join(ls)] for d, ls in EVENTS]]]
    monkeypatch.setattr(grid, "_joint_rules", lambda *a, **k: [])
    assert got == [t.grid() for t in extract_tables(doc, _pages(doc), TableSettings())]


def test_a_rule_running_through_the_rows_implies_none(monkeypatch) -> None:
    """A column rule drawn whole inside the frame, beside rules jointed at each row: the joints are
    a column group's, in a table whose rows are not ruled (tabula-py's 12s0324, a check item,
    read 0.858 -> 0.740 cell F1 before this clause); no rule is implied."""
    from dagster_ocr.tables import grid

    doc = _history(through=400.0)
    got = [t.grid() for t in extract_tables(doc, _pages(doc), TableSettings())]
    monkeypatch.setattr(grid, "_joint_rules", lambda *a, **k: [])
    assert got == [t.grid() for t in extract_tables(doc, _pages(doc), TableSettings())]
