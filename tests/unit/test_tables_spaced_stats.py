"""A statistical table whose thousands are set apart by a space ("1 234 567", issue 37's "a column
per number position"): one column per printed column, each figure one cell.

Documents from tests/support/table_pages.py (``UNSEEN``: ``spaced_stats``), seeded tune cases that
failed before the rule; the pass rate over many seeds is bench/tables_synthetic.py's
``--classes spaced_stats``.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import make_case

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.words import _join_digit_groups, _norm, _TextLine, _Word, _years_apart  # noqa: E402


def _cells(grid: list[list[str]]) -> Counter[str]:
    return Counter(k for row in grid for x in row if (k := _norm(x).replace(" ", "")))


# 8298 (a sixth fresh tune draw): "8 722.9*", a note's mark set close after the last group; 11028
# and 11658 (an eighth): "1 991a", a note's letter set so
@pytest.mark.parametrize("seed", [16, 24, 26, 8298, 11028, 11658])
def test_space_set_thousands_make_no_column_of_their_own(seed: int) -> None:
    case = make_case(seed, "spaced_stats")
    doc = pymupdf.open("pdf", case.pdf)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    (truth,) = case.tables
    (table,) = tables
    assert table.n_cols == len(truth.merged[0])
    got, want = _cells(table.grid()), _cells(truth.merged)
    assert 2 * sum((got & want).values()) / (sum(got.values()) + sum(want.values())) >= 0.95


def _w(x0: float, text: str, digit: float = 5.0) -> _Word:
    return _Word(x0, 100.0, x0 + digit * len(text), 110.0, text)


def test_digit_groups_join_across_a_word_space_only() -> None:
    # "(12 345 678.9)": a space (2.5 pt) narrower than a digit (5 pt) before each group
    words = [_w(50, "Norway"), _w(200, "(12"), _w(217.5, "345"), _w(235, "678.9)")]
    assert [w.text for w in _join_digit_groups(words)] == ["Norway", "(12 345 678.9)"]
    # a gutter wider than a digit parts two columns; a year is no figure's leading digits
    assert [w.text for w in _join_digit_groups([_w(200, "12"), _w(218, "345")])] == ["12", "345"]
    assert [w.text for w in _join_digit_groups([_w(200, "2019"), _w(222.5, "345")])] == ["2019", "345"]
    # a note's mark set close after the last group stays with it
    assert [w.text for w in _join_digit_groups([_w(200, "8"), _w(207.5, "722.9*")])] == ["8 722.9*"]
    # a group is three digits: "12 34" is two cells
    assert [w.text for w in _join_digit_groups([_w(200, "12"), _w(212.5, "34")])] == ["12", "34"]


@pytest.mark.parametrize("seed", [48, 78])
def test_a_table_too_wide_for_its_page_is_drawn_with_fewer_columns(seed: int) -> None:
    """The generator's own check: nine columns of long heads did not fit in the smallest type and
    were drawn past the page's edge, where no text layer holds them, while the truth kept them; the
    product was scored wrong for a column no reader could see. Now the last columns go, and what
    the truth holds is on the page (and read as printed)."""
    case = make_case(seed, "spaced_stats")
    doc = pymupdf.open("pdf", case.pdf)
    (truth,) = case.tables
    on_page = _norm(doc[0].get_text()).replace(" ", "")
    assert all(_norm(x).replace(" ", "") in on_page for row in truth.merged for x in row)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert table.n_cols == len(truth.merged[0])


def test_a_year_column_empty_in_every_row_keeps_its_head() -> None:
    """Tune seed 378: "2013" heads a column no row fills, in a table of 2010 to 2015; only its
    head crossed the stretch between 2012's figures and 2014's, which the gutter finder read as one
    gutter, and "2012 2013" shared a cell. Each year of a head line of years heads its own column."""
    case = make_case(378, "spaced_stats")
    doc = pymupdf.open("pdf", case.pdf)
    (truth,) = case.tables
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert table.n_cols == len(truth.merged[0])
    assert [_norm(x) for x in table.grid()[0]] == [_norm(x) for x in truth.merged[0]]


def test_two_years_of_a_line_of_years_never_share_a_column() -> None:
    head = _TextLine(
        [_w(50, "Country"), _w(150, "2012"), _w(200, "2013"), _w(250, "2014")],
        [[_w(50, "Country")], [_w(150, "2012")], [_w(200, "2013")], [_w(250, "2014")]],
    )
    # the finder's bounds part 2012 from 2014 once, between 2013 and 2014: 2012 and 2013 get one
    assert _years_apart([head], [100.0, 235.0]) == [185.0]
    assert _years_apart([head], [100.0, 185.0, 235.0]) == []
