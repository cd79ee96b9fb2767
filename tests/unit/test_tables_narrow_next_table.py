"""A narrow table at the top of the page after a long table stays a table of its own (issue 37).

A long table with a wide stub column ends its page short, nothing after it; the next page opens with
a table of two to four short columns (codes, small figures under short heads) that fits inside that
stub's width. Its columns all fall inside the long table's first column, so the column map of a
continuation (``rows._column_map``) put every one of them there: the narrow table was joined to the
long one as rows, each of its rows one cell ("4.2 VC 0.5"). A continuation's columns lie in several
of the columns they continue; a part that fits inside one column is another table.

Documents from tests/support/table_pages.py (``UNSEEN``: ``narrow_table_tail``, ``straddle_table_tail``),
tune seeds; the pass rate over many seeds is bench/tables_synthetic.py's ``--classes narrow_table_tail``
(and ``straddle_table_tail``).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import make_case
from support.table_parts import part_on_edges as _part

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.rows import _column_map  # noqa: E402
from dagster_ocr.tables.words import _norm, _text_lines, _Word  # noqa: E402


def _cells(grid: list[list[str]]) -> Counter[str]:
    return Counter(_norm(x) for row in grid for x in row if x and x.strip())


@pytest.mark.parametrize("seed", [0, 1, 4])
def test_a_narrow_table_after_a_long_one_stays_apart(seed: int) -> None:
    case = make_case(seed, "narrow_table_tail")
    doc = pymupdf.open("pdf", case.pdf)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert [t.pages for t in tables] == [t.pages for t in case.tables]
    narrow, truth = tables[-1], case.tables[-1].merged
    assert narrow.n_cols == len(truth[0])
    assert _cells(narrow.grid()) == _cells(truth)


@pytest.mark.parametrize("seed", [4, 12, 7913])
def test_a_short_table_across_the_stub_and_the_next_column_stays_apart(seed: int) -> None:
    """``straddle_table_tail``: the short table's columns lie across the long table's stub and the
    column beside it; mapped there its header sat beside none of the long table's figures. 7913 (a
    sixth fresh tune draw): as many columns as the long table, its last head over a column of
    figures; mapped, it filled that column with codes, no figure (``rows._words_under_figures``)."""
    case = make_case(seed, "straddle_table_tail")
    doc = pymupdf.open("pdf", case.pdf)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert [t.pages for t in tables] == [t.pages for t in case.tables]
    assert tables[-1].n_cols == len(case.tables[-1].merged[0])


# 6411, 6923 (a fifth fresh tune draw): the short table is set in Courier under a head of four
# short words ("supp   grp   code   lot") its columns space alike, read as a justified line of prose
# (one cell); its body of codes, no head word among them, then looked like display math: no table
@pytest.mark.parametrize(("seed", "cls"), [(6411, "narrow_table_tail"), (6923, "straddle_table_tail")])
def test_a_monospaced_head_spaced_evenly_heads_its_columns(seed: int, cls: str) -> None:
    case = make_case(seed, cls)
    doc = pymupdf.open("pdf", case.pdf)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert [t.pages for t in tables] == [t.pages for t in case.tables]
    short, truth = tables[-1], case.tables[-1].merged
    assert short.grid()[0] == truth[0]
    assert _cells(short.grid()) == _cells(truth)


def test_evenly_spaced_prose_over_a_table_stays_one_line() -> None:
    """A justified line of prose over a table keeps its words in one chunk: it has more words than
    the row under it has cells; the table's head line, as many heads as the row has cells, does not."""
    page = pymupdf.open().new_page()
    page.insert_text((60, 80), "the  plan  agreed  last  spring  was  late", fontname="cour", fontsize=9)
    xs = [60 + 5.4 * k for k in (0, 6, 11, 17)]  # "supp  grp  code  lot": two spaces apart
    for r, row in enumerate([["supp", "grp", "code", "lot"], ["A", "k2", "B", "VC"], ["M", "F", "x1", "OJ"]]):
        for x, text in zip(xs, row, strict=True):
            page.insert_text((x, 100 + 14 * r), text, fontname="cour", fontsize=9)
    words = [_Word(*w[:5]) for w in page.get_text("words")]
    lines = _text_lines(words, TableSettings().chunk_gap)
    assert [len(ln.chunks) for ln in lines] == [1, 4, 4, 4]


def _grid(page: pymupdf.Page, xs: list[float], top: float, rows: list[list[str]]) -> None:
    h = 16.0
    for r in range(len(rows) + 1):
        page.draw_line((xs[0], top + r * h), (xs[-1], top + r * h), width=0.5)
    for x in xs:
        page.draw_line((x, top), (x, top + h * len(rows)), width=0.5)
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            page.insert_text((xs[c] + 3, top + r * h + 12), text, fontsize=9)


def test_a_table_under_its_own_header_across_two_columns_stays_apart() -> None:
    """The next page's table opens with a header of its own over its own figures; its three columns
    fall in the first two of the table before, so mapped onto those its header ("supp dose") lies
    beside no figure of that table and the mapped part's first row looked like data."""
    doc = pymupdf.open()
    long = [["No.", "Name", "Q1", "Q2", "Q3"]] + [
        [str(k), f"Site {k}", f"{k}.1", f"{k}.2", f"{k}.3"] for k in range(8)
    ]
    _grid(doc.new_page(width=595, height=842), [60, 100, 200, 300, 400, 500], 80, long)
    narrow = [["len", "supp", "dose"]] + [[f"{4 + k}.2", "VC", "0.5"] for k in range(6)]
    _grid(doc.new_page(width=595, height=842), [60, 95, 130, 165], 80, narrow)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert [t.pages for t in tables] == [[0], [1]]
    assert tables[1].grid() == narrow


def test_columns_inside_one_column_do_not_map() -> None:
    a = _part([50, 250, 320, 400], [["Item", "A", "B"], ["Other services, excluding transport", "1", "2"]])
    # three columns, all inside a's stub: another table, not a continuation
    assert _column_map(a, _part([50, 90, 130, 170], [["len", "supp", "dose"]]), TableSettings()) is None
    # one column there (a page of stub lines) still maps, as do columns spread over a's columns
    assert _column_map(a, _part([50, 200], [["Total"]]), TableSettings()) == [0]
    assert _column_map(a, _part([50, 240, 330], [["Total", "9"]]), TableSettings()) == [0, 1]


@pytest.mark.parametrize("seed", [21, 291])
def test_a_table_of_words_heads_with_its_first_line_only(seed: int) -> None:
    """The narrow table holds codes ("k2", "OJ", "VC") and, at most, numbers in its stub: no line
    has a figure right of the stub, so every line passed the header test ("no number beside the
    stub") and the first six, the whole scan, were read as one stacked head ("supp k2 OJ M x1 M")."""
    case = make_case(seed, "narrow_table_tail")
    doc = pymupdf.open("pdf", case.pdf)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert [t.pages for t in tables] == [t.pages for t in case.tables]
    narrow, truth = tables[-1], case.tables[-1].merged
    assert narrow.header_rows == 1 and narrow.grid()[0] == truth[0]
    assert _cells(narrow.grid()) == _cells(truth)


def test_a_stacked_head_over_figures_keeps_its_lines() -> None:
    """The head of a table with figures beside its stub is every line above them, as before."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    rows = [["", "Units", "Share"], ["Region", "sold", "of total"]]
    rows += [[f"Region {k}", f"{100 + k * 7}", f"{k + 3}.5%"] for k in range(8)]
    for r, row in enumerate(rows):
        for x, text in zip([60, 220, 320], row, strict=True):
            page.insert_text((x, 100 + r * 14), text, fontsize=9)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert table.grid()[table.header_rows][0] == "Region 0"


def test_a_table_of_words_keeps_a_stacked_head_over_an_empty_stub() -> None:
    """Without figures the head is the first line and the lines under it that leave the stub empty
    (both lines of "Legal / aid" over a blank stub head), not the scan's first six lines."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    rows = [["", "Legal", "Civil"], ["", "aid", "society"]]
    names = ["Children", "Women", "Migrants", "Refugees", "Elderly", "Youth"]
    rows += [[name, "yes", "no"] for name in names]
    rows += [["Persons with disabilities", "no", "yes"], ["Stateless persons", "yes", "yes"]]
    for r, row in enumerate(rows):
        for x, text in zip([60, 260, 360], row, strict=True):
            if text:
                page.insert_text((x, 100 + r * 14), text, fontsize=9)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    grid = table.grid()
    assert [r[0] for r in grid[table.header_rows :]][:2] == ["Children", "Women"]
    assert "Legal" in " ".join(grid[0]) and "aid" in " ".join(grid[table.header_rows - 1])
