"""Statements of many figure columns set close together (issue 37): each column's "$" a few points
after the figure of the column before, and sparse columns of short figures under wide heads. The
generated class ``wide_statement`` (tests/support/table_pages.py): tune seeds read wrong before
``tables.words._opens_sign_cells``, ``_inside_figures`` and ``_after_signs`` and
``tables.areas._split_at_notes``' reading on past a section's label, ``tables.stream._one_column``
leaving sign columns alone, and the rules on lines placed by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import make_case

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.words import (  # noqa: E402
    _after_signs,
    _inside_figures,
    _norm,
    _opens_sign_cells,
    _sign_starts,
    _TextLine,
    _Word,
)


@pytest.mark.parametrize(
    ("seed", "why"),
    [
        (24, "a '$' 4-5 points after the figure before"),
        (32, "a '$' 4-5 points after the figure before"),
        (11, "a sparse column of short figures under a wide head"),
        (56, "a sparse column of short figures under a wide head"),
        (41, "a gutter set inside a wide head's word, a point from its column's '$'"),
        (69, "a gutter set inside a wide head's word, a point from its column's '$'"),
        (44, "notes under the grid, a section's label under the heads"),
        (19, "a head wider than its figures, its over-wide part joined to the '$' column"),
        (23, "a head wider than its figures, its over-wide part joined to the '$' column"),
        (2935, "a figure set right a point from the next column's '$', the gutter's edge inside it"),
        # an eighth fresh tune draw (10500-11999): the two lines with "$" within the share allowed
        # to cross a gutter, the clear run reached past where the signs begin
        (11605, "parentheses hanging out a point from the next column's '$', the run past the sign"),
        # a tenth fresh tune draw (13500-14999): a head reaching into the body's narrow gutter,
        # not across it, leaves less than a gutter clear (``words._over_own_columns``)
        (13795, "'Non-Current' beginning 0.6 points into the run before the next column's '$'"),
        (13945, "'Equivalents' beginning 2 points into the run before the next column's '$'"),
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
    assert _opens_sign_cells(_sign_starts(two), 174.0, 176.0, 4.0)
    assert not _opens_sign_cells(
        _sign_starts(two[:1]), 174.0, 176.0, 4.0
    )  # one sign alone: a phrase's, maybe
    assert not _opens_sign_cells(_sign_starts(two), 164.0, 166.0, 4.0)  # no sign begins there
    words = [_line(("cost", 150.0, 166.0), ("$", 176.0, 180.5), ("millions", 184.0, 212.0)) for _ in range(2)]
    assert not _opens_sign_cells(
        _sign_starts(words), 166.0, 176.0, 4.0
    )  # a sign before a word ("in $ millions")
    # signs a space before figures set right in one column ("$ 6,333" under "$ 190,134"): the run
    # before them is bounded by the other lines' sign, not by a word before them
    column = [
        _line(("57.3%", 200.0, 222.0), ("$", 259.7, 263.9), ("6,333", 268.1, 289.1)),
        _line(("30.9%", 200.0, 222.0), ("$", 259.7, 263.9), ("9,861", 268.1, 289.1)),
        _line(("71.8%", 200.0, 222.0), ("$", 251.3, 255.5), ("190,134", 259.7, 289.1)),
    ]
    assert not _opens_sign_cells(_sign_starts(column), 255.5, 259.7, 4.0)
    # a parenthesis hanging out of another row narrows the run further: still the signs' gutter
    hung = [*two, _line(("(447)", 150.0, 175.0))]
    assert _opens_sign_cells(_sign_starts(hung), 175.0, 176.0, 4.0)


def test_a_run_crossed_by_a_figure_set_right_with_the_figures_beside_it_is_inside_a_column() -> None:
    """ "1,228" crosses the space left of "4" and "(5)", set right with them: one column of figures.
    A label crossing, or a figure whose right edge nothing right of the run shares, is no evidence."""
    column = [_line(("1,228", 204.7, 224.8)), _line(("4", 220.3, 224.8)), _line(("(5)", 214.0, 224.8))]
    assert _inside_figures(column, 213.0)
    assert not _inside_figures(column[:2], 213.0)  # one figure set right with it: too few
    assert not _inside_figures([_line(("Adjusted", 190.0, 224.8)), *column[1:]], 213.0)
    apart = [_line(("1,228", 204.7, 224.8)), _line(("4", 230.0, 234.5)), _line(("(5)", 240.0, 250.8))]
    assert not _inside_figures(apart, 213.0)
    # two figures read as one word across a gutter (a space between them) are no figure set right
    joined = [
        _line(("11 156,643", 266.0, 308.0)),
        _line(("167,108", 278.7, 308.0)),
        _line(("61", 299.6, 308.0)),
    ]
    assert not _inside_figures(joined, 277.0)


def test_a_gutter_crossed_on_whole_points_goes_right_of_the_column_signs() -> None:
    """A "$" ending at 339.6 and a head beginning at 340.7: the point cells both touch read as
    covered, the sliver between them is where the columns part. A sliver after a head's word (a
    group's head over it and the next column) or a run no sliver of which is clear keeps the place
    it was given."""
    lines = [
        _line(("$", 335.9, 339.6), ("74,111", 360.0, 380.6)),
        _line(("Unrealized", 340.7, 375.7)),
        _line(("Gains", 348.9, 367.6)),
    ]
    assert 339.6 < _after_signs(lines, 339.0, 349.0, 345.0, 1) < 340.7
    group = [_line(("Average", 271.0, 300.6)), _line(("target", 247.6, 268.4), ("Annual", 284.4, 309.8))]
    assert _after_signs(group, 268.0, 284.0, 276.0, 1) == 276.0
    crossed = [_line(("Adjusted", 334.4, 368.7)), _line(("Cost", 342.7, 360.4))]
    assert _after_signs(crossed, 361.0, 365.0, 363.5, 1) == 363.5


@pytest.mark.parametrize("seed", [11245])
def test_heads_wider_than_their_columns_set_tight_leave_the_bodys_gutters(seed: int) -> None:
    """An eighth fresh tune draw (10500-11999): three head lines ("Non-Current" / "Marketable" /
    "Securities"), each centred on its column and wider than its figures, reach a point or two
    past the gutter between a figure's hanging ")" and the next column's "$", more lines than may
    cross a gutter: the two columns were one ("$ 4 $ 33"). The body says where its gutters are
    (``words._over_own_columns``): every column its own, the body cell for cell. (The heads' own
    placement, two of them read as one phrase, is left.)"""
    case = make_case(seed, "wide_statement")
    doc = pymupdf.open("pdf", case.pdf)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    truth = case.tables[0]
    assert table.n_cols == len(truth.merged[0])
    got = [[_norm(x) for x in r] for r in table.grid()[table.header_rows :]]
    assert got == [[_norm(x) for x in r] for r in truth.merged[truth.header_rows :]]
