"""A false or badly cut table never costs text, and what it holds is not kept twice.

Each test builds one class of layout (lines and cells by hand, or a page drawn with PyMuPDF) and
checks where its characters go (``conservation.account_text``): none lost, none duplicated.
"""

from __future__ import annotations

from dagster_ocr.conservation import account_text
from dagster_ocr.model import Cell, Line, Page, Table
from dagster_ocr.paragraphs import build_paragraphs


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
    result = build_paragraphs([page], [], [table])
    body = " ".join(p.text for p in result.paragraphs)
    assert body.split().count("income") == 1 and "of" in body.split()
    (account,) = account_text([page], result, [table])
    assert account.lost == 0 and account.unsourced == 0
