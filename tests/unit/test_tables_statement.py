"""Financial statements on generated pages (tests/support/table_pages.py ``statement``, issue 37):
row labels indented under section heads, a row of years under a lone period head, "$" set apart,
parenthesised negatives and dash rows; and the rule that a page opening with its own row of years
starts a table of its own."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import make_case
from support.table_parts import part_of_rows as _part

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.rows import _own_header  # noqa: E402
from dagster_ocr.tables.statement import TableContext  # noqa: E402
from dagster_ocr.tables.stream import _cut_at_edges  # noqa: E402
from dagster_ocr.tables.words import _norm, _Word  # noqa: E402


def _tables(seed: int, cls: str) -> tuple[object, list]:
    case = make_case(seed, cls)
    doc = pymupdf.open("pdf", case.pdf)
    return case, extract_tables(doc, TI.pages_of(doc), TableSettings())


# tune seeds, each a mechanism: 35 and 56 two years under a period head (the years were dropped with
# the first section label), 10 three years and no head, 23 a label longer than the others (its
# last word was a column), 0 dash rows under section heads, 5 a period head over two $ columns; from
# a fresh tune draw (seeds 1500-2999): 1667 and 2357 monospaced, each section's label ending in ":"
# over its rows, set a line's pitch over them (the stub was cut off as a column of prose beside the
# figures: a section's label is no line of a paragraph)
@pytest.mark.parametrize("seed", [0, 5, 10, 23, 35, 56, 1667, 2357])
def test_a_statement_is_one_table_as_generated(seed: int) -> None:
    case, tables = _tables(seed, "statement")
    (table,) = tables
    truth = case.tables[0]
    assert [[_norm(x) for x in r] for r in table.grid()] == [[_norm(x) for x in r] for r in truth.merged]
    assert table.header_rows == truth.header_rows


def test_a_paragraph_above_a_header_of_words_stays_out_of_the_table() -> None:
    """The rules for a header of periods leave a header of words alone: the paragraph's last line
    above it stays out of the table (a guard kept from a period-head rule tried and dropped)."""
    case, tables = _tables(88, "sparse")
    (table,) = tables
    assert [[_norm(x) for x in r] for r in table.grid()] == [
        [_norm(x) for x in r] for r in case.tables[0].merged
    ]


def test_a_page_opening_with_its_own_years_is_another_table() -> None:
    s = TableSettings()
    a = _part([["", "2023", "2022"], ["Revenue", "$ 1,204", "$ 998"], ["Cost", "(320)", "(301)"]], 1)
    other = _part([["", "Year Ended December 31,", ""], ["", "2021", "2020"], ["Leases", "12", "9"]], 2)
    assert _own_header(a, other, s)
    dated = _part([["", "December 31, 2023", "December 31, 2022"], ["Leases", "12", "9"]], 1)
    assert _own_header(a, dated, s)
    repeated = _part([["", "2023", "2022"], ["Interest", "45", "72"]], 1)
    assert not _own_header(a, repeated, s)  # the header repeated: a continuation
    data = _part([["Interest", "45", "72"], ["Total", "1,249", "1,070"]], 0)
    assert not _own_header(a, data, s)  # data rows go on


# tune seeds: two and three years, with and without a period head over them, three to seven rows
@pytest.mark.parametrize("seed", [0, 2, 3, 11])
def test_a_note_under_a_short_statement_leaves_its_columns_whole(seed: int) -> None:
    """A note under a few rows ("(1) Services net sales include ...", its mark set apart) ran across
    every gutter, and with so few rows no line may cross one: the periods' figures shared a cell.
    The note is text under the table, not a row of it."""
    case, tables = _tables(seed, "noted_statement")
    (table,) = tables
    assert [[_norm(x) for x in r] for r in table.grid()] == [
        [_norm(x) for x in r] for r in case.tables[0].merged
    ]
    assert not any("(1)" == c.text.strip() for c in table.cells)  # the note's mark stayed with it


def test_a_stub_of_long_labels_over_a_period_head_is_no_column_of_text() -> None:
    """Three rows whose labels run five and six words ("Purchases of marketable securities (1)"
    over "Purchases of property and equipment"), the gap to the figures wider than a line, and
    "Years ended" centred over the figures above: read as a paragraph opening beside a column of
    text of its own, and the labels were cut off the table (tune seed 444). Each label line opens a
    name and has figures beside it: a statement's stub. Two columns of lists (names beside
    affiliations) open a name on every line too, but hold no figures, and are still cut apart."""
    case, tables = _tables(444, "noted_statement")
    (table,) = tables
    assert [[_norm(x) for x in r] for r in table.grid()] == [
        [_norm(x) for x in r] for r in case.tables[0].merged
    ]


def _heading(table, k: int) -> str:
    """Column ``k``'s heading as a reader reads it: the headings printed above the grid (less the
    year over every column) over the grid's own header rows."""
    above = table.column_headers[k] if k < len(table.column_headers) else ""
    parts = [re.sub(r"\b(?:19|20)\d\d\b", "", above)] + [r[k] for r in table.grid()[: table.header_rows]]
    return _norm(" ".join(p for p in parts if p))


# tune seeds, each a mechanism: 1 the first section label under heads that leave the stub empty
# (read as a header row), 3 a one-word top line of one column's stacked heading (read as heading
# every column, or lost between the headings and the grid), 13 and 16 "$" glued to the figure
# before a nil's dash ("$ 365 $" | "—"), 2 a year over every column
@pytest.mark.parametrize("seed", [1, 2, 3, 13, 16])
def test_a_wide_table_of_figures_under_stacked_headings_reads_as_printed(seed: int) -> None:
    case, tables = _tables(seed, "wide_statement")
    (table,) = tables
    truth = case.tables[0].merged
    body = table.grid()[table.header_rows :]
    assert [[_norm(x) for x in r] for r in body] == [[_norm(x) for x in r] for r in truth[1:]]
    assert [_heading(table, k) for k in range(table.n_cols)] == [_norm(x) for x in truth[0]]


# tune seeds of a 1,500-seed draw: headings of words stacked over three lines in tight leading,
# one of them set over a "$" column and its figures ("Unrealized" over "Gains"), were three header
# rows, each heading's lines in cells of their own
@pytest.mark.parametrize("seed", [25, 205, 985])
def test_headings_of_words_stacked_over_a_sign_column_are_one_header_row(seed: int) -> None:
    case, tables = _tables(seed, "wide_statement")
    (table,) = tables
    truth = case.tables[0].merged
    assert table.header_rows == 1
    assert [_norm(x) for x in table.grid()[0]] == [_norm(x) for x in truth[0]]


# tune seeds of the tenth and eleventh draws: heads wider than their narrow figures, stacked over
# three lines a head over a head, reach over the body's edges ("Adjusted" over "Cost", a few points
# into the gutter before it); set a space apart ("Cash Unrealized Unrealized Marketable"), a middle
# line read as one head spanning four columns, and the three lines stayed three header rows
@pytest.mark.parametrize("seed", [14065, 15115, 16015])
def test_heads_stacked_a_head_over_a_head_keep_their_columns_past_the_edges(seed: int) -> None:
    case, tables = _tables(seed, "wide_statement")
    (table,) = tables
    truth = case.tables[0].merged
    assert [[_norm(x) for x in r] for r in table.grid()] == [[_norm(x) for x in r] for r in truth]
    assert table.header_rows == 1


def test_heads_a_space_apart_over_sign_columns_part_at_the_columns_edge() -> None:
    """tune 19255 (``wide_statement``, the thirteenth draw): "Securities" and "Equivalents", the
    last lines of two stacked heads wider than their figures, are set a space apart, one phrase of
    the line; "Equivalents" reaches over its own column's "$" edge, and the phrase was placed whole,
    spanning both columns. Cut at the space an edge lies in, each word heads its own column."""
    case, tables = _tables(19255, "wide_statement")
    (table,) = tables
    truth = case.tables[0].merged
    grid = [[_norm(x) for x in r] for r in table.grid()]
    assert table.header_rows == 1
    assert grid[0][3:5] == [_norm("Marketable Securities"), _norm("Cash Equivalents")]
    assert grid[1:] == [[_norm(x) for x in r] for r in truth[1:]]


def test_a_head_phrase_is_cut_at_edges_but_a_sentence_is_placed_whole() -> None:
    """``stream._cut_at_edges``: a phrase of a few heads set a space apart is cut at the space an
    edge lies in where a word of it crosses an edge; a note's sentence under the grid (more words
    than a phrase of heads) crosses edges as a whole and keeps its one spanning cell, or its words
    would land in the "$" columns and keep them from folding (Tesla's notes under a table)."""
    inner = [351.3, 361.5]
    heads = [_Word(307, 0, 348, 10, "Securities"), _Word(352, 0, 400, 10, "Equivalents")]
    assert [[w.text for w in p] for p in _cut_at_edges(heads, inner)] == [["Securities"], ["Equivalents"]]
    x = 300.0
    sentence = []
    for t in "Depreciation expense during the years ended was million".split():
        sentence.append(_Word(x, 0, x + 5 * len(t), 10, t))
        x += 5 * len(t) + 3
    assert _cut_at_edges(sentence, inner) == [sentence]


# tune seeds of the twelfth and thirteenth draws: one head stacked a line higher than the others
# ("Current" over "Marketable" over "Securities", "Cash and" over "Cash" over "Equivalents"), its
# top line alone on its line above the area's first line of heads: it was the table's context
@pytest.mark.parametrize("seed", [17605, 18505, 18925])
def test_a_head_stacked_a_line_above_the_others_heads_its_column(seed: int) -> None:
    case, tables = _tables(seed, "wide_statement")
    (table,) = tables
    truth = case.tables[0].merged
    assert table.header_rows == 1
    assert [_norm(x) for x in table.grid()[0]] == [_norm(x) for x in truth[0]]


# tune seeds of the fourteenth and fifteenth draws (19500-22499): a column's "$" set at its left a
# point or two after the widest figure of the column before, its parenthesis hanging out ("(1,370)"
# ends at 383.2, "$" begins at 384.5): no clear run on whole points, two columns read as one
@pytest.mark.parametrize("seed", [20995, 21685, 21955, 22255])
def test_signs_a_sliver_after_the_column_before_begin_their_column(seed: int) -> None:
    case, tables = _tables(seed, "wide_statement")
    (table,) = tables
    truth = case.tables[0].merged
    assert table.n_cols == len(truth[0])
    assert [[_norm(x) for x in r] for r in table.grid()] == [[_norm(x) for x in r] for r in truth]


# a tune seed of the sixteenth draw (22500-23999): three head lines, "Non-Current" and "Cash and"
# a space apart over "Marketable" and "Cash", over "Securities" and "Equivalents", the last
# beginning 3 points left of its column's "$" edge: the bottom line spanned both columns, and the
# top line's "Cash and" over "Cash" was no word over a head, so three header rows were left
def test_heads_a_space_apart_and_a_word_just_left_of_its_sign_edge_stack_into_one_header_row() -> None:
    case, tables = _tables(22825, "wide_statement")
    (table,) = tables
    truth = case.tables[0].merged
    assert table.header_rows == 1
    assert [[_norm(x) for x in r] for r in table.grid()] == [[_norm(x) for x in r] for r in truth]


def test_a_table_under_another_year_above_its_grid_is_another_table() -> None:
    """A note's table per year (Apple's fair values by level: 2024 on one page, 2023 on the next,
    the same column heads under each year): the years sit above the grids, in their headings, and
    the second table is the other year's, not the first going on."""
    s = TableSettings()
    heads = ["", "Adjusted Cost", "Fair Value"]
    a = _part([heads, ["Cash", "$ 27,199", "$ 27,199"], ["Subtotal", "1,293", "1,395"]], 1)
    b = _part([heads, ["Cash", "$ 28,359", "$ 28,359"], ["Subtotal", "923", "909"]], 1)
    a.context = TableContext(column_headers=["", "2024", "2024"])
    b.context = TableContext(column_headers=["", "2023", "2023"])
    assert _own_header(a, b, s)
    b.context = TableContext(column_headers=["", "2024", "2024"])
    assert not _own_header(a, b, s)  # the same year over it: the table goes on
    b.context = None
    assert not _own_header(a, b, s)  # no headings above it


_ROWS = [
    ("Net income", ["93,736", "96,995", "99,803"]),
    ("Depreciation", ["11,445", "11,519", "11,104"]),
    ("Share-based compensation", ["11,688", "10,833", "9,038"]),
    ("Other", ["(2,266)", "(2,227)", "1,006"]),
    ("Cash used in financing activities", ["(121,983)", "(108,488)", "(110,749)"]),
]


def _statement_with_wrapped_label(space: float, indent: float, label: list[str]) -> list[list[str]]:
    """The grid of a statement page (a row of years, ``_ROWS``) whose next row's label (two lines)
    wraps onto its second line beside its figures, ``space`` points further down and ``indent``
    points in."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 100.0

    def line(label: str, figures: list[str], x: float = 50.0, gap: float = 14.0) -> None:
        nonlocal y
        page.insert_text((x, y), label, fontsize=9)
        for k, f in enumerate(figures):
            right = 420 + 80 * k
            page.insert_text((right - pymupdf.get_text_length(f, fontsize=9), y), f, fontsize=9)
        y += gap

    line("", ["2024", "2023", "2022"])
    for stub, figures in _ROWS:
        line(stub, figures)
    y += space
    line(label[0], [], 50 + indent, 11)
    line(label[1], ["(794)", "5,760", "(10,952)"], x=58 + indent)
    line("Cash, ending balances", ["29,943", "30,737", "24,977"])
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    return [[_norm(x) for x in r] for r in table.grid()]


@pytest.mark.parametrize(
    ("space", "indent", "label"),
    [
        (
            30,
            0,
            ["Increase/(Decrease) in cash, cash equivalents, and restricted cash and cash", "equivalents"],
        ),
        (0, 40, ["Common stock withheld related to net share settlement of equity", "awards"]),
    ],
)
def test_a_row_label_wrapping_onto_its_figures_is_one_row(space: float, indent: float, label: list) -> None:
    """A row label wrapped onto a second line beside its figures, its first line set apart by
    space (Apple's cash-flow total "Increase/(Decrease) in cash, ... and cash" over "equivalents
    (794) ...") or indented deep in the stub (a sub-item of a sub-group: "Common stock withheld
    related to net share settlement of equity" over "awards (3,993) ..."): the first line is held
    like a section's label, but the line that resumes the table reads on from it, so it is the
    row's stub cell, not a label row of its own, and the table goes on."""
    grid = _statement_with_wrapped_label(space, indent, label)
    assert [_norm(" ".join(label)), "(794)", "5,760", "(10,952)"] in grid
    assert len(grid) == 1 + len(_ROWS) + 2


def _statement_under(lead: list[str]) -> object:
    """The table of a page with the lines ``lead`` (a paragraph) right above a statement's grid."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 100.0
    for text in lead:
        page.insert_text((50, y), text, fontsize=9)
        y += 11
    y += 6
    for stub, figures in [("", ["2024", "2023", "2022"]), *_ROWS]:
        page.insert_text((50, y), stub, fontsize=9)
        for k, f in enumerate(figures):
            page.insert_text((420 + 80 * k - pymupdf.get_text_length(f, fontsize=9), y), f, fontsize=9)
        y += 14
    (table,) = extract_tables(doc, TI.pages_of(doc), TableSettings())
    return table


def test_a_long_lead_in_heads_its_table_from_a_sentence_start() -> None:
    """The paragraph leading into a table titles it by its last whole sentences that fit (its last
    300 characters began inside a word: "ranty expense is recorded ...")."""
    lead = [
        "We accrue a warranty reserve for the products sold, which includes our best estimate of the",
        "projected costs to repair or replace items under warranties and recalls if identified. Warranty",
        "expense is recorded as a component of cost of revenues in the consolidated statements of",
        "operations. Due to the magnitude of our automotive business, our accrued warranty balance is",
        "primarily related to our automotive segment. Warranty activity was as follows (in millions):",
    ]
    title = _statement_under(lead).title
    assert title.startswith("Warranty expense is") and title.endswith("was as follows (in millions):")


def test_a_line_that_a_sentence_runs_onto_is_no_caption() -> None:
    """ "table provides ..." begins a line because "The following" ended the one before: the word in
    lower case with a sentence going on is no "Table 3" caption, and the sentence heads the table."""
    lead = ["The term debt of the Company is due in several tranches through 2062. The following", "table"]
    lead[1] += " provides a summary of the Company's term debt as of September 28, 2024:"
    assert _statement_under(lead).title == " ".join(lead)
