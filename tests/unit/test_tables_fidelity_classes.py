"""Cell fidelity mechanisms of issue 37, each on a small generated page.

* A section of a text-aligned table whose first row holds a nil ("-") where the amount would be:
  the table goes on over the section's space (a nil fills a cell as a figure does), where it was
  cut in two and the section's label, between the two, dropped.
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
