"""A false or badly cut table never costs text, and what it holds is not kept twice.

Each test builds one class of layout (lines and cells by hand, or a page drawn with PyMuPDF) and
checks where its characters go (``conservation.account_text``): none lost, none duplicated.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf

from dagster_ocr.conservation import DocumentAccount, account_text
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.model import Cell, Line, Page, Span, Table
from dagster_ocr.paragraphs import ParagraphSettings, build_paragraphs
from dagster_ocr.pipeline import parse


def _table(rows: list[list[str]], bbox: tuple[float, float, float, float]) -> Table:
    cells = [Cell(r, c, text, 0) for r, row in enumerate(rows) for c, text in enumerate(row)]
    return Table("t0", 0, 0, len(rows), len(rows[0]), cells, bbox, regions=[(0, bbox)])


def test_a_word_two_lines_share_goes_to_the_table_once() -> None:
    """A chart read as a table holds "income" once, but two lines inside its region print it (an
    axis title and a legend entry). The first line's "income" is the cell's; the second's is
    not held any more and must stay body text, even after a word of the first line (one no cell
    holds) made the paragraph stage look across the cells."""
    texts = ["0.46", "Gini of income", "Household income", "dollars)", "51,000"]
    lines = [Line(t, (72.0, 100 + 14 * i, 300.0, 110 + 14 * i)) for i, t in enumerate(texts)]
    page = Page(0, 595.0, 842.0, lines)
    table = _table([["0.46 Gini", "income dollars)", "Household 51,000"]], (70, 98, 302, 180))
    result = build_paragraphs([page], [], [table], settings=ParagraphSettings())
    body = " ".join(p.text for p in result.paragraphs)
    assert body.split().count("income") == 1 and "of" in body.split()
    (account,) = account_text([page], result, [table])
    assert account.lost == 0 and account.unsourced == 0


def test_a_line_reaching_into_a_table_region_gives_the_table_only_the_words_inside() -> None:
    """A header runs on past the grid's last column rule: most of its line lies outside the
    region, but the table finder put the word inside ("TM") in the last column's cell. That word
    is the table's, the rest of the line ("M.U$S") body text; the body does not repeat "TM"."""
    spans = [
        Span("TM", (290.0, 100.0, 300.0, 108.0)),
        Span(" ", (300.0, 100.0, 305.0, 108.0)),
        Span("M.U$S", (305.0, 100.0, 330.0, 108.0)),
    ]
    lines = [
        Line("Year", (80.0, 100.0, 100.0, 108.0)),
        Line("TM M.U$S", (290.0, 100.0, 330.0, 108.0), spans),
        Line("2001", (80.0, 114.0, 100.0, 122.0)),
        Line("17", (290.0, 114.0, 300.0, 122.0)),
    ]
    page = Page(0, 595.0, 842.0, lines)
    table = _table([["Year", "TM"], ["2001", "17"]], (70, 98, 302, 126))
    result = build_paragraphs([page], [], [table], settings=ParagraphSettings())
    body = " ".join(p.text for p in result.paragraphs)
    assert body == "M.U$S"
    (account,) = account_text([page], result, [table])
    assert account.lost == 0 and account.unsourced == 0


def _grid(
    shape: pymupdf.Shape, page: pymupdf.Page, x: list[float], y0: float, rows: list[list[str]]
) -> float:
    """A ruled grid drawn into ``shape`` (not finished: the caller draws more into the same path)."""
    pitch = 14.0
    ys = [y0 + pitch * i for i in range(len(rows) + 1)]
    for yy in ys:
        shape.draw_line((x[0], yy), (x[-1], yy))
    for xx in x:
        shape.draw_line((xx, ys[0]), (xx, ys[-1]))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            page.insert_text((x[c] + 3, ys[r] + 10), text, fontsize=9)
    return ys[-1]


PROSE = [
    "The table above gives the yearly figures for each region and the one below the totals of",
    "all the alternative scenarios; the figures are averages over the whole period of the study",
    "and are rounded to the nearest unit, so a column may not add up to its printed total.",
]


def test_a_frame_drawn_around_two_tables_and_the_prose_between_takes_none_of_it(tmp_path: Path) -> None:
    """One drawing path holds the rules of two tables: the line finder's joined-box border then
    frames both and the prose between, and the last row of the first grid becomes one wide cell
    holding the prose (cut at the frame: the lines run on past it) and the second table again.
    That row is not the table's: the prose stays body text and nothing is there twice."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    xs = [120.0, 240.0, 330.0, 420.0, 475.0]
    shape = page.new_shape()
    first = [["Region", "2007", "2008", "2009"]] + [
        [f"Area {i}", *(str(1000 + 37 * i + k) for k in range(3))] for i in range(6)
    ]
    bottom = _grid(shape, page, xs, 150.0, first)
    for k, text in enumerate(PROSE):
        page.insert_text((90, bottom + 25 + 13 * k), text, fontsize=9)
    second = [
        ["Server class", "2007", "2008", "2009"],
        ["Mid-range", "4,921", "5,467", "6,152"],
        ["High-end", "76,295", "81,624", "86,849"],
    ]
    _grid(shape, page, xs, bottom + 25 + 13 * len(PROSE) + 20, second)
    shape.finish(color=(0, 0, 0), width=0.5)
    shape.commit()
    # body text further down: PyMuPDF's finder tests the joined box of the drawings for text with
    # the text's y flipped, so this is what makes that box a border around both tables
    for k, text in enumerate(PROSE):
        page.insert_text((90, 560 + 13 * k), text, fontsize=9)
    path = tmp_path / "framed.pdf"
    doc.save(path)
    src, _ = DocumentStore(tmp_path / "store").register(path)
    parsed = parse(src)
    cells = [c.text for t in parsed.tables for c in t.cells]
    assert not any("alternative scenarios" in text for text in cells)
    assert sorted(len(t.grid()) for t in parsed.tables) == [3, 7]
    body = " ".join(p.text for p in parsed.paragraphs.paragraphs)
    assert "the figures are averages over the whole period" in body
    total = DocumentAccount.of(account_text(parsed.document.pages, parsed.paragraphs, parsed.tables))
    assert total.counts["lost"] == 0 and total.unsourced == 0
