"""Column headings printed above a statement's grid are the table's text (issues 34 and 37).

An annual report's note prints "Year Ended" over its periods' dates and "(In millions)", then the
grid of figures, shaded gray and white by turns. The table finder takes the grid; the headings,
which do not line up with its rows, were read twice: as lines above the table (each a heading of
its own, so the next sections were named "Jan 29, 2023") and again in the table's Markdown header
(``column_headers``). Now the lines ``column_headers`` holds are the table's (``Table.heads``):
the paragraphs leave them out, the table's plain text starts with them, and no character is lost.
Lines and fills placed by hand."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from dagster_ocr.blocks import table_markdown, table_text
from dagster_ocr.conservation import account_text
from dagster_ocr.ingest import DocumentStore
from dagster_ocr.pipeline import parse

ROWS = [
    ("Cost of revenue", "$ 178", "$ 141", "$ 138"),
    ("Research and development", "3,423", "2,532", "1,892"),
    ("Sales, general and administrative", "1,136", "876", "680"),
    ("Total", "$ 4,737", "$ 3,549", "$ 2,710"),
]
#: right edges of the three figure columns
RIGHTS = [405.0, 467.0, 529.0]


def _note(path: Path) -> Path:
    """The note's page as the report prints it: a rule under "Year Ended" and one under the
    dates, the units under them, then the shaded rows."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((81, 346), "Note 3 - Stock-Based Compensation", fontsize=7)
    page.insert_text((81, 376), "Stock-based compensation expense is included as follows:", fontsize=7)
    width = pymupdf.get_text_length
    page.insert_text((424, 399), "Year Ended", fontsize=7)
    page.draw_line((350, 401.5), (532, 401.5), width=0.8)
    for right, date in zip(RIGHTS, ("Jan 26, 2025", "Jan 28, 2024", "Jan 29, 2023"), strict=True):
        page.insert_text((right - width(date, fontsize=7), 409), date, fontsize=7)
    page.draw_line((350, 410.5), (532, 410.5), width=0.8)
    page.insert_text((425, 420), "(In millions)", fontsize=7)
    for r, (label, *figures) in enumerate(ROWS):
        top = 422.0 + 8.5 * r
        gray = (0.945, 0.949, 0.949) if r % 2 == 0 else (1.0, 1.0, 1.0)
        page.draw_rect(pymupdf.Rect(81, top, 532, top + 8.5), color=None, fill=gray)
        page.insert_text((81, top + 6.5), label, fontsize=7)
        for right, figure in zip(RIGHTS, figures, strict=True):
            page.insert_text((right - width(figure, fontsize=7), top + 6.5), figure, fontsize=7)
    page.insert_text(
        (81, 472), "Stock-based compensation capitalized in inventories was not significant.", fontsize=7
    )
    out = path / "note.pdf"
    doc.save(out)
    return out


def test_headings_above_the_grid_are_the_tables_not_paragraphs(tmp_path: Path) -> None:
    src, _ = DocumentStore(tmp_path / "store").register(_note(tmp_path))
    parsed = parse(src)
    (table,) = parsed.tables
    assert table.grid()[3] == ["Sales, general and administrative", "1,136", "876", "680"]
    # the dates under their rule are the grid's header row; "Year Ended" above it spans them
    assert table.heads == ["Year Ended"]
    assert table.column_headers == ["", "Year Ended", "Year Ended", "Year Ended"]
    body = [p.text for p in parsed.paragraphs.paragraphs]
    assert body == [
        "Note 3 - Stock-Based Compensation",
        "Stock-based compensation expense is included as follows:",
        "Stock-based compensation capitalized in inventories was not significant.",
    ]
    # the table says it: its Markdown header, and first in its plain text (the paragraphs row)
    assert table_markdown(table.grid(), table.header_rows, table.column_headers)[0].startswith(
        "|  | Year Ended Jan 26, 2025 |"
    )
    assert table_text(table.grid(), table.heads).split("\n")[0] == "Year Ended"
    (account,) = account_text(parsed.document.pages, parsed.paragraphs, parsed.tables)
    assert account.lost == 0 and account.unsourced == 0


def test_a_10k_notes_headings_name_no_section(corpus: Path, tmp_path: Path) -> None:
    """olmOCR-bench's earnings page (a 10-K note, tune): "Year Ended", the dates and the units over
    a shaded grid were three headings, and the sections after them were named by a date."""
    src, _ = DocumentStore(tmp_path / "store").register(corpus / "olmocr_bench/pdfs/earnings.pdf")
    parsed = parse(src)
    (table,) = (t for t in parsed.tables if any("1,136" in c.text for c in t.cells))
    assert table.heads == ["Year Ended", "Jan 26, 2025 Jan 28, 2024 Jan 29, 2023", "(In millions)"]
    texts = [p.text for p in parsed.paragraphs.paragraphs]
    assert not any(t in texts for t in ("Year Ended", "Jan 29, 2023", "(In millions)"))
