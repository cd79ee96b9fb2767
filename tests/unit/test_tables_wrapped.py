"""Stream tables whose row labels wrap over lines and whose cells are partly empty (issue 37): the
generated classes ``wrapped_stub`` and ``blank_cells`` (tests/support/table_pages.py), tune seeds
read wrong before the rules of ``tables.areas`` / ``tables.stream`` for wrapped labels."""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import WRAPPED, make_case, print_rows

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.words import _clear_runs, _norm  # noqa: E402


def _grid(doc: pymupdf.Document) -> list[list[str]]:
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    return [[_norm(x) for x in r] for r in table.grid()]


@pytest.mark.parametrize(
    ("seed", "cls", "where"),
    [
        (6, "wrapped_stub", "bottom, hanging indent"),
        (7, "wrapped_stub", "bottom"),
        (27, "wrapped_stub", "middle, hanging indent"),
        (37, "wrapped_stub", "middle"),
        (1, "wrapped_stub", "top, hanging indent"),
        (10, "wrapped_stub", "top"),
        (7, "blank_cells", "bottom, a blank stub head"),
        (54, "blank_cells", "bottom"),
        (1, "blank_cells", "top, heads spanning groups of columns"),
        (6, "blank_cells", "bottom, heads spanning groups of columns"),
        # a column filled on two rows of a table of 38 lines (labels wrapped word by word): fewer
        # lines than the share that may cross a gutter, it was read as part of the column beside it
        (478, "wrapped_stub", "top"),
        # a fresh tune draw: a group head over three sub-columns is centred on the middle one as on
        # the three; it was taken for that column's head and its line erased both gutters
        (1786, "blank_cells", "bottom, heads spanning groups of columns"),
        # a seventh fresh tune draw: three empty rows in a row, each label wrapped over two or three
        # lines: past three rows of a label alone the area ended, and the rows after them were a
        # second table (more are bridged now where a row in the table's columns follows them)
        (9346, "blank_cells", "bottom"),
        # an eighth (10500-11999): under heads that leave the stub's head blank, the first rows are
        # a label alone wrapped over three lines and a label wrapped down to its figures: past two
        # label lines under the heads (wrapped lines counted too) the heads were cut off, and past
        # the bridge limit the area ended (lines that read on now count with their label's first)
        (11146, "blank_cells", "bottom"),
        # the same draw: sub-heads spaced alike ("Health  Supply  Capacity import  Retail") read as
        # a justified line, one chunk, since the first row under them leaves "Health" blank: the
        # header was lost (``words._heads_row``: a row of figures under all heads but one)
        (11416, "blank_cells", "top, heads spanning groups of columns"),
        # the same draw: "Housing revenue" centred over three sub-columns reaches the middle one
        # only ("Total"), and was read as that head's upper line
        (11536, "blank_cells", "bottom, heads spanning groups of columns"),
    ],
)
def test_wrapped_row_labels_are_one_row_with_their_figures(seed: int, cls: str, where: str) -> None:
    """Each row's label whole in one cell, its figures beside it wherever they sit on the label's
    lines (``where``), empty cells empty, a head over a group of columns one cell at the group's
    first column: the table cell for cell as drawn."""
    case = make_case(seed, cls)
    assert where.split(",")[0] in case.tags
    doc = pymupdf.open("pdf", case.pdf)
    assert _grid(doc) == [[_norm(x) for x in r] for r in case.tables[0].merged]


def test_sub_heads_set_tight_in_a_monospaced_font_are_heads_not_a_justified_line() -> None:
    """A tenth fresh tune draw (13500-14999), ``blank_cells`` 14776: Courier sub-heads of two words
    each, a plain space (4.5 points) inside a head and two (8.7-9) between heads ("Total  Education
    total  Target factory ..."), read as a justified line of prose (one chunk): the header's two
    lines were lost, and with them the first row's wrapped label. Measured between glyph boxes,
    the gaps between heads are a little under twice the space inside them (``words._even_prose``).
    (The last row, a label alone under the table, is left out as such a line is anywhere.)"""
    case = make_case(14776, "blank_cells")
    doc = pymupdf.open("pdf", case.pdf)
    assert _grid(doc) == [[_norm(x) for x in r] for r in case.tables[0].merged[:-1]]


def test_monospaced_sub_heads_under_group_heads_are_heads() -> None:
    """The same draw, ``blank_cells`` 13876: Courier sub-heads a space and a half apart, a space
    inside each ("Average health  Budget service  District county  Water balance"), read as a
    justified line, the row under them a label wrapped word by word: nothing beside vouched for
    them. The group heads above, each centred over two of them ("Target total", "Revenue
    capacity"), do (``words._heads_row``)."""
    case = make_case(13876, "blank_cells")
    doc = pymupdf.open("pdf", case.pdf)
    assert _grid(doc) == [[_norm(x) for x in r] for r in case.tables[0].merged]


def test_the_classes_are_drawn_by_name() -> None:
    for cls in WRAPPED:
        case = make_case(3, cls)
        assert case.n_pages == 1 and len(case.tables) == 1 and len(case.tables[0].merged) >= 4


def _page(rows: list[list[str]]) -> pymupdf.Document:
    doc = pymupdf.open()
    page = doc.new_page()
    print_rows(page, 80, rows, [60, 200, 280, 360], pitch=12)
    return doc


def test_a_label_alone_then_a_row_starting_with_a_capital_stay_two_rows() -> None:
    """A row of a label alone (no figures) is no wrapped label of the row below when that row's
    label starts afresh with a capital; one read on in lower case is its label's last line."""
    rows = [
        ["Region", "Output", "Input", "Total"],
        ["North", "1,200", "300", "1,500"],
        ["Services", "", "", ""],
        ["Retail", "410", "20", "430"],
        ["Transport and", "", "", ""],
        ["storage", "95", "5", "100"],
        ["South", "870", "130", "1,000"],
    ]
    want = [*rows[:4], ["Transport and storage", "95", "5", "100"], rows[6]]
    assert _grid(_page(rows)) == [[_norm(x) for x in r] for r in want]


def test_a_sparse_column_inside_a_low_crossing_stretch_parts_two_gutters() -> None:
    """``words._clear_runs``: a stretch few lines cross is one gutter, unless runs no word covers lie
    either side of words on two lines or more (a sparse column); one line there (a label running
    into the gutter) leaves it one gutter."""
    sparse = [0] * 8 + [3] * 10 + [0] * 8
    assert _clear_runs(sparse, 0, len(sparse), 4.0) == [(0, 8), (18, 26)]
    overflow = [0] * 8 + [1] * 10 + [0] * 8
    assert _clear_runs(overflow, 0, len(overflow), 4.0) == [(0, len(overflow))]
    narrow = [0] * 3 + [3] * 10 + [0] * 8  # a run narrower than a gutter is none
    assert _clear_runs(narrow, 0, len(narrow), 4.0) == [(0, len(narrow))]


def test_many_rows_of_a_label_alone_are_bridged_only_into_the_tables_columns() -> None:
    """Four rows of a label alone (empty rows of a sparse table) stay in the table where a row in
    its columns follows them; four short lines after a table followed by another table under its
    own heads are no rows of the first."""
    body = [["North", "1,200", "300", "1,500"], ["South", "870", "130", "1,000"], ["East", "75", "5", "80"]]
    empty = [
        ["Mining", "", "", ""],
        ["Fishing", "", "", ""],
        ["Forestry", "", "", ""],
        ["Hunting", "", "", ""],
    ]
    rows = [["Region", "Output", "Input", "Total"], *body, *empty, ["West", "410", "20", "430"]]
    assert _grid(_page(rows)) == [[_norm(x) for x in r] for r in rows]
    doc = pymupdf.open()
    page = doc.new_page()
    y = print_rows(page, 80, [["Region", "Output", "Input", "Total"], *body], [60, 200, 280, 360], pitch=12)
    y = print_rows(page, y, [["Notes"], ["Figures"], ["Revised"], ["Estimated"]], [60], pitch=12)
    print_rows(
        page,
        y,
        [["Item", "Code", "Kind"], ["Alpha", "A-1", "new"], ["Beta", "B-2", "old"]],
        [60, 230, 330],
        pitch=12,
    )
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert [t.n_rows for t in tables] == [4, 3]
