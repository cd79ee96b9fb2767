"""A table's notes, then the next note's heading and lead-in, then a table of the same columns
(issue 37): Tesla's 10-K, the accrued liabilities with notes (1) and (2) under them, then "Note 10 –
Other Long-Term Liabilities", its lead-in sentence and its table. The notes and the heading were
bridged as label rows of one table of both grids, the notes' words cut into its columns; the area
now ends at the note (``areas._split_at_notes``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tables_icdar as TI  # noqa: E402

from dagster_ocr.tables import TableSettings, extract_tables  # noqa: E402


def test_notes_between_two_tables_end_the_first(corpus: Path) -> None:
    report = corpus.parent / "reports" / "tesla-10k-fy2023.pdf"
    if not report.is_file():
        pytest.skip("../shared/reports not found")
    doc = pymupdf.open()
    with pymupdf.open(report) as src:
        doc.insert_pdf(src, from_page=75, to_page=75)
    grids = [
        [[" ".join(c.split()) for c in row] for row in t.grid()]
        for t in extract_tables(doc, TI.pages_of(doc), TableSettings())
    ]
    first = next(g for g in grids if any(r[0] == "Accrued purchases (1)" for r in g))
    assert first[0] == ["", "December 31, 2023", "December 31, 2022"]
    assert first[-1] == ["Total", "$ 9,080", "$ 8,205"]  # the notes are no rows of it
    second = next(g for g in grids if any(r[0] == "Total other long-term liabilities" for r in g))
    assert second[0] == ["", "December 31, 2023", "December 31, 2022"]
    assert second[1] == ["Operating lease liabilities", "$ 3,671", "$ 2,164"]
    assert first is not second
