"""Statements of many figure columns set close together (issue 37): each column's "$" a few points
after the figure of the column before, and sparse columns of short figures under wide heads. The
generated class ``wide_statement`` (tests/support/table_pages.py): tune seeds read wrong before
``tables.words._opens_sign_cells`` and ``tables.words._inside_figures``, and the two rules on lines
placed by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import make_case

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.words import _inside_figures, _norm, _opens_sign_cells, _TextLine, _Word  # noqa: E402


@pytest.mark.parametrize(
    ("seed", "why"),
    [
        (24, "a '$' 4-5 points after the figure before"),
        (32, "a '$' 4-5 points after the figure before"),
        (11, "a sparse column of short figures under a wide head"),
        (56, "a sparse column of short figures under a wide head"),
    ],
)
def test_a_wide_statement_reads_cell_for_cell(seed: int, why: str) -> None:
    """Five to seven figure columns under stacked heads, "$" set apart at each column's left on
    the first and total rows: every column its own, each "$" with its figure (``why``: what the
    seed was read wrong for before)."""
    case = make_case(seed, "wide_statement")
    doc = pymupdf.open("pdf", case.pdf)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    want = [[_norm(x) for x in r] for r in case.tables[0].merged]
    assert [[[_norm(x) for x in r] for r in t.grid()] for t in tables] == [want]


def _line(*words: tuple[str, float, float]) -> _TextLine:
    ws = [_Word(x0, 100.0, x1, 110.0, t) for t, x0, x1 in words]
    return _TextLine(words=ws, chunks=[ws])


def test_a_narrow_run_is_a_gutter_only_before_a_column_of_signs_before_figures() -> None:
    two = [
        _line(("1,051", 150.0, 172.0), ("$", 176.0, 180.5), ("1,515", 190.0, 212.0)),
        _line(("(43,962)", 146.0, 174.0), ("$", 176.0, 180.5), ("—", 205.0, 212.0)),
    ]
    assert _opens_sign_cells(two, 176.0)
    assert not _opens_sign_cells(two[:1], 176.0)  # one sign alone: a phrase's, maybe
    assert not _opens_sign_cells(two, 166.0)  # no sign begins there
    words = [_line(("cost", 150.0, 166.0), ("$", 176.0, 180.5), ("millions", 184.0, 212.0)) for _ in range(2)]
    assert not _opens_sign_cells(words, 176.0)  # a sign before a word ("in $ millions")


def test_a_run_crossed_by_a_figure_set_right_with_the_figures_beside_it_is_inside_a_column() -> None:
    """ "1,228" crosses the space left of "4" and "(5)", set right with them: one column of figures.
    A label crossing, or a figure whose right edge nothing right of the run shares, is no evidence."""
    column = [_line(("1,228", 204.7, 224.8)), _line(("4", 220.3, 224.8)), _line(("(5)", 214.0, 224.8))]
    assert _inside_figures(column, 213.0)
    assert not _inside_figures(column[:2], 213.0)  # one figure set right with it: too few
    assert not _inside_figures([_line(("Adjusted", 190.0, 224.8)), *column[1:]], 213.0)
    apart = [_line(("1,228", 204.7, 224.8)), _line(("4", 230.0, 234.5)), _line(("(5)", 240.0, 250.8))]
    assert not _inside_figures(apart, 213.0)
