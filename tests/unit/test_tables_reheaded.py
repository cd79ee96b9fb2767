"""A table set out in sections, each under its column heads printed again (issue 37): an account
statement or register lists one group after another ("ELECT DEFERRAL", "ROLLOVER"), a blank line
and the same heads above each, running over pages. Each section was a table of its own, so the
table that runs over pages read as many (table-stitcher's retirement-portfolio fixture, tune: ten
tables for one). A section under the same heads, in the same columns, with only white space above
it, goes on with the table (``document._reheaded``); a title or a line of text between, or other
heads, still make two tables."""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.cells import _Part  # noqa: E402
from dagster_ocr.tables.rows import _header_repeat  # noqa: E402

HEADS = ["Contribution Type", "Investment Name", "Total"]
FUNDS = ["Amer Funds Amer Bal R6 Fd", "Fidelity 500 Index Fund", "Vanguard Mid Cap Index Adm Fd"]
GROUPS = ["ELECT DEFERRAL", "ER MATCH IN K PLAN MERGER", "ROLLOVER", "ROTH ELECT DEF", "ER MATCH"]


def _row(page: pymupdf.Page, y: float, cells: list[str], bold: bool = False) -> None:
    font = "hebo" if bold else "helv"
    page.insert_text((60, y), cells[0], fontsize=8, fontname=font)
    page.insert_text((200, y), cells[1], fontsize=8, fontname=font)
    right = 520 - pymupdf.get_text_length(cells[2], fontname=font, fontsize=8)
    page.insert_text((right, y), cells[2], fontsize=8, fontname=font)


def _statement(sections: int, between: str = "", other_heads: int = -1, per_page: int = 38) -> bytes:
    """``sections`` groups of four funds and a bold subtotal, each under ``HEADS`` (``other_heads``:
    that section under other heads), a blank line between them (``between``: a line of text there
    instead), ``per_page`` lines a page."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 70), "Totals Data for Plan 32677", fontsize=12, fontname="hebo")
    y, lines = 110.0, 0
    for k in range(sections):
        group = GROUPS[k % len(GROUPS)]
        block = [HEADS if k != other_heads else ["Source", "Fund", "Balance"]]
        block += [
            [group, fund, f"{(k + 1) * 1234.5 + i * 97.31:,.2f}"] for i, fund in enumerate(FUNDS + FUNDS[:1])
        ]
        block.append([group, "", f"${(k + 1) * 5300.27:,.2f}"])
        for i, cells in enumerate(block):
            if lines >= per_page:
                page = doc.new_page(width=595, height=842)
                y, lines = 70.0, 0
            _row(page, y, cells, bold=i in (0, len(block) - 1))
            y, lines = y + 13, lines + 1
        if between and k < sections - 1:  # a paragraph across the page between the sections
            box = pymupdf.Rect(60, y + 6, 520, y + 60)
            page.insert_textbox(box, between, fontsize=9, fontname="helv")
            y, lines = y + 56, lines + 4
        y, lines = y + 17, lines + 1
    return doc.tobytes()


def _tables(pdf: bytes) -> list[list[list[str]]]:
    doc = pymupdf.open("pdf", pdf)
    return [
        [[" ".join(c.split()) for c in row] for row in t.grid()]
        for t in extract_tables(doc, TI.pages_of(doc), TableSettings())
    ]


@pytest.mark.parametrize("sections", [3, 14])
def test_sections_under_their_heads_printed_again_are_one_table(sections: int) -> None:
    """Three sections on one page; fourteen over three pages, the first break inside a section,
    the second between two (the next page opens with the heads)."""
    grids = _tables(_statement(sections))
    assert len(grids) == 1, [g[:2] for g in grids]
    grid = grids[0]
    assert grid[0] == HEADS
    assert HEADS not in grid[1:]  # the heads printed again are no rows
    assert len(grid) == 1 + 5 * sections  # four funds and a subtotal a section
    assert grid[1] == ["ELECT DEFERRAL", "Amer Funds Amer Bal R6 Fd", "1,234.50"]
    last = GROUPS[(sections - 1) % len(GROUPS)]
    assert grid[-1] == [last, "", f"${sections * 5300.27:,.2f}"]


def test_text_between_two_sections_makes_two_tables() -> None:
    words = "Contributions received under the plan merger are shown apart from the deferrals above, "
    grids = _tables(_statement(2, between=words * 3))
    assert len(grids) == 2
    assert all(g[0] == HEADS for g in grids)


def test_a_section_under_other_heads_is_a_table_of_its_own() -> None:
    grids = _tables(_statement(3, other_heads=1))
    assert [g[0] for g in grids] == [HEADS, ["Source", "Fund", "Balance"], HEADS]


def _part(rows: list[list[str]], header_rows: int) -> _Part:
    edges = [60.0, 200.0, 400.0, 520.0]
    return _Part(
        0, (60.0, 100.0, 520.0, 200.0), rows, [[None] * 3 for _ in rows], edges, header_rows, "stream"
    )


def test_a_data_row_sharing_labels_with_a_row_above_is_no_repeated_header() -> None:
    """A continuation's first row names the group and the fund of a row of the page before, with
    its own figure: it is data, kept (Tesla's debt table lost its "2024 Notes" row so)."""
    first = _part([HEADS, ["ELECT DEFERRAL", FUNDS[2], "1,429.12"], ["ELECT DEFERRAL", "", "$5,300.27"]], 1)
    data = _part([["ELECT DEFERRAL", FUNDS[2], "7,601.62"], ["ELECT DEFERRAL", "", "$31,801.62"]], 0)
    assert _header_repeat(first, data, TableSettings()) == 0
    again = _part([HEADS, ["ROLLOVER", FUNDS[0], "9,876.00"]], 1)
    assert _header_repeat(first, again, TableSettings()) == 1
