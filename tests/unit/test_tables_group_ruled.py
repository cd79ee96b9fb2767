"""Tables ruled only between column groups (tests/support/table_pages.py ``group_ruled``, issue 37):
vertical rules between "Total" | "Male" | "Female" groups of two to four sub-columns, none between the
sub-columns nor the rows. The line finder's grid has one column per group and one body row; the
table must come out with every sub-column a column, every printed row a row, and the group heads as
header cells spanning their group (text at the group's first column)."""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import make_case
from support.table_parts import norm_grid as _norm_grid

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.cells import _labels_read_on  # noqa: E402
from dagster_ocr.tables.words import _Word  # noqa: E402


# tune seeds, one per form: 0 a rule across under the heads and one under the sub-heads, labels
# wrapped with their figures on the last line (the first lines read as a head line); 3 no rule
# under the group heads; 6 short rules under each group head, labels in dot leaders; 7 leaders
# close to the first figures (the text reading's stub column reached over the rule); 10 short
# rules over groups of four sub-columns. Before the fix each came out as one column per group.
# 22: the grid's columns cut by ``_split_crowded_columns``, the group heads stacked onto the
# sub-heads ("2021 Men"); 24: a grid of one row (no rule under the heads reaches the rules), once
# dropped as too small and read by the text finder, its heads stacked the same way. From a draw
# of 1,500 tune seeds: 1139 and 1469, a group of two sub-columns each about 30% blank (both filled
# on under 60% of the rows, so the column was not read for its gutters), the stub's head cell
# spanning the group heads' line and the sub-heads' line (the sub-heads read twice), labels
# wrapped over two lines above a rule-less body (each line a row). 629: the last group's year
# ("2024") centred between its two narrow sub-heads, reaching neither, crossed their gutter. From a
# fresh draw (seeds 3000-4499): 3269 and 3929, a group whose figures fill both sub-columns on 3 of 9
# rows (under the share its siblings pass, so its column was not cut when theirs were). From the
# next (4500-5999): 4739, the sub-head "18 and over" over figures set right cut at its word space
# (a clear stretch at the figures' left): "18" a column no other line fills, the sub-heads' line
# then read as a row of figures. From the next (6000-7499): 6029, a table of two groups both about
# 30% blank, no sibling full enough to vouch for them: a line left one figure in one sub-column now
# counts as the full lines do (``grouped._in_one_sub_column``), the sub-heads' line not at all;
# 7259, a group's year ("2023") centred over its figures, which run left of its sub-head "Men" (set
# right over "-208,880"): nearer the middle of "Men" than of the two heads, it was kept as a line
# crossing their gutter (groups are now measured on their columns, ``words._column_extents``). From
# a sixth (7500-8999): 8849, the sub-heads "Number Percent" repeated over four groups, spaced alike,
# read as a justified line of prose (one cell): the reading inside the rules lost both head lines.
# From a seventh (9000-10499): 9389, the same line with the stub's head ("Offense charged") in a
# band of its own between rules, placed whole in one column: read with the row under it now.
# From an eighth (10500-11999): 11759, quarters ("Q1" ... "Q4") under each group's head, which
# centred over four sub-columns crossed the middle gutter: a quarter was taken for a figure, so that
# head line did not say where the groups are (``words._figure_head``); 11609, a group whose figures
# fill both sub-columns on one row only, its sub-heads "Total" and "Under 18" one over each
# (``cells._head_cuts``: the cut moved between them, inside the figures' gutter); 11939, in a
# monospaced font, "Female" centred over its three sub-columns reaches the middle one only and
# crossed the gutter before it, set tight (``words._centred_over_group``: the run of three). And
# 8549 (the sixth draw), 11609's form with the sub-heads in a band of their own under the group
# heads' band: the head lines are read from the grid's first rows that hold no figure there.
# 17429 (a twelfth draw, 16500-17999): the stub's head ("Offense charged") runs past the rule under
# the first sub-head, set over its last letters, a space on: one word to PyMuPDF ("chargedNumber"),
# cut where its glyphs step back (``grid._cut_word``), and a phrase cut at the grid's sides
# (``grouped._placed``). 20129 (the fourteenth draw, 19500-20999): sub-heads spaced alike ("Number
# Percent" four times) over a sparse first row were read as one justified line, all in the first
# column; the group heads' line above tells them (``grouped._placed``'s ``above``). 22169 (the
# fifteenth draw, 21000-22499): quarters ("Q1" to "Q4") over the figures, a wrapped first label
# under them: quarters head columns as years do (``areas._heads_leave_stub_blank``)
@pytest.mark.parametrize(
    "seed",
    [
        0,
        3,
        6,
        7,
        10,
        22,
        24,
        629,
        1139,
        1469,
        3269,
        3929,
        4739,
        6029,
        7259,
        8549,
        8849,
        9389,
        11609,
        11759,
        11939,
        17429,
        20129,
        22169,
    ],
)
def test_sub_columns_inside_group_rules_are_columns(seed: int) -> None:
    case = make_case(seed, "group_ruled")
    doc = pymupdf.open("pdf", case.pdf)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    truth = case.tables[0].merged
    assert table.n_cols == len(truth[0])
    assert table.header_rows == 2
    assert _norm_grid(table.grid()) == _norm_grid(truth)


def test_a_group_head_spans_its_sub_columns() -> None:
    case = make_case(7, "group_ruled")
    doc = pymupdf.open("pdf", case.pdf)
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    heads = [c for c in table.cells if c.row == 0 and c.text]
    n_sub = int(next(t for t in case.tags if t.startswith("sub:")).split(":")[1])
    assert heads and all(c.col_span == n_sub for c in heads)
    assert [c.col for c in heads] == [1 + g * n_sub for g in range(len(heads))]


@pytest.mark.parametrize("seed", range(4))
def test_a_fully_ruled_table_is_read_as_ruled(seed: int) -> None:
    """A table with a rule between every column and row keeps its grid (the ruled classes)."""
    case = make_case(seed * 21, "ruled")
    doc = pymupdf.open("pdf", case.pdf)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert [_norm_grid(t.grid()) for t in tables] == [_norm_grid(t.merged) for t in case.tables]


def _w(x0: float, y0: float, text: str) -> _Word:
    return _Word(x0, y0, x0 + 6.0 * len(text), y0 + 10.0, text)


def test_a_wrapped_row_label_is_one_row_again() -> None:
    """The lines of a ruled grid's one body row, cut into rows: a label's next line in lower case
    joins its first (figures on its last line, or on its first); a capital starts a row."""
    first = (0.0, 10.0, {0: [_w(10, 0, "Estimate share")]})
    last = (12.0, 22.0, {0: [_w(10, 12, "variance")], 1: [_w(200, 12, "2,287")]})
    other = (24.0, 34.0, {0: [_w(10, 24, "Target")], 1: [_w(200, 24, "35,403")]})
    tail = (36.0, 46.0, {0: [_w(10, 36, "target")]})
    rows = _labels_read_on([first, last, other, tail])
    assert [sorted(c) for _, _, c in rows] == [[0, 1], [0, 1]]
    labels = [" ".join(w.text for w in c[0]) for _, _, c in rows]
    assert labels == ["Estimate share variance", "Target target"]
    # a label alone, then a row starting with a capital: two rows
    assert len(_labels_read_on([first, other])) == 2
