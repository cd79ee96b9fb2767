"""A note's mark set as a superscript against a figure is a word of its own (tables/words.py
``_notes_apart``, issue 37): PyMuPDF reads "27" and a raised "3" as one word, "273", another
figure; "2 496" so marked no longer joined its lead digits and its column split in two."""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
from support.table_pages import make_case

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402
import tables_synthetic as TS  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402
from dagster_ocr.tables.words import _page_lines, _page_words  # noqa: E402


def _marked_page() -> pymupdf.Document:
    """Three texts, each followed straight on by a smaller raised mark: a figure's note, a word's
    note, a unit's power; and a lowered one (a subscript)."""
    doc = pymupdf.open()
    page = doc.new_page()
    for y, text, mark, rise in [
        (100, "1,234", "1", 3),
        (120, "Revenue", "2", 3),
        (140, "(56)", "a", 3),
        (160, "H", "2", -2),
    ]:
        page.insert_text((72, y), text, fontsize=10, fontname="helv")
        x = 72 + pymupdf.get_text_length(text, fontname="helv", fontsize=10)
        page.insert_text((x, y - rise), mark, fontsize=6, fontname="helv")
    return pymupdf.open("pdf", doc.tobytes())


def test_a_figure_s_raised_mark_is_cut_off_it_and_nothing_else_is() -> None:
    doc = _marked_page()
    (page,) = TI.pages_of(doc)
    pg = doc[0]
    # PyMuPDF's words, then the table finders'
    assert [w.text for w in _page_words(pg, page)] == ["1,2341", "Revenue2", "(56)a", "H2"]
    words = [w.text for w in _page_words(pg, page, _page_lines(pg, page))]
    # a word's note, a bracket's (its figure reads whole) and a subscript keep their reading
    assert words == ["1,234", "1", "Revenue2", "(56)a", "H2"]


def test_a_sparse_table_with_marked_figures_keeps_its_columns() -> None:
    # a tune seed of the fifteenth fresh draw (21000-22499): "2 496" and "27", "317" each with a
    # raised note mark; the marked thousands group made a column of its own and "27 3" read "273"
    case = make_case(21108, "spaced_stats")
    doc = pymupdf.open("pdf", case.pdf)
    tables = extract_tables(doc, TI.pages_of(doc), TableSettings())
    assert TS.shape_right(case, tables) == (True, "")
    cells = {c for t in tables for row in t.grid() for c in row}
    assert {"2 496 3", "27 3", "317 1"} <= cells
