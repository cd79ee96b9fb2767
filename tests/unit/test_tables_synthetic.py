"""Table rules on generated pages (tests/support/table_pages.py), the classes bench/tables_synthetic.py
found failing on its tune seeds. Each case is one seeded document whose cells are known."""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest
from support.table_pages import CLASSES, EXTRA, LATER, LATER_NO_TABLE, MULTI, NO_TABLE, make_case, seeds

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.words import _even_prose, _norm, _text_lines, _Word  # noqa: E402


def _tables(seed: int, cls: str | None = None) -> tuple[object, list]:
    case = make_case(seed, cls)
    doc = pymupdf.open("pdf", case.pdf)
    return case, extract_tables(doc, TI.pages_of(doc), TableSettings())


def _assert_one_table_as_generated(seed: int, cls: str) -> None:
    """The page's one table, cell for cell as the generator drew it (Unicode-normalised)."""
    case, tables = _tables(seed, cls)
    (table,) = tables
    assert [[_norm(x) for x in r] for r in table.grid()] == [
        [_norm(x) for x in r] for r in case.tables[0].merged
    ]


def _adjacency_f1(seed: int, cls: str | None = None) -> float:
    case, tables = _tables(seed, cls)
    truth = [(p, g) for t in case.tables for p, g in t.grids.items()]
    tp, n_pred, n_gt = TI.score_doc(truth, TI.predicted_parts(tables))
    return TI._prf(tp, n_pred, n_gt)["f1"]


def test_the_generator_is_seeded_and_covers_every_class() -> None:
    a, b = make_case(5), make_case(5)
    assert a.pdf == b.pdf and a.cls == CLASSES[5]
    assert sorted(make_case(s).cls for s in seeds("held_out", len(CLASSES))) == sorted(CLASSES)
    for cls in CLASSES + EXTRA + LATER + LATER_NO_TABLE:
        case = make_case(3, cls)
        assert case.n_pages >= 1
        if cls in NO_TABLE or cls in LATER_NO_TABLE:
            assert case.tables == []
        else:
            assert case.tables and all(len(t.merged) >= 2 for t in case.tables)
        if cls in MULTI:
            assert sum(len(t.pages) for t in case.tables) >= 2


def test_evenly_spaced_words_are_one_chunk() -> None:
    """Justified or monospaced prose: every word gap exceeds the chunk gap, all alike."""
    words, x = [], 60.0
    for w in "the board expects costs to ease over the coming year".split():
        words.append(_Word(x, 100, x + 6 * len(w), 110, w))
        x += 6 * len(w) + 7  # a 7 pt space on a 10 pt line: wider than half a line height
    (line,) = _text_lines(words, 0.5)
    assert len(line.chunks) == 1
    # a table row: gutters of unlike widths, figures
    row = [
        _Word(60, 100, 100, 110, "Austria"),
        _Word(160, 100, 180, 110, "12.5"),
        _Word(230, 100, 250, 110, "7.1"),
    ]
    row.append(_Word(275, 100, 300, 110, "3,204"))
    assert len(_text_lines(row, 0.5)[0].chunks) == 4
    assert not _even_prose([[w] for w in row], 10)


def test_a_line_spaced_alike_with_no_line_of_its_measure_beside_it_is_cells() -> None:
    """Heads spaced alike read as a justified line; but justification stretches a line only to the
    measure of its paragraph's other lines. Alone between a short group head and a section's label
    (``blank_cells`` tune seed 21856 of the fifteenth draw: the heads went to the table's context),
    the line keeps its cells; with a line of its measure under it, it is prose."""
    words, x = [], 150.0
    for head in ["County", "Balance", "Output", "Contract"]:
        words.append(_Word(x, 100, x + 6 * len(head), 110, head))
        x += 6 * len(head) + 11
    group = [_Word(190, 88, 260, 98, "Customer"), _Word(263, 88, 290, 98, "output")]
    label = [_Word(50, 112, 90, 122, "Volume")]
    lines = _text_lines([*group, *words, *label], 0.5)
    assert [len(ln.chunks) for ln in lines] == [1, 4, 1]
    # the same line over a line of its measure: a paragraph's
    below = [_Word(150 + 30 * k, 112, 150 + 30 * k + 25, 122, "words") for k in range(8)]
    lines = _text_lines([*words, *below], 0.5)
    assert len(lines[0].chunks) == 1


def test_the_heads_of_a_table_set_tight_are_cells_not_prose() -> None:
    """Heads of two words each, a plain space inside a head and an even gap of a line height between
    heads (columns sized to their heads): the gaps between chunks are alike, but each is more than
    twice the spaces inside the heads, which justified text stretches alike. A tail page's new table
    (``new_table_tail`` tune seed 101) lost its header row to the paragraphs so."""
    words, x = [], 60.0
    for head in ["Country", "Margin share", "Quarter import", "Energy demand", "Housing average"]:
        for k, w in enumerate(head.split()):
            x += 3 if k else 0  # a plain space inside a head
            words.append(_Word(x, 100, x + 5 * len(w), 110, w))
            x += 5 * len(w)
        x += 12  # the gap between heads: over half a line height, all alike
    (line,) = _text_lines(words, 0.5)
    assert [" ".join(w.text for w in ch) for ch in line.chunks][:2] == ["Country", "Margin share"]
    assert len(line.chunks) == 5


def test_justified_monospaced_paragraph_under_a_table_stays_prose() -> None:
    """Seed 24 (tune): a zebra table in Courier over a justified Courier paragraph. Each word of the
    paragraph was a chunk, so its lines joined the table and erased three of its gutters (adjacency
    F1 0.19)."""
    assert _adjacency_f1(24) == 1.0


def test_wrapped_description_column_keeps_its_rows() -> None:
    """Seed 27 (tune): a description column wraps its cells over two or three lines holding nothing
    else. Those lines ended the table area, so no table was found at all."""
    case, tables = _tables(27)
    assert case.cls == "multiline"
    (table,) = tables
    assert table.grid() == case.tables[0].merged


@pytest.mark.parametrize("seed", [69, 111])
def test_other_wrapped_cells(seed: int) -> None:
    assert _adjacency_f1(seed) >= 0.95


@pytest.mark.parametrize("seed", [10, 52, 157])
def test_two_tables_side_by_side_are_two_tables(seed: int) -> None:
    """Two unruled tables side by side were read as one, pairing unrelated rows (adjacency F1
    0.46-0.56): a column of labels right after a column of figures, at the widest gutter, starts
    a second table."""
    case, tables = _tables(seed)
    assert case.cls == "side_by_side" and len(tables) == 2
    assert _adjacency_f1(seed) >= 0.95


@pytest.mark.parametrize("seed", [53, 116])
def test_table_beside_running_text_leaves_the_text_out(seed: int) -> None:
    """A table set in one text column of the page: the lines of the text beside it were read as the
    table's last column (53), or the whole area was rejected as prose (116)."""
    case, tables = _tables(seed)
    assert case.cls == "beside_text"
    assert _adjacency_f1(seed) >= 0.9
    words = {w for t in tables for c in t.cells for w in c.text.split()}
    assert not words & {"districts", "contracts", "delivery"}  # words only the running text has


def test_transcript_numbered_every_fifth_line_is_no_table() -> None:
    """A transcript in Courier numbering every fifth line, speaker tags set apart: its tagged and
    numbered lines formed two three-row "tables" of sentences."""
    case, tables = _tables(124)
    assert case.cls == "transcript" and tables == []


@pytest.mark.parametrize("seed", [15, 78, 288])
def test_lookalike_tables_with_their_own_headers_stay_apart(seed: int) -> None:
    """One table ends page 1, another of the same columns starts page 2 under page furniture only,
    no caption: the second's first row is a header of its own (labels over the first's figures,
    not a repeat), so it is a new table, not a continuation."""
    case, tables = _tables(seed)
    assert case.cls == "lookalike" and "new_header" in case.tags
    assert [t.pages for t in tables] == [[0], [1]]


@pytest.mark.parametrize("variant", ["no_repeat", "widths", "note", "stacked"])
def test_continued_tables_still_join(variant: str) -> None:
    """Continuations without a repeated header, with columns set per page, with a note under the
    first part, or with a two-line header repeated, are joined into one table, its header once."""
    seed = next(
        s for s in range(CLASSES.index("continued_rows"), 2000, len(CLASSES)) if variant in make_case(s).tags
    )
    case, tables = _tables(seed)
    (table,) = tables
    assert table.pages == case.tables[0].pages
    assert table.n_rows == len(case.tables[0].merged)


@pytest.mark.parametrize(
    "seed, why",
    [
        (1549, "the running header and the '(continued)' caption above were read as its first rows"),
        (1276, "a header word that both parts share by chance beside the stub read as a repeated header"),
    ],
)
def test_columns_continued_on_the_next_page_join_on_the_stub(seed: int, why: str) -> None:
    """A wide table whose further columns follow on the next page for the same rows (tune seeds
    beyond the bench's first 420) became two tables: {why}."""
    case, tables = _tables(seed)
    assert case.cls == "continued_columns"
    (table,) = tables
    assert table.merge_kind == "columns" and table.pages == [0, 1]
    assert table.grid() == case.tables[0].merged, why


def test_a_long_row_label_crossing_a_gutter_makes_no_column() -> None:
    """``continued_columns`` tune seed 147 (a generated multi-page bench seed): one label ("District
    supply transport") runs past where the others end, the gutter finder (which lets a line or two
    cross a gutter) cut twice inside its words, and the columns no line begins a cell in were joined
    to the figures' column on their right, its gutter lost: the label took the row's first figure and
    the page no longer matched the next page's stub. Those columns are the labels' column run wide."""
    case, tables = _tables(147, "continued_columns")
    (table,) = tables
    assert table.merge_kind == "columns" and table.pages == [0, 1]
    assert table.grid() == case.tables[0].merged


# 10170 (a seventh fresh tune draw): the running text beside the table set its lines wider apart
# than the rows (5 lines beside 9), under the share of rows ``_prose_beside`` asked of a text column
@pytest.mark.parametrize("seed", [48, 84, 96, 104, 10170])
def test_sideways_content_on_a_page_with_rotate(seed: int) -> None:
    """A page /Rotate 90 or 270 whose content is set sideways in the displayed page (tune seeds of
    ``rotated_page``: zebra, stacked-header, beside-text and row-span tables): too many of its
    words are short to pass for a sideways page on their shape, and the test that reads sideways
    lines from the text layer skipped every page with /Rotate, so rows were read across columns
    (adjacency F1 0.0 on each). That test now turns MuPDF's line boxes and directions to display
    space on such a page."""
    case = make_case(seed, "rotated_page")
    assert {"turn:90", "turn:-90"} & set(case.tags)
    assert _adjacency_f1(seed, "rotated_page") >= 0.95


def test_a_sideways_table_under_upright_prose_is_read_apart_from_it() -> None:
    """A ``mixed_orientation`` tune seed of an eighth fresh draw (10952): the turned table holds
    most of the page's words, so the whole page was read turned and the upright paragraph over it,
    its words stacked in that frame, became a first column of the table. Upright words (15% or
    more of the long ones, each wider than tall by half) make the page a mixed one: each part read
    in its own frame."""
    case = make_case(10952, "mixed_orientation")
    assert "turn:0" not in case.tags
    assert _adjacency_f1(10952, "mixed_orientation") == 1.0


@pytest.mark.parametrize("seed", [2, 26, 98])
def test_sideways_table_among_upright_text_on_a_page_with_rotate(seed: int) -> None:
    """Tune seeds of ``mixed_orientation`` set on a page /Rotate 90 or 270 that shows them upright:
    running text, then a table turned a quarter. Such pages were never split into their upright
    and sideways words (adjacency F1 0.0 on each), as the same page without /Rotate is."""
    case = make_case(seed, "mixed_orientation")
    assert {"rotate:90", "rotate:270"} & set(case.tags)
    assert _adjacency_f1(seed, "mixed_orientation") >= 0.95


@pytest.mark.parametrize("seed", [35, 39])
def test_wrapped_text_column_after_one_row_and_hyphenated_words(seed: int) -> None:
    """Tune seeds of ``hyphenated``: an unruled table whose description column (the last, or one
    among figures) wraps at the pitch of its rows, long words broken with a hyphen ("deli-" /
    "very"). The first row's wrapped line ended the table (the usual gap between its lines was
    read only from two gaps or more, and there was one: no table at all), and a cell's lines were
    joined by a space ("deli- very"). Now one gap is enough, and a cell's lines join as a
    paragraph's rows do."""
    case, tables = _tables(seed, "hyphenated")
    (table,) = tables
    assert table.grid() == case.tables[0].merged


def test_a_fixed_pitch_column_of_signs_a_space_before_figures_under_a_phrase_head() -> None:
    """A tenth fresh tune draw (13500-14999), ``hyphenated`` 14343: a fixed-pitch table whose
    figures are set right with their signs a space before them ("£ 239,381", "£ 87,921",
    "$35.94"), under a head of two words ("Education budget") whose word space lies over the
    space after the leftmost signs. That space read as a gutter (the head's line held a word that
    is no sign left of it); a head's phrase across the run is one line that crosses it
    (``words._signs_from_figures``): one column, each sign with its figure."""
    case, tables = _tables(14343, "hyphenated")
    (table,) = tables
    assert [[_norm(x) for x in r] for r in table.grid()] == [
        [_norm(x) for x in r] for r in case.tables[0].merged
    ]


def test_cell_lines_join_like_paragraph_rows() -> None:
    from dagster_ocr.tables.words import _join_cell_lines

    assert _join_cell_lines(["of delays in deli-", "very and higher"]) == "of delays in delivery and higher"
    assert _join_cell_lines(["Self-", "Locking"]) == "Self-Locking"  # a capital: the hyphen stays
    assert _join_cell_lines(["2010-", "2011"]) == "2010- 2011"  # no letter before it: not a break
    assert _join_cell_lines(["con\u00ad", "tracts"]) == "contracts"
    assert _join_cell_lines(["Total", "", "assets"]) == "Total assets"


@pytest.mark.parametrize("seed", [8, 84, 8404, 8614, 8914, 9754, 10324])
def test_right_to_left_cells_wrapped_over_lines(seed: int) -> None:
    """Tune seeds of ``rtl_wrapped`` (Arabic, Hebrew): a right-to-left table whose stub or the
    column beside it wraps. A wrapped line is set flush right, so it was not seen under its cell
    (only a left edge was compared); the gap below a row of figures, whose boxes are taller than
    the script's words, passed for a row gap; and a short last line starting right of the line
    above was read as the same line, scrambling the cell's word order. Columns stay in display
    order (as tabula-java's right-to-left expectation), each cell's text in reading order. From the
    sixth and seventh fresh draws: a row whose figures stand left of its wrapping cell was taken
    for a row of no figures (those were looked for right of the leftmost cell, a left-to-right
    table's stub), so the wrapped line ended the table: one table read as two to four pieces."""
    _assert_one_table_as_generated(seed, "rtl_wrapped")


@pytest.mark.parametrize("seed", [0, 3, 8])
def test_cells_filled_with_a_box_per_text_line(seed: int) -> None:
    """Tune seeds of ``shaded_cells``: a word processor's table, each cell a filled box holding one
    box of its own colour per text line, inset by the padding, white rules between cells. The
    line finder read each inner box's sides as rules: a two-line header and every wrapped stub
    came out a row per line, each padding a column of its own. A fill on the same colour cannot
    be seen, and its sides are no rules now (``grid._visible_paths``)."""
    _assert_one_table_as_generated(seed, "shaded_cells")


def test_a_fill_on_its_own_colour_draws_no_rules() -> None:
    from dagster_ocr.tables.grid import _visible_paths

    def fill(rect, colour, kind="f"):
        return {"type": kind, "fill": colour, "fill_opacity": 1.0, "rect": rect, "items": [("re", rect, 1)]}

    blue, white = (0.1, 0.2, 0.4), (1.0, 1.0, 1.0)
    cell = fill((100, 100, 200, 140), blue)
    line1, line2 = fill((105, 100, 195, 120), blue), fill((105, 120, 195, 140), blue)
    on_white = fill((105, 100, 195, 120), white)  # a different colour: its sides are seen
    rule = fill((199.5, 100, 200.5, 140), white)  # a thin fill is a drawn rule
    assert _visible_paths([cell, line1, line2, rule]) == [cell, rule]
    assert _visible_paths([cell, on_white]) == [cell, on_white]
    assert _visible_paths([line1, cell]) == [line1, cell]  # painted first: it lies on the paper
    # a box on a box of its colour that a different fill lies between is seen against that fill
    assert _visible_paths([cell, on_white, line1]) == [cell, on_white, line1]


@pytest.mark.parametrize("seed", [0, 3, 4])
def test_compounds_broken_at_their_hyphen_keep_it(seed: int) -> None:
    """Tune seeds of ``compound_hyphen``: a description column whose runs hold compounds
    ("heavy-duty") broken at their own hyphen where they do not fit, among words hyphenated at
    line breaks ("deli-" / "very"). Every such hyphen was dropped ("heavyduty"); now the
    document's words decide (``paragraphs.patterns.Vocabulary``): the compound set whole in a
    paragraph or another cell keeps its hyphen, a line-break hyphen still goes."""
    _assert_one_table_as_generated(seed, "compound_hyphen")


@pytest.mark.parametrize("seed", [0, 4, 8])
def test_figures_side_by_side_under_their_captions_are_no_table(seed: int) -> None:
    """Tune seeds of ``figure_pair``: two charts side by side, each under a "Figure N." caption:
    the text finder read the captions as a header row and the tick labels, legends and source
    notes as its rows. A text-aligned part whose top row holds a figure's caption is no table."""
    case, tables = _tables(seed, "figure_pair")
    assert case.tables == [] and tables == []
