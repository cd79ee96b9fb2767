"""Cell fidelity mechanisms of issue 37, each on a small generated page.

* A section of a text-aligned table whose first row holds a nil ("-") where the amount would be:
  the table goes on over the section's space (a nil fills a cell as a figure does), where it was
  cut in two and the section's label, between the two, dropped.
* Text of a ruled cell run past its side (a spreadsheet's cell cut at the rule, its last letter
  shown in part) and the next cell's text set right after the rule: one word in the text layer
  ("Elizab2165"), cut at the side so each cell reads its own text.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402


def _right(page: pymupdf.Page, x: float, y: float, text: str, size: float = 9) -> None:
    """``text`` set flush right at ``x``."""
    page.insert_text(
        (x - pymupdf.get_text_length(text, fontname="helv", fontsize=size), y), text, fontsize=size
    )


def _sections_page(gap_lines: float, first: str) -> pymupdf.Document:
    """A two-column statement in two sections (label rows, figures set right), the second section
    after ``gap_lines`` blank line pitches, its first row's amount ``first``."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    pitch = 12.0
    y = 100.0
    sections = [
        (
            "Result for the year",
            [("Direct result", "1,204"), ("Revaluation", "2,076,667"), ("Costs", "(106,870)")],
        ),
        ("Result per unit", [("Direct result", first), ("Revaluation", "3.99"), ("Costs", "(0.21)")]),
    ]
    for k, (label, rows) in enumerate(sections):
        if k:
            y += gap_lines * pitch
        page.insert_text((72, y), label, fontsize=9, fontname="hebo")
        y += pitch
        for name, amount in rows:
            page.insert_text((72, y), name, fontsize=9)
            _right(page, 530, y, amount)
            y += pitch
        page.insert_text((72, y), f"Total {label.lower()}", fontsize=9, fontname="hebo")
        _right(page, 530, y, "1,969,797" if not k else "3.78")
        y += pitch
    return doc


def _tables(doc: pymupdf.Document) -> list[list[list[str]]]:
    return [t.grid() for t in extract_tables(doc, TI.pages_of(doc), TableSettings())]


def test_a_section_opening_on_a_nil_goes_on_with_the_table() -> None:
    """Space of three line pitches, a label, then a row whose amount is "-": one table, the label
    a row of it."""
    grids = _tables(_sections_page(3, "-"))
    assert len(grids) == 1, grids
    labels = [row[0] for row in grids[0]]
    assert "Result per unit" in labels and labels[-1] == "Total result per unit"


def test_a_nil_row_does_not_bridge_more_than_a_section_gap() -> None:
    """Guard: past ``max_section_gap`` (eight line pitches here) the table still ends, nil or not;
    the same page with a figure for the nil reads the same way."""
    for first in ("-", "1,204"):
        grids = _tables(_sections_page(8, first))
        assert len(grids) == 2, (first, grids)
        assert grids[1][-1][0] == "Total result per unit"


def test_a_section_opening_on_a_figure_was_already_one_table() -> None:
    """Guard: the same space with a figure in the section's first row was one table before the nil
    counted, and stays one."""
    grids = _tables(_sections_page(3, "1,204"))
    assert len(grids) == 1, grids


_PAD = 1.4  # a ruled cell's text starts this far right of its left side


def _ruled_page(rows: list[tuple[str, str, str]], col1: float) -> pymupdf.Document:
    """A ruled grid of three columns (sides at 50, ``col1``, ``col1`` + 150, ``col1`` + 230), each
    cell's text at the cell's left padding."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    xs = [50.0, col1, col1 + 150, col1 + 230]
    top, pitch = 100.0, 14.0
    for k in range(len(rows) + 1):
        page.draw_line((xs[0], top + k * pitch), (xs[-1], top + k * pitch), width=0.5)
    for x in xs:
        page.draw_line((x, top), (x, top + len(rows) * pitch), width=0.5)
    for k, row in enumerate(rows):
        for x, text in zip(xs, row, strict=False):
            if text:
                page.insert_text((x + _PAD, top + k * pitch + 10), text, fontsize=9)
    return doc


_NAMES = [
    ("Last name", "Address", "City"),
    ("Boyle", "1007 Charles Ave", "Saint Paul"),
    ("Brown", "", "Minneapolis"),
]


def test_text_run_past_a_ruled_cells_side_is_cut_there() -> None:
    """ "Matthew C. & Elizab" ends 0.8 pt past its cell's side, "2165 Princeton Ave" starts at the
    next cell's padding: the two cells each read their own text (one cell held "Elizab2165")."""
    overflow = "Matthew C. & Elizab"
    side = 50 + _PAD + pymupdf.get_text_length(overflow, fontname="helv", fontsize=9) - 0.8
    grids = _tables(_ruled_page([*_NAMES, (overflow, "2165 Princeton Ave", "Saint Paul")], side))
    assert len(grids) == 1, grids
    assert grids[0][-1] == [overflow, "2165 Princeton Ave", "Saint Paul"]
    assert grids[0][1] == ["Boyle", "1007 Charles Ave", "Saint Paul"]


def test_a_label_running_on_into_an_empty_cell_stays_whole() -> None:
    """Guard: a label that runs on past its cell's side into an empty cell, its letters past the
    side set where no text of that column starts, is one word in one cell, not cut at the rule."""
    label = "Richardson-Vanderbilt"
    width = pymupdf.get_text_length(label, fontname="helv", fontsize=9)
    side = 50 + _PAD + width - 12.0  # the last two letters or so past the side
    doc = _ruled_page([*_NAMES, (label, "", "Saint Paul")], side)
    words = doc[0].get_text("words")
    assert any(w[4] == label for w in words)
    grids = _tables(doc)
    assert len(grids) == 1, grids
    assert label in [c for row in grids[0] for c in row], grids
