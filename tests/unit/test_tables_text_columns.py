"""A text-aligned table in one column of a page does not take the neighbouring column's text.

Where a page sets a table in one of its text columns (or on one page of a two-page spread printed
on one sheet), the other column's lines share the table rows' bands, and the text finder read them
as the table's first or last column, or stacked them into its header. Each page here is built with
PyMuPDF: running text in both columns, then a table under the text of one column while the other
column's text goes on beside it (a paragraph, then a list of short answers at the rows' pitch, as a
questionnaire sets them). On main the table came out with the other column's paragraph as its last
column, or not at all (the area, prose and table together, was rejected). Guards: a table across
both columns under a space, whose gap between two columns lies on the page's gutter, stays whole;
a table under a caption of five words at its stub, with text across the page above, keeps its stub.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402

_PROSE = (
    "legal aid providers coordinate appointments of private practitioners and supervise the staff who take "
    "cases in courts of first instance across every region of the country while the ministry keeps the "
    "register of practitioners and publishes its annual report on caseloads"
).split()
_GROUPS = [
    "Persons with disabilities",
    "Children",
    "Women",
    "The elderly",
    "Migrants",
    "Refugees",
    "Minorities",
]
_PITCH = 12.0


def _paragraph(page: pymupdf.Page, x: float, y: float, width: float, lines: int, start: int) -> float:
    """``lines`` lines of running text filling ``width`` from (x, y); the y after it."""
    k = start
    for i in range(lines):
        words: list[str] = []
        while pymupdf.get_text_length(" ".join([*words, _PROSE[k % len(_PROSE)]]), fontsize=9) <= width:
            words.append(_PROSE[k % len(_PROSE)])
            k += 1
        if i == lines - 1:
            words = words[: len(words) // 2]
        page.insert_text((x, y), " ".join(words), fontsize=9)
        y += _PITCH
    return y


def _right(page: pymupdf.Page, x: float, y: float, text: str) -> None:
    page.insert_text((x - pymupdf.get_text_length(text, fontsize=9), y), text, fontsize=9)


def _table(page: pymupdf.Page, x: float, width: float, y: float) -> float:
    """A stub of group names and two columns of figures set right, under a two-word head."""
    _right(page, x + width - 70, y, "Funded")
    _right(page, x + width, y, "Private")
    y += 18
    for k, name in enumerate(_GROUPS):
        page.insert_text((x + 8, y), name, fontsize=9)
        _right(page, x + width - 70, y, str(100 + 37 * k))
        _right(page, x + width, y, str(905 - 61 * k))
        y += 18
    return y


def _page_with_table_beside_text(
    gutter: float, table_left: bool, opens_beside: bool = False
) -> pymupdf.Document:
    """Two text columns ``gutter`` apart; one column's text ends in a table while the other's runs
    on beside it: paragraphs, the last one's lines beside the table's head, then a list of short
    options at the table rows' pitch (a questionnaire's question and its answers). With
    ``opens_beside`` the other column's last paragraph opens beside the table's head, under a
    short question a paragraph's space above (no line of prose above it to go on from)."""
    doc = pymupdf.open()
    width = 2 * 300 + gutter if gutter > 100 else 612
    page = doc.new_page(width=width, height=792)
    col = (width - 120 - gutter) / 2
    xs = (60.0, 60 + col + gutter)
    text_x, table_x = (xs[1], xs[0]) if table_left else xs
    y, k = 60.0, 0
    while y < 400:  # the table's column: text, then the table
        y = _paragraph(page, table_x, y, col, 3 + k % 3, 11 * k + 3) + 14
        k += 1
    head = y + 10
    _table(page, table_x, col, head)
    y, k = 60.0, 0
    while y < (head - 60 if opens_beside else 470):  # the text column: paragraphs of two to five lines
        y = _paragraph(page, text_x, y, col, 2 + k % 4, 7 * k) + 14
        k += 1
    if opens_beside:  # a short question, then its paragraph opening beside the table's head
        page.insert_text((text_x, head - 14), "Which groups are served?", fontsize=9)
        y = _paragraph(page, text_x, head, col, 3, 5)
    else:
        y = _paragraph(page, text_x, y, col, 3, 5)
    for option in ("Yes, at the national level", "Yes, at regional level", "Yes, at the local level", "No"):
        page.insert_text((text_x + 18, y + 6), option, fontsize=9)
        y += 18
    return doc


def _tables(doc: pymupdf.Document) -> list:
    return extract_tables(doc, TI.pages_of(doc), TableSettings())


@pytest.mark.parametrize(
    ("gutter", "table_left", "opens_beside"),
    [
        (252.0, False, False),
        (24.0, False, False),
        (24.0, True, False),
        (252.0, True, True),
        (24.0, True, True),
    ],
    ids=[
        "spread-right-page",
        "two-columns-right",
        "two-columns-left",
        "spread-left-page-paragraph-opens-beside",
        "two-columns-left-paragraph-opens-beside",
    ],
)
def test_a_table_in_one_column_keeps_out_the_other_columns_text(
    gutter: float, table_left: bool, opens_beside: bool
) -> None:
    """One table, within its column, its stub the group names and no word of the running text.
    Fails on main: the other column's paragraph lines are the table's first (or last) column."""
    doc = _page_with_table_beside_text(gutter, table_left, opens_beside)
    tables = _tables(doc)
    assert len(tables) == 1, [t.grid() for t in tables]
    grid = tables[0].grid()
    page_mid = doc[0].rect.width / 2
    x0, _, x1, _ = tables[0].bbox
    assert (x1 <= page_mid) if table_left else (x0 >= page_mid), (tables[0].bbox, grid)
    assert len(grid[0]) == 3, grid
    assert [row[0] for row in grid[1:]] == _GROUPS, grid
    assert [row[1:] for row in grid[1:]] == [[str(100 + 37 * k), str(905 - 61 * k)] for k in range(7)]
    text = " ".join(c or "" for row in grid for c in row)
    assert not any(w in text.split() for w in ("practitioners", "ministry", "register")), grid


def _full_width_table_page() -> pymupdf.Document:
    """Two text columns, then, after a space, a table across both whose gap between its second and
    third columns lies on the page's gutter, then two columns of text again after a space."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    col = (612 - 120 - 24) / 2
    ys = [_paragraph(page, x, 72.0, col, 8, 5 * k) for k, x in enumerate((60.0, 60 + col + 24))]
    y = max(ys) + 30
    page.insert_text((60, y), "Region", fontsize=9)
    for x, head in ((250, "Cases"), (340, "Lawyers"), (430, "Clinics"), (552, "Budget")):
        _right(page, x, y, head)
    y += 18
    for k, name in enumerate(_GROUPS):
        page.insert_text((60, y), name, fontsize=9)
        for j, x in enumerate((250, 340, 430, 552)):
            _right(page, x, y, str(120 + 53 * k + 7 * j))
        y += 18
    y += 30
    for k, x in enumerate((60.0, 60 + col + 24)):
        _paragraph(page, x, y, col, 6, 3 * k)
    return doc


def test_a_table_across_both_columns_stays_whole() -> None:
    """Guard: a full-width table under a space reaches over the page's gutter by right; one table,
    five columns."""
    tables = _tables(_full_width_table_page())
    assert len(tables) == 1, [t.grid() for t in tables]
    grid = tables[0].grid()
    assert grid[0] == ["Region", "Cases", "Lawyers", "Clinics", "Budget"], grid
    assert [row[0] for row in grid[1:]] == _GROUPS


def _captioned_table_page() -> pymupdf.Document:
    """One column of text across the page, then a table whose caption, five words at the stub's
    left edge and shorter than the gap to the figures, sits a line's pitch over its first row."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = _paragraph(page, 60.0, 72.0, 492, 6, 0) + 20
    page.insert_text((60, y), "Cases closed by group, 2024", fontsize=9)
    y += _PITCH
    for k, name in enumerate(_GROUPS):
        page.insert_text((60, y), name, fontsize=9)
        _right(page, 420, y, str(100 + 37 * k))
        _right(page, 520, y, str(905 - 61 * k))
        y += 14
    _paragraph(page, 60.0, y + 20, 492, 5, 9)
    return doc


def test_a_caption_over_the_stub_keeps_the_table_whole() -> None:
    """Guard: a caption line of one side over a table's stub reads like the stub's paragraph
    above, but no column of text stands beside it (the page's text runs across): one table, the
    stub and its figures together."""
    tables = _tables(_captioned_table_page())
    assert len(tables) == 1, [t.grid() for t in tables]
    grid = tables[0].grid()
    assert [row[0] for row in grid if row[0] in _GROUPS] == _GROUPS, grid
    assert all(len(row) == 3 for row in grid), grid


def _wrapped_stub_page() -> pymupdf.Document:
    """One column of text across the page, then a table whose first stub wraps over two long lines
    at a line's pitch (a paragraph's look), figures on its first line."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = _paragraph(page, 60.0, 72.0, 492, 6, 0) + 20
    _right(page, 420, y, "Funded")
    _right(page, 520, y, "Private")
    y += 18
    stubs = [
        (
            "Persons with disabilities who live in residential",
            "care homes or in other institutions of the state",
        ),
        *((name, "") for name in _GROUPS[1:]),
    ]
    for k, (first, second) in enumerate(stubs):
        page.insert_text((60, y), first, fontsize=9)
        _right(page, 420, y, str(100 + 37 * k))
        _right(page, 520, y, str(905 - 61 * k))
        if second:
            y += _PITCH
            page.insert_text((60, y), second, fontsize=9)
        y += 18
    _paragraph(page, 60.0, y + 20, 492, 5, 9)
    return doc


def test_a_stub_wrapped_like_a_paragraph_stays_with_its_figures() -> None:
    """Guard: a stub wrapped over two long lines reads like a paragraph opening in the area, but
    no column of text stands beside the table (the page's text runs across): one table."""
    tables = _tables(_wrapped_stub_page())
    assert len(tables) == 1, [t.grid() for t in tables]
    grid = tables[0].grid()
    assert all(len(row) == 3 for row in grid), grid
    assert [row[0] for row in grid if row[0] in _GROUPS[1:]] == _GROUPS[1:], grid
    assert grid[1][1:] == ["100", "905"], grid
