"""Page numbers a one-page document shows by their form (issue 37, text classes).

Repetition cannot show furniture on one page, so the margin bands are read by position and form
(``furniture._band_stamps``). A page number set in full-width digits or dashes ("－15 －"), as
Japanese and Chinese documents print them, escaped it at the body's size: the page-number pattern
knew only ASCII digits and dashes. What must stay stays: a title set larger than a table page's
cells in the top band, a footnote or a sentence ending in a number at the foot.

Each test prints a small page with PyMuPDF and runs the pipeline's own stages on it.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
from support.parsed import parsed as _parsed

_PROSE = (
    "The committee met in March to review the figures for the year and agreed that the survey of the "
    "region should go on for two more seasons, with the same sample and the same method."
)


def _body_text(tmp_path: Path, doc: pymupdf.Document) -> str:
    out = _parsed(doc, tmp_path)
    para = " ".join(p.text for p in out.paragraphs.paragraphs)
    cells = " ".join(c.text for t in out.tables for c in t.cells)
    return f"{para} {cells}"


def _prose_page(doc: pymupdf.Document, size: float = 10.0) -> pymupdf.Page:
    page = doc.new_page(width=595, height=842)
    words, line, y = _PROSE.split() * 4, "", 160.0
    for w in words:
        if pymupdf.get_text_length(f"{line} {w}", fontsize=size) > 450:
            page.insert_text((72, y), line.strip(), fontsize=size)
            line, y = "", y + size * 1.4
        line = f"{line} {w}"
    page.insert_text((72, y), line.strip(), fontsize=size)
    return page


def test_a_full_width_page_number_at_the_foot_of_a_one_page_document_is_furniture(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = _prose_page(doc)
    page.insert_text((285, 800), "－15 －", fontsize=10, fontname="china-s")  # the body's size
    text = _body_text(tmp_path, doc)
    assert "committee met in March" in text
    assert "15" not in text


def _table_page(doc: pymupdf.Document) -> pymupdf.Page:
    """A statistical page: a title, then a table of figures set in 7 pt."""
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 120), "Fish exports by product, 2001-2007", fontsize=11)
    cols = [72, 220, 290, 360, 430]
    page.insert_text((cols[0], 150), "Product", fontsize=7)
    for k, year in enumerate(["2004", "2005", "2006", "2007"]):
        page.insert_text((cols[k + 1], 150), year, fontsize=7)
    items = ["Hake", "Squid", "Shrimp", "Scallops", "Anchovy", "Mackerel", "Tuna", "Salmon"] * 3
    for r, name in enumerate(items):
        y = 162 + 10 * r
        page.insert_text((cols[0], y), f"{name} {r // 8 + 1}", fontsize=7)
        for k in range(4):
            page.insert_text((cols[k + 1], y), f"{(r + 3) * (k + 7) * 13:,}", fontsize=7)
    return page


def test_a_title_set_larger_than_a_tables_type_in_the_top_band_stays(tmp_path: Path) -> None:
    """The header band keeps what is larger than the body: a page's title, numbered or not."""
    doc = pymupdf.open()
    page = _table_page(doc)
    page.insert_text((72, 60), "Fisheries trade report 2007  5", fontsize=9)
    assert "Fisheries trade report" in _body_text(tmp_path, doc)


def test_a_sentence_or_a_footnote_ending_in_a_number_at_the_foot_stays(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = _prose_page(doc)
    page.insert_text((72, 790), "1 Figures for the survey are given in table 5", fontsize=8)
    page.insert_text((72, 803), "The sample is described in the annex, page 12.", fontsize=10)
    text = _body_text(tmp_path, doc)
    assert "given in table 5" in text
    assert "described in the annex" in text


def _full_page(doc: pymupdf.Document, top: float, bottom: float, size: float = 10.0) -> pymupdf.Page:
    """Prose from baseline ``top`` to ``bottom`` at 1.4 sizes' pitch: the body runs into both bands."""
    page = doc.new_page(width=595, height=842)
    words, line, y = _PROSE.split() * 40, "", top
    for w in words:
        if y > bottom:
            break
        if pymupdf.get_text_length(f"{line} {w}", fontsize=size) > 450:
            page.insert_text((72, y), line.strip(), fontsize=size)
            line, y = "", y + size * 1.4
        line = f"{line} {w}"
    return page


def test_a_print_stamp_half_a_line_under_the_last_body_line_is_furniture(tmp_path: Path) -> None:
    """A running foot set smaller than the body 1.6 pitches under its last line: the gap test (a line
    height) reached it, so it counted as body although its baseline stands apart and it reads as
    a stamp. A footnote as close keeps its place (its marker)."""
    doc = pymupdf.open()
    page = _full_page(doc, 120, 770)
    last = max(b[3] for b in page.get_text("blocks"))
    page.insert_text((250, last + 19), "Printed 05/11/2026 17:05", fontsize=9)
    text = _body_text(tmp_path, doc)
    assert "committee met in March" in text
    assert "Printed" not in text

    doc = pymupdf.open()
    page = _full_page(doc, 120, 770)
    last = max(b[3] for b in page.get_text("blocks"))
    page.insert_text((72, last + 19), "1 Printed in the annual report, 05/11/2026.", fontsize=9)
    assert "Printed in the annual report" in _body_text(tmp_path, doc)


def test_a_reference_code_over_a_large_title_is_furniture_and_the_title_stays(tmp_path: Path) -> None:
    """The title's large type reached the small reference code above it by the gap test (a line
    height, the larger line's): the code stands apart by baselines and reads as furniture."""
    doc = pymupdf.open()
    _full_page(doc, 110, 700)
    page = doc[0]
    page.insert_text((72, 32), "Ref. NOR-529/5", fontsize=8.5, fontname="tiit")
    page.insert_text((72, 72), "Regional water supply", fontsize=18.5, fontname="tibo")
    text = _body_text(tmp_path, doc)
    assert "Regional water supply" in text
    assert "committee met in March" in text
    assert "NOR-529" not in text
